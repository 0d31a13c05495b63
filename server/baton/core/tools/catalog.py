"""The workspace tools a send offers: the reads and searches, and the edit tool the model
takes (the API's text editor for Claude 4 and later, else `edit_file`)."""

from __future__ import annotations

from baton.core.tools import find_files, list_dir, read_file, search_text
from baton.core.tools.edit import EDIT_FILE_TOOL, TEXT_EDITOR_TOOL, supports_text_editor
from baton.core.tools.registry import Registry, Tool

EXTRA: list[Tool] = []  # tools added by other parts of Baton (one line: EXTRA.append(tool))


def workspace_registry(model: str) -> Registry:
    registry = Registry()
    for tool in (read_file.TOOL, list_dir.TOOL, find_files.TOOL, search_text.TOOL):
        registry.register(tool)
    registry.register(TEXT_EDITOR_TOOL if supports_text_editor(model) else EDIT_FILE_TOOL)
    for tool in EXTRA:
        registry.register(tool)
    return registry
