"""Compaction: plan what to summarize, summarize it, keep its facts, restore the working set, commit
a boundary.

Sub-packages: summary (the summarizers), retention (facts and the ledger), working_set (what is
restored), automatic (auto-compact, summaries written ahead, microcompact). May import:
conversation, usage, model_api, workspace and core's shared modules.
"""
