"""The per-session document baton:/sessions/<id>.md: its text, diagnostics, code actions and hover,
and their publisher.
"""
