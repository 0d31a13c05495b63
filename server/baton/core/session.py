"""A session: its transcript replayed into the model's current view; append, commit, undo."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from baton.core.boundary import Boundary, expand, view_after_commit
from baton.core.errors import InvalidParams, MessageNotFound, NothingToCompact
from baton.core.messages import (
    ApiUsage,
    Message,
    MessageInput,
    ToolResultBlock,
    block_problems,
    invariant_violations,
    new_id,
    now_iso,
    unanswered_tool_uses,
)
from baton.core.transcript import Event, Transcript

TokenCounter = Callable[[Message], int]
INTERRUPTED = "interrupted"


@dataclass
class AppendResult:
    message_ids: list[str]
    repairs: list[str] = field(default_factory=list)


class Session:
    """One conversation. Every change is written to the transcript before it is applied."""

    def __init__(self, transcript: Transcript, count: TokenCounter) -> None:
        self.transcript = transcript
        self.count = count
        self.session_id = ""
        self.title = ""
        self.model = ""
        self.system_prompt: str | None = None
        self.imported_from: str | None = None  # the file an imported session came from
        self.created_at = ""
        self.updated_at = ""
        self.deleted = False
        self.compacting = False  # set by the compaction engine while one runs
        self.messages: dict[str, Message] = {}
        self.view: list[str] = []
        self.boundaries: dict[str, Boundary] = {}
        self.active: list[str] = []  # committed, not undone, oldest first
        self.opaque: list[dict[str, Any]] = []
        self.load_problems: list[str] = []
        self._prefix_marks: dict[str, str] = {}
        self._running = hashlib.blake2b(digest_size=16)
        for event in transcript.events:
            self._apply(event)
        self.load_problems.extend(transcript.report.problems)

    # ---- reading -------------------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        return self.transcript.read_only

    @property
    def compactions(self) -> int:
        return sum(1 for b in self.active if self.boundaries[b].direction != "microcompact")

    def view_messages(self) -> list[Message]:
        return [self.messages[mid] for mid in self.view]

    def get(self, message_id: str) -> Message:
        try:
            return self.messages[message_id]
        except KeyError:
            raise MessageNotFound(
                f"no message {message_id!r} in session {self.session_id}"
            ) from None

    def index_in_view(self, message_id: str) -> int:
        self.get(message_id)
        try:
            return self.view.index(message_id)
        except ValueError:
            raise MessageNotFound(
                f"message {message_id!r} is not in the current view (it was compacted)"
            ) from None

    def anchor(self) -> tuple[int, ApiUsage] | None:
        """(index of the first record of the anchoring response, its usage), or None.

        The anchor is the last assistant record with real usage whose preceding view is
        unchanged since that usage arrived; the count starts at the first record sharing
        its API message id so that interleaved tool results are counted.
        """
        marks = self._view_fingerprints()
        for index in range(len(self.view) - 1, -1, -1):
            message = self.messages[self.view[index]]
            if not message.anchors_usage or self._prefix_marks.get(message.id) != marks[index]:
                continue
            first = index
            api_id = message.api_message_id
            if api_id is not None:
                for j in range(index - 1, -1, -1):
                    other = self.messages[self.view[j]]
                    if other.role == "assistant" and other.api_message_id == api_id:
                        first = j
                    elif other.role == "assistant" or not other.is_tool_result_only:
                        break
            assert message.usage is not None
            return first, message.usage
        return None

    # ---- changing ------------------------------------------------------------------------

    def append(self, inputs: Sequence[MessageInput | Message]) -> AppendResult:
        """Validate the whole batch, repair unanswered tool calls, then write it at once."""
        if not inputs:
            raise InvalidParams("messages must not be empty")
        pending = self.view_messages()
        known = set(self.messages)
        batch: list[Message] = []
        own_ids: list[str] = []
        repairs: list[str] = []
        for item in inputs:
            message = self._to_message(item)
            if message.id in known:
                raise InvalidParams(f"message id {message.id!r} already exists in this session")
            known.add(message.id)
            if message.role == "user" and not message.is_tool_result_only:
                answered = {r.tool_use_id for r in message.tool_results()}
                missing = [u for u in unanswered_tool_uses(pending) if u.id not in answered]
                if missing:
                    repair = Message(
                        role="user",
                        content=[
                            ToolResultBlock(tool_use_id=u.id, content=INTERRUPTED, is_error=True)
                            for u in missing
                        ],
                    )
                    repairs.append(
                        "answered unanswered tool call(s) "
                        + ", ".join(u.id for u in missing)
                        + f" with '{INTERRUPTED}' before message {message.id}"
                    )
                    repair.tokens = self.count(repair)
                    batch.append(repair)
                    pending.append(repair)
            batch.append(message)
            own_ids.append(message.id)
            pending.append(message)
        before = set(invariant_violations(self.view_messages()))
        new_problems = [p for p in invariant_violations(pending) if p not in before]
        if new_problems:
            raise InvalidParams("invalid messages: " + "; ".join(new_problems[:5]))
        for message in batch:
            if not message.tokens:
                message.tokens = self.count(message)
        self._write([{"type": "message", "message": m.wire()} for m in batch])
        return AppendResult(own_ids, repairs)

    def replace_message(self, message: Message) -> None:
        """Record a new version of a message (a streamed reply that finished)."""
        self.get(message.id)
        message.tokens = self.count(message)
        self._write([{"type": "message", "message": message.wire(), "replace": True}])

    def commit_boundary(self, boundary: Boundary) -> None:
        """Commit a compaction as one transcript line; the view follows it."""
        for message in boundary.new_messages:
            if not message.tokens:
                message.tokens = self.count(message)
        self._write([{"type": "boundary", "boundary": boundary.wire()}])

    def uncompact(self, boundary_id: str | None = None) -> Boundary:
        """Undo one compaction (default: the latest), keeping every later turn."""
        if not self.active:
            raise NothingToCompact("this session has no compaction to undo")
        target = boundary_id or self.active[-1]
        if target not in self.active:
            raise InvalidParams(f"no active compaction {target!r} in this session")
        self._write([{"type": "uncompact", "boundaryId": target, "at": now_iso()}])
        return self.boundaries[target]

    def set_pinned(self, message_id: str, pinned: bool) -> Message:
        self.get(message_id)
        self._write([{"type": "pin", "messageId": message_id, "pinned": pinned, "at": now_iso()}])
        return self.messages[message_id]

    def set_meta(self, **fields: Any) -> None:
        self._write([{"type": "meta", **fields, "at": now_iso()}])

    # ---- replay --------------------------------------------------------------------------

    def _write(self, events: list[Event]) -> None:
        self.transcript.append_many(events)
        for event in events:
            self._apply(event)

    def _apply(self, event: Event) -> None:
        kind = event.get("type")
        at = event.get("at") or event.get("createdAt")
        if kind == "session":
            self.session_id = str(event.get("sessionId", ""))
            self.title = str(event.get("title") or "")
            self.model = str(event.get("model") or "")
            self.system_prompt = event.get("systemPrompt")
            imported = event.get("importedFrom")
            self.imported_from = str(imported) if imported else None
            self.created_at = self.updated_at = str(event.get("createdAt") or now_iso())
        elif kind == "message":
            message = self._load_message(event.get("message"))
            if message is None:
                return
            at = message.created_at
            if event.get("replace") and message.id in self.messages:
                self.messages[message.id] = message
            else:
                self._add_to_view(message)
        elif kind == "boundary":
            self._apply_boundary(event)
        elif kind == "uncompact":
            self._apply_uncompact(str(event.get("boundaryId")))
        elif kind == "pin":
            target = self.messages.get(str(event.get("messageId")))
            if target is not None:
                target.pinned = bool(event.get("pinned"))
        elif kind == "meta":
            self.title = str(event.get("title", self.title))
            self.model = str(event.get("model", self.model))
        elif kind == "deleted":
            self.deleted = True
        elif kind == "opaque":
            self.opaque.append(event.get("record") or {})
        if at and _later(str(at), self.updated_at):
            self.updated_at = str(at)  # the latest time seen: never before createdAt

    def _load_message(self, raw: Any) -> Message | None:
        try:
            return Message.model_validate(raw)
        except ValidationError as exc:
            self.load_problems.append(f"skipped an unreadable message record: {exc.errors()[0]}")
            return None

    def _add_to_view(self, message: Message) -> None:
        self.messages[message.id] = message
        if message.anchors_usage:
            self._prefix_marks[message.id] = self._running.hexdigest()
        self.view.append(message.id)
        self._running.update(message.id.encode() + b"\0")

    def _apply_boundary(self, event: Event) -> None:
        try:
            boundary = Boundary.model_validate(event.get("boundary"))
        except ValidationError as exc:
            self.load_problems.append(f"skipped an unreadable boundary record: {exc.errors()[0]}")
            return
        for message in boundary.new_messages:
            if message.kind != "message":  # a summary or attachment names its compaction
                message.boundary_id = boundary.id
            self.messages[message.id] = message
        self.boundaries[boundary.id] = boundary
        self.active.append(boundary.id)
        self._set_view(view_after_commit(boundary, self.view))

    def _apply_uncompact(self, boundary_id: str) -> None:
        boundary = self.boundaries.get(boundary_id)
        if boundary is None or boundary_id not in self.active:
            self.load_problems.append(f"skipped an undo of unknown compaction {boundary_id}")
            return
        self.active.remove(boundary_id)
        mapping = {
            mid: boundary.stands_for.get(mid, []) for mid in (m.id for m in boundary.new_messages)
        }
        for other_id in self.active:
            other = self.boundaries[other_id]
            other.stands_for = {k: expand(v, mapping) for k, v in other.stands_for.items()}
        self._set_view(expand(self.view, mapping))

    def _set_view(self, view: list[str]) -> None:
        self.view = view
        self._running = hashlib.blake2b(digest_size=16)
        for mid in view:
            self._running.update(mid.encode() + b"\0")

    def _view_fingerprints(self) -> list[str]:
        running = hashlib.blake2b(digest_size=16)
        marks: list[str] = []
        for mid in self.view:
            marks.append(running.hexdigest())
            running.update(mid.encode() + b"\0")
        return marks

    # ---- helpers -------------------------------------------------------------------------

    def _to_message(self, item: MessageInput | Message) -> Message:
        if isinstance(item, Message):
            return item
        blocks = item.blocks()
        problems = block_problems(item.role, blocks)
        if problems:
            raise InvalidParams(f"invalid {item.role} message: " + "; ".join(problems[:5]))
        return Message(
            id=item.id or new_id(),
            role=item.role,
            content=blocks,
            api_message_id=item.api_message_id,
            usage=item.usage,
        )


def _later(stamp: str, than: str) -> bool:
    """Whether ISO time `stamp` is after `than` (an unreadable `than` always loses)."""
    before, after = _instant(than), _instant(stamp)
    if before is None:
        return True
    return after is not None and after > before


def _instant(stamp: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
