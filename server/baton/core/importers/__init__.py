"""Importers of other tools' transcripts into Baton sessions (Claude Code).

May import: conversation and core's shared modules."""
