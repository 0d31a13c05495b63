"""The session list's index: each transcript summarized by one streamed pass over its lines
(parsed as JSON, never replayed into a session), kept per file identity and extended only
by what was appended since; names that are not regular files are listed as damaged, unread.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from baton.core.conversation.damage import Damage
from baton.core.conversation.files import kind_of, open_regular, storage_error
from baton.core.conversation.replay import instant, mismatch_note
from baton.core.conversation.transcript_read import parse_line
from baton.core.errors import StorageError

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
CHUNK = 1 << 16  # the most one read holds
LONG_LINE = 1 << 20  # a longer line is not parsed: its type, id and time come from its ends
EDGE = 4096  # how much of a long line's start and end is kept
MARK = 64  # the bytes before a summary's end that tell the file only grew since
LIST_SECONDS = 5.0  # after this, the rest of a list is summarized from the headers alone
_TYPE = re.compile(rb'^\{"type": "(\w+)"')
_ID = re.compile(rb'"id": "([^"\\]{1,200})"')
_DIRECTION = re.compile(rb'"direction": "(\w+)"')
_CREATED = re.compile(rb'"createdAt": "([^"\\]{1,64})"')
_SESSION_ID = re.compile(rb'"sessionId": "([^"\\]{1,200})"')


@dataclass
class Summary:
    """What the session list shows of one transcript (`Session` on the wire)."""

    session_id: str
    title: str = ""
    model: str = ""
    created_at: str = ""
    updated_at: str = ""
    compactions: int = 0
    read_only: bool = False
    deleted: bool = False
    imported_from: str | None = None
    header: dict[str, Any] | None = None
    damage: Damage = field(default_factory=Damage)


@dataclass
class _Entry:
    """One transcript's summary so far: what its first `end` bytes (whole lines) held."""

    identity: tuple[int, int, int, int]  # device, inode, size and mtime when last summarized
    end: int = 0
    mark: bytes = b""
    first: bool = True  # no event read yet (the first one is the header)
    header: dict[str, Any] | None = None
    header_ok: bool = False
    title: str = ""
    model: str = ""
    created_at: str = ""
    updated_at: str = ""
    updated: datetime | None = None
    active: dict[str, str] = field(default_factory=dict)  # boundary id -> direction
    deleted: bool = False
    bad_lines: int = 0
    complete: bool = True  # False: summarized from the header only (the list ran out of time)

    def summary(self, session_id: str) -> Summary:
        damage = Damage(lines=self.bad_lines, header_missing=not self.header_ok)
        header_id = (self.header or {}).get("sessionId")
        mismatch = self.header_ok and header_id != session_id
        if mismatch:
            damage.notes.append(mismatch_note(str(header_id), session_id))
        imported = (self.header or {}).get("importedFrom")
        return Summary(
            session_id=session_id,
            title=self.title,
            model=self.model,
            created_at=self.created_at,
            updated_at=self.updated_at,
            compactions=sum(1 for d in self.active.values() if d != "microcompact"),
            read_only=damage.header_missing or mismatch,
            deleted=self.deleted,
            imported_from=str(imported) if imported else None,
            header=self.header,
            damage=damage,
        )

    # ---- one event -----------------------------------------------------------------------

    def event(self, event: dict[str, Any]) -> None:
        """Mirrors `Replayed._apply` for what a summary shows."""
        kind = event.get("type")
        at = event.get("at") or event.get("createdAt")
        if self.first:
            self.first = False
            sid = event.get("sessionId")
            self.header = {k: v for k, v in event.items() if k != "systemPrompt"}
            self.header_ok = kind == "session" and isinstance(sid, str) and bool(sid)
            if kind == "session":
                self.title = str(event.get("title") or "")
                self.model = str(event.get("model") or "")
                self.created_at = str(event.get("createdAt") or "")
                self._seen(self.created_at)
                return
        if kind == "message":
            message = event.get("message")
            at = message.get("createdAt") if isinstance(message, dict) else None
        elif kind == "boundary":
            boundary = event.get("boundary")
            if isinstance(boundary, dict) and isinstance(boundary.get("id"), str):
                self.active[boundary["id"]] = str(boundary.get("direction") or "all")
        elif kind == "uncompact":
            self.active.pop(str(event.get("boundaryId")), None)
        elif kind == "meta":
            self.title = str(event.get("title", self.title))
            self.model = str(event.get("model", self.model))
        elif kind == "deleted":
            self.deleted = True
        if at:
            self._seen(str(at))

    def long_line(self, head: bytes, tail: bytes) -> None:
        """A line too long to parse: its type from its start; a boundary's id and
        direction from its start (they come first), a message's time from its end."""
        kind = _TYPE.match(head)
        if kind is None:
            return
        name = kind.group(1)
        if self.first:
            self.first = False
            sid = _SESSION_ID.search(head)
            self.header_ok = name == b"session" and sid is not None
            self.header = {"type": name.decode(), "sessionId": _text(sid)}
            return
        if name == b"message":
            created = list(_CREATED.finditer(tail))
            if created:
                self._seen(_text(created[-1]))
        elif name == b"boundary":
            found, direction = _ID.search(head), _DIRECTION.search(head)
            if found:
                self.active[_text(found)] = _text(direction) or "all"

    def _seen(self, stamp: str) -> None:
        moment = instant(stamp)
        if self.updated is None or (moment is not None and moment > self.updated):
            self.updated_at, self.updated = stamp, moment


def _text(match: re.Match[bytes] | None) -> str:
    return match.group(1).decode("utf-8", "replace") if match else ""


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class SessionIndex:
    """The summaries of one sessions folder, kept between lists (a few hundred bytes each)."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def summaries(self, folder: Path, seconds: float = LIST_SECONDS) -> Iterator[Summary]:
        """Every `<id>.jsonl` of `folder` summarized; never opens anything but a regular
        file, and reads each one at most up to the size it had when the list began."""
        deadline = time.monotonic() + seconds
        seen: dict[str, _Entry] = {}
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            return  # no sessions yet (the start's warning names a data dir that cannot be)
        except OSError as exc:
            raise storage_error("list the sessions in", folder, exc) from None
        for found in entries:
            name = found.name
            if not name.endswith(".jsonl") or not SESSION_ID.fullmatch(name[:-6]):
                continue
            sid = name[:-6]
            try:
                st = found.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(st.st_mode):
                yield odd(sid, f"{name} is {kind_of(st.st_mode)}, not a regular file; not read")
                continue
            entry = self._entries.get(sid)
            try:
                if entry is None or entry.identity != _identity(st) or not entry.complete:
                    whole = time.monotonic() < deadline
                    entry = summarize(Path(found.path), st, entry, whole=whole)
            except (OSError, StorageError) as exc:
                yield odd(sid, f"{name} cannot be read: {getattr(exc, 'message', exc)}")
                continue
            seen[sid] = entry
            yield entry.summary(sid)
        self._entries = seen

    def forget(self, session_id: str) -> None:
        self._entries.pop(session_id, None)


def odd(session_id: str, problem: str) -> Summary:
    """A name of the sessions folder that cannot be listed as a session: damaged, unread."""
    return Summary(
        session_id=session_id,
        title=session_id,
        read_only=True,
        damage=Damage(header_missing=True, notes=[problem]),
    )


def summarize(path: Path, st: os.stat_result, before: _Entry | None, *, whole: bool) -> _Entry:
    """The summary of `path` (whose `lstat` is `st`), continuing `before` when the file
    only grew since; only its header when not `whole`."""
    with os.fdopen(open_regular(path, os.O_RDONLY), "rb", buffering=0) as handle:
        entry = before if before is not None and _grew(handle, st, before) else None
        if entry is None:
            entry = _Entry(_identity(st))
        entry.identity = _identity(st)
        entry.complete = whole
        handle.seek(entry.end)
        _read(handle, entry, st.st_size, whole)
    return entry


def _grew(handle: IO[bytes], st: os.stat_result, before: _Entry) -> bool:
    """Whether the file is the one `before` summarized, with lines appended after it."""
    dev, ino, _, _ = before.identity
    if (dev, ino) != (st.st_dev, st.st_ino) or st.st_size < before.end or not before.complete:
        return False
    start = before.end - len(before.mark)
    return os.pread(handle.fileno(), len(before.mark), start) == before.mark


def _read(handle: IO[bytes], entry: _Entry, size: int, whole: bool) -> None:
    """The lines from the handle's position up to `size` bytes into the file: each whole
    line is given to `entry` (parsed when under LONG_LINE); a last line without its
    newline is left for the next summary, as are all lines after the first when not
    `whole`."""
    left = size - entry.end
    pieces: list[bytes] | None = []
    length, head, tail = 0, b"", b""
    while left > 0:
        segment = handle.readline(min(CHUNK, left))
        if not segment:
            break
        left -= len(segment)
        complete = segment.endswith(b"\n")
        if length == 0 and complete:
            _line(entry, segment[:-1])
            entry.end += len(segment)
        else:
            head = head or segment[:EDGE]
            tail = (tail + segment)[-EDGE:]
            length += len(segment)
            if pieces is not None:
                pieces.append(segment)
                if length > LONG_LINE:
                    pieces = None
            if not complete:
                continue
            if pieces is not None:
                _line(entry, b"".join(pieces)[:-1])
            else:
                entry.long_line(head, tail)
            entry.end += length
            pieces, length, head, tail = [], 0, b"", b""
        if not whole and not entry.first:
            break
    if entry.end:
        start = max(0, entry.end - MARK)
        entry.mark = os.pread(handle.fileno(), entry.end - start, start)


def _line(entry: _Entry, line: bytes) -> None:
    if not line or line.isspace():
        return
    try:
        event = parse_line(line)
    except ValueError:
        event = None
    if isinstance(event, dict):
        entry.event(event)
    else:
        entry.bad_lines += 1
