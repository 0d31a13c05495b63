"""Baton's domain: conversations, transcripts, token budgets and compaction (no LSP here)."""
