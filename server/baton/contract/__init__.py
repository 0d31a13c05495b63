"""The wire contract's names and wire-only models (the table itself is baton.protocol), and its
generator.

May import: core (the payload models). Never the LSP layer.
"""
