"""The editor's files as the server knows them: recently touched files and the live text of open
ones.

May import: core's shared modules only.
"""
