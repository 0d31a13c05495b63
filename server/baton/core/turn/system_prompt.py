"""The system prompt a new session gets when its client brings none: Baton's short
default naming the editor and the workspace folders, then the `systemPrompt` setting, then
the project's instructions files (CLAUDE.md, .baton/instructions.md), each bounded; and
whether a prompt is that default made for other folders (an ACP session loaded elsewhere)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from baton.core.compaction.prompts import instruction_files, instructions_block

OPENING = "You are a coding assistant working with the user in "


def _place(folders: Sequence[Path]) -> str:
    if not folders:
        return "no workspace folder (none is open)"
    names = ", ".join(str(f) for f in folders)
    return f"the workspace folder{'s' if len(folders) > 1 else ''} {names}"


def made_for_other_folders(prompt: str | None, folders: Sequence[Path]) -> bool:
    """Whether `prompt` is Baton's default made for other folders than `folders` (a
    client's own prompt, or none, is not Baton's to make again)."""
    if prompt is None or not prompt.startswith(OPENING):
        return False
    first = prompt.split("\n\n", 1)[0]
    return f", on {_place(folders)}. " not in first


def default_system_prompt(
    editor: str | None, folders: Sequence[Path], extra: str = "", tools: bool = True
) -> str:
    where = editor or "the user's editor"
    parts = [
        f"{OPENING}{where}, on {_place(folders)}. "
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
