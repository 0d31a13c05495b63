"""Compaction: plan what to summarize, summarize it, restore context, commit a boundary."""
