"""Fixtures for the ACP tests: `baton acp` subprocesses over the fake Anthropic API."""

from __future__ import annotations
