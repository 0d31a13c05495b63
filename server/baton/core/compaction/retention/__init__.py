"""The facts a compaction must keep (prompts, paths, errors), their retention figures and the fact
ledger.
"""
