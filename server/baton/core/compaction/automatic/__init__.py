"""Compaction Baton starts on its own: auto-compact with its guards, summaries written ahead,
microcompact.
"""
