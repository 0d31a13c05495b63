"""What Claude Code's later formats say about its chain of records beyond each record: the
same record written again, the messages a compaction kept (2.1's `preservedSegment`), and
the tool results a microcompaction cleared (`microcompact_boundary`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from baton.core.conversation.boundary import Boundary, Trigger
from baton.core.conversation.messages import (
    CLEARED_RESULT,
    ContentBlock,
    Message,
    ToolResultBlock,
)
from baton.core.importers.claude_code_json import loads
from baton.core.importers.claude_code_read import Reading
from baton.core.importers.claude_code_repairs import Record

SUMMARIZER = "claude-code"


class RepeatedRecords:
    """The conversation records read so far, by uuid: Claude Code writes a record again
    (the same line several times in a row, or earlier history appended to the file again)
    and reads its file by uuid, so a repeat is the same message to it. A uuid reused for
    another message is no repeat: what the two records say is compared (`fingerprint`).

    Most files repeat no uuid, so a record's fingerprint is taken only when its uuid comes
    again: of a JSONL file's record, its line's place is noted, and the line read again
    then (`_again`; once per uuid, each line at most once: linear); a JSON array's
    item, read from a window of text, has its fingerprint taken as it is read. `said` is
    what a record says, as the import reads it: (kind, message)."""

    def __init__(
        self,
        reading: Reading | None = None,
        said: Callable[[Record], tuple[str, object]] | None = None,
    ) -> None:
        self._first: dict[str, int] = {}  # uuid -> the fingerprint of its first record
        self._lines: dict[str, int] = {}  # uuid -> where its first record's line begins
        self.reading = reading if said is not None else None
        self.said = said

    def seen(self, record: Record, kind: str, subtype: object, message: object) -> bool:
        """Whether the record (a conversation record: its `message` as it reads) was read
        before under its uuid."""
        if kind not in ("user", "assistant") and not (
            kind == "system" and subtype == "compact_boundary"
        ):
            return False
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            return False
        start = self.reading.start if self.reading is not None else None
        if start is not None:  # a JSONL line: no two begin at one place
            begins = self._lines.setdefault(uuid, start)
            if begins == start:
                return False  # its first record
            first = self._first.get(uuid)
            if first is None:
                first = self._first[uuid] = self._again(begins)
            return first == fingerprint(kind, message)
        first = self._first.get(uuid)
        if first is None:
            self._first[uuid] = fingerprint(kind, message)
            return False
        return first == fingerprint(kind, message)

    def _again(self, start: int) -> int:
        """The fingerprint of the record on the line that begins at byte `start` of the
        file, read again from the file open for the read (whose own reads go on where they
        were): the line as it was read, since Claude Code only appends to its file."""
        assert self.reading is not None and self.said is not None
        handle = self.reading.handle
        again = None
        if handle is not None and not handle.closed:
            with contextlib.suppress(ValueError):
                again = loads(_line(handle.fileno(), start))[0]
        return fingerprint(*self.said(again)) if isinstance(again, dict) else hash(None)


def _line(fd: int, start: int) -> bytes:
    """The line of the file that begins at byte `start`, its line end included (read in
    pieces twice as large each time: at most twice the line)."""
    size = 65536
    while True:
        piece = os.pread(fd, size, start)
        end = piece.find(b"\n")
        if end >= 0 or len(piece) < size:
            return piece[: end + 1] if end >= 0 else piece
        size *= 2


def fingerprint(kind: str, message: object) -> int:
    """A hash of what a record says (its kind, its message's id and role, each block's type
    and text, thinking or id). Timestamps and session ids are left out: history appended
    again may carry new ones. The fields are taken with no call per field (`_text`
    inlined): each record of an array is read for it."""
    if not isinstance(message, dict):
        return hash((kind, None))
    content = message.get("content")
    if isinstance(content, list):
        content = tuple([_block_mark(block) for block in content])
    elif not isinstance(content, str):
        content = None
    said, role = message.get("id"), message.get("role")
    said = said if isinstance(said, str) else None
    return hash((kind, said, role if isinstance(role, str) else None, content))


def _block_mark(block: object) -> object:
    if not isinstance(block, dict):
        return _text(block)
    get = block.get
    inner = get("content")
    if isinstance(inner, list):
        inner = tuple(
            [_text(item.get("text")) if isinstance(item, dict) else None for item in inner]
        )
    elif not isinstance(inner, str):
        inner = None
    said = get("text") or get("thinking") or get("id") or get("tool_use_id")
    kind = get("type")
    return (kind if isinstance(kind, str) else None, said if isinstance(said, str) else None, inner)


def _text(value: object) -> str | None:
    """A field's string, None for any other JSON value (a damaged record's list or object
    would make the fingerprint unhashable)."""
    return value if isinstance(value, str) else None


def kept_segment(holder: dict[str, str], view: list[str], segment: object) -> list[str] | None:
    """The messages a compaction kept, from the one holding the segment's head record to
    the one holding its tail (`holder`: record uuid -> message), when they end the view
    after something to summarize; [] for no segment; None when the segment names no such
    run."""
    if not isinstance(segment, dict):
        return []
    head = holder.get(str(segment.get("headUuid")))
    tail = holder.get(str(segment.get("tailUuid")))
    if head in view and tail == view[-1] and view.index(head) > 0:
        return view[view.index(head) :]
    return None


# A message of the view made of tool results only: when, and each result's call
# (tool_use_id, is_error). A tuple: one is kept for every such message an import makes.
_Results = tuple[str, list[tuple[str, bool | None]]]


@dataclass
class ClearedResults:
    """The tool-result messages of the view, kept as stubs (their content is written and
    let go as the import goes), so that a microcompaction can clear them."""

    stubs: dict[str, _Results] = field(default_factory=dict)  # message id -> its results

    def add(self, message: Message) -> None:
        if message.is_tool_result_only:
            results = [(b.tool_use_id, b.is_error) for b in message.tool_results()]
            self.stubs[message.id] = (message.created_at, results)

    def boundary(
        self,
        record: Record,
        view: list[str],
        held: Iterable[Message | Boundary | Record],
        new_id: Callable[[], str],
        count: Callable[[Message], int],
    ) -> tuple[Boundary | None, list[str]]:
        """Claude Code's microcompaction as a Baton one: each message of the view whose
        results it cleared replaced by a copy with them cleared. A message it cleared only
        part of is copied from `held` (the entries not written yet) or left as it is, with
        a note. Returns the boundary (None when it cleared nothing of the view) and the
        notes."""
        meta = record.get("microcompactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        listed = meta.get("compactedToolIds")
        cleared = {u for u in listed if isinstance(u, str)} if isinstance(listed, list) else set()
        by_id = {e.id: e for e in held if isinstance(e, Message)}
        copies: dict[str, Message] = {}
        notes: list[str] = []
        for message_id in view:
            stub = self.stubs.get(message_id)
            if stub is None:
                continue
            created_at, results = stub
            if not cleared & {u for u, _ in results}:
                continue
            whole = all(u in cleared for u, _ in results)
            original = by_id.get(message_id)
            if original is not None:
                content: list[ContentBlock] = [_cleared(b, cleared) for b in original.content]
            elif whole:
                content = [
                    ToolResultBlock(tool_use_id=u, content=CLEARED_RESULT, is_error=e)
                    for u, e in results
                ]
            else:
                notes.append(f"message {message_id}: only some of its tool results were cleared")
                continue
            copy = Message(id=new_id(), role="user", content=content, created_at=created_at)
            copy.tokens = count(copy)
            copies[message_id] = copy
        if not copies:
            return None, notes
        trigger: Trigger = "manual" if meta.get("trigger") == "manual" else "auto"
        pre, saved = meta.get("preTokens"), meta.get("tokensSaved")
        pre = pre if isinstance(pre, int) and pre >= 0 else 0
        saved = saved if isinstance(saved, int) and 0 <= saved <= pre else 0
        boundary = Boundary(
            trigger=trigger,
            direction="microcompact",
            summarizer=SUMMARIZER,
            pre_tokens=pre,
            post_tokens=pre - saved,
            new_messages=list(copies.values()),
            stands_for={copy.id: [original] for original, copy in copies.items()},
            summarized_ids=list(copies),
            kept_ids=[m for m in view if m not in copies],
            view_before=list(view),
            view_after=[copies[m].id if m in copies else m for m in view],
            extra={"record": record, "clearedResults": len(copies)},
        )
        for copy in copies.values():
            self.add(copy)
        return boundary, notes


def _cleared(block: ContentBlock, cleared: set[str]) -> ContentBlock:
    if isinstance(block, ToolResultBlock) and block.tool_use_id in cleared:
        use_id, is_error = block.tool_use_id, block.is_error
        return ToolResultBlock(tool_use_id=use_id, content=CLEARED_RESULT, is_error=is_error)
    return block
