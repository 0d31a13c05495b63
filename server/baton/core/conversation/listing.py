"""The session list's index: each transcript summarized by one streamed pass over its lines
(parsed as JSON, never replayed into a session), kept per file identity and extended only
by what was appended since; names that are not regular files are listed as damaged, unread.
"""

from __future__ import annotations

import marshal
import os
import re
import stat
import sys
import time
from dataclasses import dataclass, field
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
SMALL = 1 << 18  # a file (or what was appended to it) up to this size is read in one go
MARK = 32  # the bytes before a summary's end that tell the file only grew since
LIST_SECONDS = 5.0  # after this, the rest of a list is summarized from the headers alone
_TYPE = re.compile(rb'^\{"type": "(\w+)"')
_ID = re.compile(rb'"id": "([^"\\]{1,200})"')
_DIRECTION = re.compile(rb'"direction": "(\w+)"')
_CREATED = re.compile(rb'"createdAt": "([^"\\]{1,64})"')
_SESSION_ID = re.compile(rb'"sessionId": "([^"\\]{1,200})"')


@dataclass(slots=True)
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


_HEALTHY = Damage()  # the damage of every healthy summary: one object, never changed


@dataclass(slots=True)
class _Entry:
    """One transcript's summary so far: what its first `end` bytes (whole lines) held."""

    identity: int  # a hash of the device, inode, size and mtime when last summarized
    file: int  # a hash of the device and inode alone
    end: int = 0
    mark: int = 0  # a hash of the MARK bytes before `end`
    first: bool = True  # no event read yet (the first one is the header)
    header_id: str | None = None
    header_ok: bool = False
    sources: tuple[str | None, str | None] = (None, None)  # importedFrom, compactedFrom
    title: str = ""
    model: str = ""
    created_at: str = ""
    updated_at: str = ""
    active: dict[str, str] | None = None  # boundary id -> direction
    deleted: bool = False
    bad_lines: int = 0
    complete: bool = True  # False: summarized from the header only (the list ran out of time)

    def summary(self, session_id: str) -> Summary:
        mismatch = self.header_ok and self.header_id != session_id
        damage = _HEALTHY
        if self.bad_lines or not self.header_ok or mismatch:
            damage = Damage(lines=self.bad_lines, header_missing=not self.header_ok)
        if mismatch:
            damage.notes.append(mismatch_note(str(self.header_id), session_id))
        imported, compacted = self.sources
        header = {"sessionId": self.header_id, "importedFrom": imported}
        return Summary(
            session_id=session_id,
            title=self.title,
            model=self.model,
            created_at=self.created_at,
            updated_at=self.updated_at,
            compactions=sum(1 for d in (self.active or {}).values() if d != "microcompact"),
            read_only=damage.header_missing or mismatch,
            deleted=self.deleted,
            imported_from=imported,
            header={**header, "compactedFrom": compacted} if compacted else header,
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
            self.header_id = sid if isinstance(sid, str) else None
            self.header_ok = kind == "session" and bool(self.header_id)
            if kind == "session":
                imported, compacted = event.get("importedFrom"), event.get("compactedFrom")
                self.sources = (
                    str(imported) if imported else None,
                    str(compacted) if compacted else None,
                )
                self.title = str(event.get("title") or "")
                self.model = sys.intern(str(event.get("model") or ""))
                self.created_at = str(event.get("createdAt") or "")
                self._seen(self.created_at)
                return
        if kind == "message":
            message = event.get("message")
            at = message.get("createdAt") if isinstance(message, dict) else None
        elif kind == "boundary":
            boundary = event.get("boundary")
            if isinstance(boundary, dict) and isinstance(boundary.get("id"), str):
                self._boundary(boundary["id"], str(boundary.get("direction") or "all"))
        elif kind == "uncompact" and self.active:
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
            self.header_id = _text(sid) or None
            return
        if name == b"message":
            created = list(_CREATED.finditer(tail))
            if created:
                self._seen(_text(created[-1]))
        elif name == b"boundary":
            found, direction = _ID.search(head), _DIRECTION.search(head)
            if found:
                self._boundary(_text(found), _text(direction) or "all")

    def _boundary(self, boundary_id: str, direction: str) -> None:
        if self.active is None:
            self.active = {}
        self.active[boundary_id] = direction

    def _seen(self, stamp: str) -> None:
        if stamp == self.updated_at:
            return
        before = instant(self.updated_at) if self.updated_at else None
        if before is None:
            self.updated_at = stamp
            return
        moment = instant(stamp)
        if moment is not None and moment > before:
            self.updated_at = stamp


def _text(match: re.Match[bytes] | None) -> str:
    return match.group(1).decode("utf-8", "replace") if match else ""


def _identity(st: os.stat_result) -> int:
    return hash((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)) & _MASK


def _file(st: os.stat_result) -> int:
    return hash((st.st_dev, st.st_ino))


_MASK = (1 << 64) - 1
_FIELDS = tuple(_Entry.__dataclass_fields__)


def _pack(entry: _Entry) -> bytes:
    """One bytes object per session is all the index keeps (a list of 10,000 sessions then
    leaves a few MB behind, not tens of MB of small objects spread over the heap)."""
    fields = tuple(getattr(entry, name) for name in _FIELDS)
    identity = entry.identity if entry.complete else 0  # an incomplete one is read again
    return identity.to_bytes(8, "little") + marshal.dumps(fields)


def _unpack(data: bytes) -> _Entry:
    return _Entry(*marshal.loads(data[8:]))


def _packed_identity(data: bytes) -> int:
    return int.from_bytes(data[:8], "little")


class SessionIndex:
    """The summaries of one sessions folder, kept between lists (a few hundred bytes each)."""

    def __init__(self) -> None:
        self._entries: dict[str, bytes] = {}  # id -> the packed `_Entry`

    def summaries(self, folder: Path, seconds: float = LIST_SECONDS) -> list[Summary]:
        """Every `<id>.jsonl` of `folder` summarized; never opens anything but a regular
        file, and reads each one at most up to the size it had when the list began. The
        index is brought up to date first and the summaries made after, so that what a
        list leaves behind (the index) is not spread among what it drops."""
        found = self._refresh(folder, seconds)
        return [
            odd(sid, problem) if problem else _unpack(self._entries[sid]).summary(sid)
            for sid, problem in found
        ]

    def _refresh(self, folder: Path, seconds: float) -> list[tuple[str, str]]:
        """(id, "") for each session, brought up to date in the index; (id, problem) for a
        name that cannot be read as one."""
        deadline = time.monotonic() + seconds
        seen: dict[str, bytes] = {}
        out: list[tuple[str, str]] = []
        try:
            entries = os.scandir(folder)  # one entry at a time (each holds its stat)
        except (FileNotFoundError, NotADirectoryError):
            return out  # no sessions yet (the start's warning names a data dir that cannot be)
        except OSError as exc:
            raise storage_error("list the sessions in", folder, exc) from None
        with entries:
            for found in entries:
                self._refresh_one(found, deadline, seen, out)
        self._entries = seen
        return out

    def _refresh_one(
        self,
        found: os.DirEntry[str],
        deadline: float,
        seen: dict[str, bytes],
        out: list[tuple[str, str]],
    ) -> None:
        name = found.name
        if not name.endswith(".jsonl") or not SESSION_ID.fullmatch(name[:-6]):
            return
        sid = name[:-6]
        try:
            st = found.stat(follow_symlinks=False)
        except FileNotFoundError:
            return
        if not stat.S_ISREG(st.st_mode):
            out.append((sid, f"{name} is {kind_of(st.st_mode)}, not a regular file; not read"))
            return
        packed = self._entries.get(sid)
        try:
            if packed is None or _packed_identity(packed) != _identity(st):
                before = _unpack(packed) if packed is not None else None
                whole = time.monotonic() < deadline
                packed = _pack(summarize(found.path, st, before, whole=whole))
        except (OSError, StorageError) as exc:
            out.append((sid, f"{name} cannot be read: {getattr(exc, 'message', exc)}"))
            return
        seen[sid] = packed
        out.append((sid, ""))

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


def summarize(path: str, st: os.stat_result, before: _Entry | None, *, whole: bool) -> _Entry:
    """The summary of `path` (whose `lstat` is `st`), continuing `before` when the file
    only grew since; only its header when not `whole`."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        entry = before if before is not None and _grew(fd, st, before) else None
        if entry is None:
            entry = _Entry(_identity(st), _file(st))
        entry.identity = _identity(st)
        entry.complete = whole
        if whole and st.st_size - entry.end <= SMALL:
            _read_small(fd, entry, st.st_size)
        else:
            with os.fdopen(os.dup(fd), "rb", buffering=CHUNK) as handle:
                handle.seek(entry.end)
                _read(handle, entry, st.st_size, whole)
        if entry.end:
            start = max(0, entry.end - MARK)
            entry.mark = hash(os.pread(fd, entry.end - start, start))
    finally:
        os.close(fd)
    return entry


def _read_small(fd: int, entry: _Entry, size: int) -> None:
    """`_read` for what fits in one read: every line up to the last newline, parsed."""
    data = os.pread(fd, size - entry.end, entry.end)
    last = data.rfind(b"\n")
    if last < 0:
        return
    for line in data[:last].split(b"\n"):
        _line(entry, line)
    entry.end += last + 1


def _grew(fd: int, st: os.stat_result, before: _Entry) -> bool:
    """Whether the file is the one `before` summarized, with lines appended after it."""
    if before.file != _file(st) or st.st_size < before.end or not before.complete:
        return False
    start = max(0, before.end - MARK)
    return hash(os.pread(fd, before.end - start, start)) == before.mark


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
