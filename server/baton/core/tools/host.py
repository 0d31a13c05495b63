"""The ToolHost: what a front end gives the tools (permission, the editor's text, edits)."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from baton.core.conversation.files import open_read, replace_file

PermissionOutcome = Literal["allowOnce", "allowSession", "deny"]
ToolKind = Literal["read", "search", "edit", "other"]
OUTCOMES: tuple[PermissionOutcome, ...] = ("allowOnce", "allowSession", "deny")
OPTION_LABELS: dict[PermissionOutcome, str] = {
    "allowOnce": "Allow once",
    "allowSession": "Allow for this session",
    "deny": "Deny",
}


CHANGED_MEANWHILE = "the file changed meanwhile"  # not applied: every host's words
# a file larger than this is not read at all: by a tool, nor by an edit's comparison
MAX_FILE_BYTES = 5_000_000


def cannot_read(exc: Exception) -> str:
    """Why an edit was not applied: the file it was planned on cannot be read now."""
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
    return f"the file cannot be read ({why})"


def cannot_write(exc: OSError) -> str:
    """Why an edit was not applied: the file cannot be written."""
    return f"the file cannot be written ({exc.strerror or type(exc).__name__})"


def current_text(path: Path) -> str | None:
    """The file's text as it is on disk, line ends untouched (None when it is missing):
    what an edit planned on it compares with. Only a regular file is read (`open_read`: a
    FIFO put there while the edit waited is never waited on), and no more of it than a
    tool reads (a file grown past that meanwhile is an OSError saying so). OSError,
    UnicodeDecodeError as they come."""
    try:
        with open_read(path) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    if len(data) > MAX_FILE_BYTES:
        over = f"over the {MAX_FILE_BYTES:,} bytes a tool reads"
        raise OSError(errno.EFBIG, over, os.fspath(path))
    return data.decode("utf-8")


@dataclass(frozen=True)
class PermissionRequest:
    """One call waiting for the user's word (the wire's ToolPermissionParams)."""

    session_id: str
    tool_use_id: str
    tool: str
    input: dict[str, Any]
    title: str
    kind: ToolKind
    path: str | None = None
    diff: str | None = None
    options: tuple[PermissionOutcome, ...] = OUTCOMES


@dataclass(frozen=True)
class FileEdit:
    """A whole file's change: `before` is the text it was computed on (None: a new file)."""

    path: Path
    before: str | None
    after: str
    title: str


@dataclass(frozen=True)
class EditOutcome:
    applied: bool
    reason: str | None = None


class ToolHost(Protocol):
    """A front end's side of the tools. A host may also have `can_ask: bool` (False: it
    cannot ask the user, so an `ask` tool is `off`); without it the host can ask. It may
    have `folders` (its own workspace folders, instead of the service's),
    `call_started(use)` and `call_finished(tool_use_id, result)` (each call as it runs), and
    `async open_texts() -> dict[Path, str]` (the editor's text of every file it has open:
    what a search reads in place of the disk's)."""

    async def ask_permission(self, request: PermissionRequest) -> PermissionOutcome: ...

    async def read_text(self, path: Path) -> str | None:
        """The editor's text of `path` with its unsaved changes; None: not open there."""
        ...

    async def apply_edit(self, edit: FileEdit) -> EditOutcome: ...


@dataclass
class DiskHost:
    """A host with no editor: files read from and written to disk, every `ask` answered
    by `answer` (deny by default). For the command line and tests."""

    answer: PermissionOutcome = "deny"
    asked: list[PermissionRequest] = field(default_factory=list)
    can_ask: bool = True

    async def ask_permission(self, request: PermissionRequest) -> PermissionOutcome:
        self.asked.append(request)
        return self.answer

    async def read_text(self, path: Path) -> str | None:
        return None

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        try:
            current = current_text(edit.path)
        except (OSError, UnicodeDecodeError) as exc:
            return EditOutcome(False, cannot_read(exc))
        if current != edit.before:
            return EditOutcome(False, CHANGED_MEANWHILE)
        try:
            write_file(edit.path, edit.after)
        except OSError as exc:
            return EditOutcome(False, cannot_write(exc))
        return EditOutcome(True)


def write_file(path: Path, text: str) -> None:
    """`text` in place of the file (a new file beside it renamed over it); a file the user
    may not write is refused as a plain write would be (a rename would replace it), and a
    link (the name the editor opened the file by) is written through, never replaced. The
    file keeps its mode; a new one gets the mode any program's new file gets there. A new
    file is made under its own name, never through a link put there since the edit was
    planned, and a link to nothing is refused: its target may be anywhere."""
    named = Path(path)
    made = not os.path.lexists(named)
    if made:
        named.parent.mkdir(parents=True, exist_ok=True)
        # the umask's mode; whatever appeared there meanwhile, a link too, is EEXIST
        os.close(os.open(named, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    path = Path(os.path.realpath(named))
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, "a link to a file that does not exist", str(named))
    if not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
    try:
        replace_file(path, text.encode("utf-8"), path.stat().st_mode & 0o7777)
    except BaseException:
        if made:
            named.unlink(missing_ok=True)
        raise
