"""One transcript summarized for the session list: a streamed pass over its lines (each
parsed as JSON, never replayed into a session, a line too long to parse read from its two
ends), continued from where the last pass ended when the file only grew since."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import IO, Any

from baton.core.conversation.boundary import NOT_COMPACTIONS
from baton.core.conversation.damage import Damage, mismatch_note
from baton.core.conversation.files import open_regular
from baton.core.conversation.replay import instant
from baton.core.conversation.transcript_read import parse_line

CHUNK = 1 << 16  # the most one read holds
LONG_LINE = 1 << 20  # a longer line is not parsed: its type, id and time come from its ends
EDGE = 4096  # how much of a long line's start and end is kept
SMALL = 1 << 18  # a file (or what was appended to it) up to this size is read in one go
MARK = 32  # the bytes before a summary's end that tell the file only grew since
MASK = (1 << 64) - 1
# A line too long to parse is read by these, in either way Baton has written its lines
# (`json.dumps`'s separators, ", " and ": ", before; pydantic-core's, with no space, since).
_TYPE = re.compile(rb'^\{"type": ?"(\w+)"')
_ID = re.compile(rb'"id": ?"([^"\\]{1,200})"')
_DIRECTION = re.compile(rb'"direction": ?"(\w+)"')
_CREATED = re.compile(rb'"createdAt": ?"([^"\\]{1,64})"')
_SESSION_ID = re.compile(rb'"sessionId": ?"([^"\\]{1,200})"')
_USAGE_FIELDS = ("inputTokens", "outputTokens", "cacheCreationInputTokens", "cacheReadInputTokens")
_USAGE = re.compile(
    rb'"usage": ?\{"inputTokens": ?(\d{1,12}), ?"outputTokens": ?(\d{1,12}), ?'
    rb'"cacheCreationInputTokens": ?(\d{1,12}), ?"cacheReadInputTokens": ?(\d{1,12})\}'
)


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
    context_tokens: int | None = None  # the last known context size (None: unknown)


_HEALTHY = Damage()  # the damage of every healthy summary: one object, never changed


@dataclass(slots=True)
class Entry:
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
    tokens: int = -1  # the context at the last reply (the API's usage); -1: unknown since
    size: int = 0  # the file's size when last summarized (`end` is where its whole lines end)

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
            compactions=sum(1 for d in (self.active or {}).values() if d not in NOT_COMPACTIONS),
            read_only=damage.header_missing or mismatch,
            deleted=self.deleted,
            imported_from=imported,
            header={**header, "compactedFrom": compacted} if compacted else header,
            damage=damage,
            context_tokens=self.tokens if self.tokens >= 0 else None,
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
            self.tokens = _reply_tokens(message, self.tokens)
        elif kind == "boundary":
            self.tokens = -1  # the view changed shape: unknown until the next reply
            boundary = event.get("boundary")
            if isinstance(boundary, dict) and isinstance(boundary.get("id"), str):
                self._boundary(boundary["id"], str(boundary.get("direction") or "all"))
                at = boundary.get("createdAt")
        elif kind == "uncompact":
            self.tokens = -1
            if self.active:
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
            usage = _USAGE.search(tail)
            self.tokens = sum(int(n) for n in usage.groups()) if usage else self.tokens
        elif name == b"boundary":
            self.tokens = -1
            found, direction = _ID.search(head), _DIRECTION.search(head)
            if found:
                self._boundary(_text(found), _text(direction) or "all")
            stamp = _CREATED.search(head)  # the boundary's own, before its new messages
            if stamp:
                self._seen(_text(stamp))

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


def _reply_tokens(message: object, before: int) -> int:
    """The context a reply's API usage reports (`ApiUsage.context_tokens`), else `before`."""
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(usage, dict):
        return before
    total = 0
    for name in _USAGE_FIELDS:
        value = usage.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            total += value
    return total if total > 0 else before


def _text(match: re.Match[bytes] | None) -> str:
    return match.group(1).decode("utf-8", "replace") if match else ""


def identity(st: os.stat_result) -> int:
    """A hash of the file's device, inode, size and mtime (64 bits, never negative)."""
    return hash((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)) & MASK


def file_of(st: os.stat_result) -> int:
    return hash((st.st_dev, st.st_ino))


def summarize(path: str, st: os.stat_result, before: Entry | None, *, whole: bool) -> Entry:
    """The summary of `path` (whose `lstat` is `st`), continuing `before` when the file
    only grew since; only its header when not `whole`."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        entry = before if before is not None and _grew(fd, st, before) else None
        if entry is None:
            entry = Entry(identity(st), file_of(st))
        entry.identity = identity(st)
        entry.size = st.st_size
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


def _read_small(fd: int, entry: Entry, size: int) -> None:
    """`_read` for what fits in one read: every line up to the last newline, parsed."""
    data = os.pread(fd, size - entry.end, entry.end)
    last = data.rfind(b"\n")
    if last < 0:
        return
    for line in data[:last].split(b"\n"):
        _line(entry, line)
    entry.end += last + 1


def _grew(fd: int, st: os.stat_result, before: Entry) -> bool:
    """Whether the file is the one `before` summarized, with lines appended after it. One
    that did not grow was changed in place (its mtime moved, an editor saved it over
    itself, lines swapped): it is read again whole. One that grew is taken for appended
    to when the bytes before the old end are those it had (`mark`)."""
    if before.file != file_of(st) or st.st_size <= before.size or not before.complete:
        return False
    start = max(0, before.end - MARK)
    return hash(os.pread(fd, before.end - start, start)) == before.mark


def _read(handle: IO[bytes], entry: Entry, size: int, whole: bool) -> None:
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


def _line(entry: Entry, line: bytes) -> None:
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
