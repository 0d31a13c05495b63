"""The conversation: messages, their API invariants, the view and its boundaries, the transcript and
the store of sessions.

May import: core's shared modules (errors, settings, redaction, background). Nothing else in core.
"""
