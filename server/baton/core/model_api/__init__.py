"""The model API: the client, the request built from a view, thinking, exact counts, the API's
compaction request.

May import: conversation, usage and core's shared modules.
"""
