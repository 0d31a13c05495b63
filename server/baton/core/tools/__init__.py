"""Workspace tools the server runs for the model: the registry, each tool, the host they
act through (permission, the editor's text, edits), containment in the workspace folders.

Imports conversation, settings, workspace and the working set's containment rules
(compaction.working_set); never the turn, the service or any front end.
"""
