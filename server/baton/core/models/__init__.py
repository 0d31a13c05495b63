"""Model families: each model's window and output cap, and how thinking is asked of it.

May import: core's shared modules only.
"""
