"""Baton: a language server that owns an editor AI chat's conversation and its context."""

__version__ = "0.1.0"
