"""What the session list keeps of one transcript (`Entry`) and shows of it (`Summary`).

Each event is folded into the entry as replay would read it; a line too long to parse is
read from its two ends.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from baton.core.conversation.boundary import NOT_COMPACTIONS
from baton.core.conversation.damage import Damage, mismatch_note
from baton.core.conversation.messages import ApiUsage, Message
from baton.core.conversation.meta_records import (
    only_placement,
    read_imported_fingerprint,
    read_imported_size,
)
from baton.core.conversation.session_fields import instant

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
    # summarized from its header alone (a list out of time, a load reading it meanwhile):
    # its title and times may be older than the file's
    partial: bool = False


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
    imported_size: int = -1  # an import's: the size of the file it read; -1: not noted
    imported_fingerprint: str = ""  # of the bytes it read; "": not noted
    # incomplete: how far into the file a line too long to parse that starts at `end` was
    # read when time ran out (0: the next read starts at `end`)
    scanned: int = 0

    def summary(self, session_id: str) -> Summary:
        mismatch = self.header_ok and self.header_id != session_id
        damage = _HEALTHY
        if self.bad_lines or not self.header_ok or mismatch:
            damage = Damage(lines=self.bad_lines, header_missing=not self.header_ok)
        if mismatch:
            damage.notes.append(mismatch_note(str(self.header_id), session_id))
        imported, compacted = self.sources
        header: dict[str, Any] = {"sessionId": self.header_id, "importedFrom": imported}
        if self.imported_size >= 0:
            header["importedSize"] = self.imported_size
        if self.imported_fingerprint:
            header["importedFingerprint"] = self.imported_fingerprint
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
            partial=not self.complete,
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
                read = event.get("importedSize")
                self.imported_size = read if type(read) is int and read >= 0 else -1
                found = read_imported_fingerprint(event.get("importedFingerprint"), None)
                self.imported_fingerprint = found or ""
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
            read = read_imported_size(event.get("importedSize"), None)  # an import's last word
            self.imported_size = self.imported_size if read is None else read
            found = read_imported_fingerprint(event.get("importedFingerprint"), None)
            self.imported_fingerprint = found or self.imported_fingerprint
            if only_placement(event):
                at = None
        elif kind == "deleted":
            self.deleted = True
        if at:
            self._seen(str(at))

    def written(self, events: Iterable[dict[str, Any]]) -> None:
        """`event` of each of the events a writer wrote, in order, as a read of its lines
        would give them; a message event may hold the model itself (an import's,
        `StagedTranscript.written`): only its time and usage are looked at, the latest
        time's instant kept between messages, the usage figured for the last one alone
        (a 100 MB import's 57,000 messages: 0.07-0.10 s on a loaded machine, where `event`
        of each took 0.11-0.13 s)."""
        latest, moment = self.updated_at, instant(self.updated_at) if self.updated_at else None
        usages: list[ApiUsage] = []  # of the messages since the last event given to `event`
        for event in events:
            message = event.get("message")
            if type(message) is not Message or self.first:
                if event.get("type") == "opaque" and not self.first:
                    continue  # `event` passes it by
                self.tokens = _last_tokens(usages, self.tokens)
                usages.clear()
                self.updated_at = latest
                self.event(event)
                if self.updated_at != latest:
                    latest, moment = self.updated_at, instant(self.updated_at)
                continue
            if message.usage is not None:
                usages.append(message.usage)
            at = message.created_at
            if not at or at == latest:
                continue
            if moment is None:  # as `_seen`: a time not read as one is taken over
                latest, moment = at, instant(at)
                continue
            later = instant(at)
            if later is not None and later > moment:
                latest, moment = at, later
        self.tokens = _last_tokens(usages, self.tokens)
        self.updated_at = latest

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


def odd(session_id: str, problem: str) -> Summary:
    """A name of the sessions folder that cannot be listed as a session: damaged, unread."""
    return Summary(
        session_id=session_id,
        title=session_id,
        read_only=True,
        damage=Damage(header_missing=True, notes=[problem]),
    )


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


def _last_tokens(usages: list[ApiUsage], before: int) -> int:
    """The context the last of `usages` that reports one holds, else `before`."""
    for usage in reversed(usages):
        counted = usage.context_tokens
        if counted > 0:
            return counted
    return before


def _text(match: re.Match[bytes] | None) -> str:
    return match.group(1).decode("utf-8", "replace") if match else ""
