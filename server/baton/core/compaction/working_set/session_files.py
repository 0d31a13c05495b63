"""The files a session's own work touched, newest first: those its tool calls read or edited
(Baton's workspace tools, and Claude Code's in an imported session) and those its prompts
attached (Claude Code 1.0's as an inline read, `inline_reads.py`). A compaction restores
them beside the editor's recent files. They are read from the session's messages, not
from what one server saw, so a restart, a reopening or another server restores the same
files, and one session's reads never come back in another."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from baton.core.compaction.working_set.inline_reads import inline_reads
from baton.core.conversation.messages import Message
from baton.core.workspace.editor_files import (
    folder_candidates,
    is_file_uri,
    path_problem,
    uri_to_path,
)

# tool name -> the input field that names the file it reads or edits
FILE_TOOLS = {
    "read_file": "path",
    "edit_file": "path",
    "str_replace_based_edit_tool": "path",  # the API's text editor
    "Read": "file_path",  # Claude Code's
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}


@dataclass(frozen=True)
class SessionFile:
    path: Path  # as the call or the prompt named it, made absolute
    at: float  # when the call's result (or the prompt) came, in seconds since the epoch


def session_files(
    messages: Sequence[Message], workspace_folders: Sequence[Path]
) -> list[SessionFile]:
    """The existing files that `messages` (in arrival order) touched, each once at its
    latest touch, newest first; a relative path is the first workspace folder's that has
    it (the folder it names first, when there are several), as the tools read it. A call
    whose result is an error, or that has none, touched nothing. What is outside the
    workspace or excluded is the restore's to refuse."""
    answered: dict[str, float] = {}
    for message in messages:
        for result in message.tool_results():
            if result.is_error:
                answered.pop(result.tool_use_id, None)
            else:
                answered[result.tool_use_id] = _seconds(message.created_at)
    named: dict[str, float] = {}  # what the calls and prompts named -> its latest touch
    for message in messages:
        attachment = message.attachment
        if attachment is not None and attachment.kind is not None:  # attached with a prompt
            _note(named, attachment.path, _seconds(message.created_at))
        for use in message.tool_uses():
            field = FILE_TOOLS.get(use.name)
            raw = use.input.get(field) if field and isinstance(use.input, dict) else None
            if isinstance(raw, str) and use.id in answered:
                _note(named, raw, answered[use.id])
    for message, use, _ in inline_reads(messages):  # Claude Code 1.0's, as a prompt's text
        _note(named, use.input["file_path"], _seconds(message.created_at))
    latest: dict[Path, float] = {}
    for raw, at in named.items():
        path = _existing(raw, workspace_folders)
        if path is not None and at > latest.get(path, -1.0):
            latest[path] = at
    files = [SessionFile(path, at) for path, at in latest.items()]
    return sorted(files, key=lambda f: f.at, reverse=True)


def _note(named: dict[str, float], raw: str, at: float) -> None:
    named[raw] = max(named.get(raw, at), at)


def _existing(raw: str, workspace_folders: Sequence[Path]) -> Path | None:
    text = raw.strip()
    given = uri_to_path(text) if is_file_uri(text) else Path(text)
    if not text or given is None or path_problem(given) is not None:
        return None
    candidates = [given] if given.is_absolute() else folder_candidates(given, workspace_folders)
    for candidate in candidates:
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


def _seconds(stamp: str) -> float:
    """An ISO-8601 time in seconds since the epoch; 0 when it cannot be read."""
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0
