"""The chat turn: the prompt appended, auto-compact, the reply streamed and recorded, recovery from
failures.

May import: conversation, usage, model_api, compaction and core's shared modules.
"""
