"""The system prompt a new session gets when its client brings none: Baton's short
default naming the editor and the workspace folders, then the `systemPrompt` setting, then
the project's instructions files (CLAUDE.md, .baton/instructions.md), each bounded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from baton.core.compaction.prompts import instruction_files, instructions_block


def default_system_prompt(
    editor: str | None, folders: Sequence[Path], extra: str = "", tools: bool = True
) -> str:
    where = editor or "the user's editor"
    if folders:
        names = ", ".join(str(f) for f in folders)
        place = f"the workspace folder{'s' if len(folders) > 1 else ''} {names}"
    else:
        place = "no workspace folder (none is open)"
    parts = [
        f"You are a coding assistant working with the user in {where}, on {place}. "
        + (
            "Read and search the workspace with the tools before you answer about its code; "
            "change files only with the edit tool (the user may be asked to approve each "
            "edit) and say what you changed. "
            if tools and folders
            else ""
        )
        + "Be concise and concrete."
    ]
    if extra.strip():
        parts.append(extra.strip())
    for path in instruction_files(list(folders)):
        block = instructions_block(path)
        if block:
            parts.append(block)
    return "\n\n".join(parts)
