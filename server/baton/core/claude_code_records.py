"""How Claude Code records become Baton messages, compaction boundaries and opaque events."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from baton.core.boundary import Boundary
from baton.core.messages import (
    ApiUsage,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    invariant_violations,
    now_iso,
    unanswered_tool_uses,
)
from baton.core.session import INTERRUPTED
from baton.core.store import SESSION_ID
from baton.core.transcript import Event

CONTINUED_PREFIX = "This session is being continued from a previous conversation"
SUMMARIZER = "claude-code"
_BLOCK: TypeAdapter[ContentBlock] = TypeAdapter(ContentBlock)
Record = dict[str, Any]


@dataclass
class ImportReport:
    """What an import found in the file and what it made of it."""

    source: str
    records: int = 0  # JSON objects read
    kinds: Counter[str] = field(default_factory=Counter)  # `type` or `type/subtype`
    messages: int = 0  # messages built from records (summaries included, repairs not)
    merged_records: int = 0  # assistant records folded into the previous record's message
    tool_pairs: int = 0  # tool_use blocks answered by a tool_result
    opaque: int = 0
    sidechain: int = 0
    empty: int = 0  # conversation records with no content (kept as opaque)
    unsupported_blocks: int = 0
    broken_lines: list[int] = field(default_factory=list)
    boundaries: int = 0
    session_ids: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # invariant breaks the source had

    def notes(self) -> list[str]:
        out: list[str] = []
        if len(self.session_ids) > 1:
            out.append(f"{len(self.session_ids)} Claude Code session ids joined in one session")
        if self.broken_lines:
            out.append(f"skipped {len(self.broken_lines)} unreadable line(s)")
        if self.empty:
            out.append(f"{self.empty} record(s) without content kept as opaque")
        if self.unsupported_blocks:
            out.append(f"{self.unsupported_blocks} unsupported block(s) replaced by a marker")
        return out + self.repairs + self.problems

    def wire(self) -> dict[str, Any]:
        """JSON-ready, camelCase keys (as the rest of the wire)."""
        out = {to_camel(k): v for k, v in asdict(self).items()}
        out["kinds"] = dict(self.kinds)  # asdict would rebuild the Counter from pairs
        return out


class RecordConverter:
    """Turns records, in file order, into transcript events (`finish()` returns them)."""

    def __init__(self, report: ImportReport, count: Callable[[Message], int]) -> None:
        self.report = report
        self.count = count
        self.entries: list[Message | Boundary | Record] = []
        self.view: list[Message] = []
        self.ids: set[str] = set()
        self.last: Message | None = None  # the message a following record may extend
        self.boundary: Record | None = None  # a compact_boundary awaiting its summary
        self.all_messages: list[Message] = []

    def add(self, record: Record) -> None:
        kind = str(record.get("type"))
        subtype = record.get("subtype")
        self.report.kinds[f"{kind}/{subtype}" if subtype else kind] += 1
        sid = record.get("sessionId")
        if isinstance(sid, str) and sid not in self.report.session_ids:
            self.report.session_ids.append(sid)
        if record.get("isSidechain"):
            self.report.sidechain += 1  # a subagent's own conversation
            return self._opaque(record)
        if kind == "system" and subtype == "compact_boundary":
            self._drop_boundary()
            self.boundary = record
            return None
        message = record.get("message")
        if kind not in ("user", "assistant") or not isinstance(message, dict):
            return self._opaque(record)
        if self.boundary is not None and not (kind == "user" and record.get("isCompactSummary")):
            self._drop_boundary()
        blocks = self._blocks(message.get("content"))
        if not blocks:
            self.report.empty += 1
            return self._opaque(record)
        if kind == "assistant":
            return self._assistant(record, message, blocks)
        return self._user(record, blocks)

    def _assistant(self, record: Record, message: Record, blocks: list[ContentBlock]) -> None:
        api_id = message.get("id") if isinstance(message.get("id"), str) else None
        usage = _usage(message.get("usage"))
        stop = message.get("stop_reason")
        last = self.last
        if (
            last is not None
            and last.role == "assistant"
            and api_id
            and last.api_message_id == api_id
        ):
            # one API response written as several records: the later records carry the
            # response's final usage and stop reason
            last.content.extend(blocks)
            last.usage = usage or last.usage
            last.stop_reason = stop or last.stop_reason
            self.report.merged_records += 1
            return
        model = message.get("model")
        self._append(
            Message(
                id=self._id(record),
                role="assistant",
                content=blocks,
                created_at=_time(record),
                api_message_id=api_id,
                usage=usage,
                model=model if isinstance(model, str) else None,
                stop_reason=stop if isinstance(stop, str) else None,
            )
        )

    def _user(self, record: Record, blocks: list[ContentBlock]) -> None:
        message = Message(
            id=self._id(record), role="user", content=blocks, created_at=_time(record)
        )
        first = not self.all_messages
        if record.get("isCompactSummary") or (
            first and message.text().startswith(CONTINUED_PREFIX)
        ):
            message.kind = "summary"
        if self.boundary is not None:
            self._commit_boundary(self.boundary, message)
            return
        if not message.is_tool_result_only:
            self._repair(message)
        self._append(message)

    def _commit_boundary(self, record: Record, summary: Message) -> None:
        """Claude Code's compaction becomes a Baton one: the summary stands for the view."""
        self.boundary = None
        summary.kind = "summary"
        summary.tokens = self.count(summary)
        meta = record.get("compactMetadata") or {}
        before = [m.id for m in self.view]
        trigger = meta.get("trigger") if meta.get("trigger") in ("manual", "auto") else "manual"
        pre = meta.get("preTokens")
        self.entries.append(
            Boundary(
                trigger=trigger,
                created_at=_time(record),
                summarizer=SUMMARIZER,
                pre_tokens=pre if isinstance(pre, int) else 0,
                post_tokens=summary.tokens,
                summary_id=summary.id,
                new_messages=[summary],
                stands_for={summary.id: before},
                summarized_ids=before,
                view_before=before,
                view_after=[summary.id],
                extra={"record": record},
            )
        )
        self.report.boundaries += 1
        self.report.messages += 1
        self.all_messages.append(summary)
        self.view = [summary]
        self.last = summary

    def _repair(self, prompt: Message) -> None:
        """A prompt while tool calls are open: answer them first, as Session.append does."""
        answered = {r.tool_use_id for r in prompt.tool_results()}
        missing = [u for u in unanswered_tool_uses(self.view) if u.id not in answered]
        if not missing:
            return
        results: list[ContentBlock] = [
            ToolResultBlock(tool_use_id=u.id, content=INTERRUPTED, is_error=True) for u in missing
        ]
        repair = Message(id=self._id({}), role="user", content=results)
        repair.created_at = prompt.created_at
        self.report.repairs.append(
            f"answered unanswered tool call(s) {', '.join(u.id for u in missing)} "
            f"with '{INTERRUPTED}' before message {prompt.id}"
        )
        self.entries.append(repair)
        self.view.append(repair)

    def _append(self, message: Message) -> None:
        self.entries.append(message)
        self.view.append(message)
        self.all_messages.append(message)
        self.last = message
        self.report.messages += 1

    def _opaque(self, record: Record) -> None:
        self.entries.append(record)
        self.report.opaque += 1

    def _drop_boundary(self) -> None:
        """A compact_boundary whose summary record never came stays an opaque record."""
        if self.boundary is not None:
            self.report.problems.append("a compact_boundary without its summary was kept as opaque")
            self._opaque(self.boundary)
            self.boundary = None

    def finish(self) -> list[Event]:
        self._drop_boundary()
        self.report.problems.extend(invariant_violations(self.view))
        uses = {u.id for m in self.all_messages for u in m.tool_uses()}
        self.report.tool_pairs = len(
            uses & {r.tool_use_id for m in self.all_messages for r in m.tool_results()}
        )
        events: list[Event] = []
        for entry in self.entries:
            if isinstance(entry, Message):
                entry.tokens = self.count(entry)
                events.append({"type": "message", "message": entry.wire()})
            elif isinstance(entry, Boundary):
                events.append({"type": "boundary", "boundary": entry.wire()})
            else:
                events.append({"type": "opaque", "record": entry})
        return events

    def _blocks(self, content: Any) -> list[ContentBlock]:
        if isinstance(content, str):
            return [TextBlock(text=content)] if content.strip() else []
        if not isinstance(content, list):
            return []
        blocks: list[ContentBlock] = []
        for raw in content:
            try:
                blocks.append(_BLOCK.validate_python(raw))
            except ValidationError:
                kind = raw.get("type") if isinstance(raw, dict) else type(raw).__name__
                blocks.append(TextBlock(text=f"[unsupported block: {kind}]"))
                self.report.unsupported_blocks += 1
        return blocks

    def _id(self, record: Record) -> str:
        """The record's uuid when it is a safe, unused id; otherwise one derived from it."""
        uuid = record.get("uuid")
        if isinstance(uuid, str) and SESSION_ID.match(uuid) and uuid not in self.ids:
            self.ids.add(uuid)
            return uuid
        seed = f"{uuid}:{len(self.entries)}".encode()
        candidate = "cc_" + hashlib.blake2b(seed, digest_size=8).hexdigest()
        while candidate in self.ids:
            candidate = "cc_" + hashlib.blake2b(candidate.encode(), digest_size=8).hexdigest()
        self.ids.add(candidate)
        return candidate


def _usage(raw: Any) -> ApiUsage | None:
    if not isinstance(raw, dict):
        return None
    try:
        return ApiUsage.model_validate(
            {k: v for k in ApiUsage.model_fields if isinstance(v := raw.get(k), int)}
        )
    except ValidationError:
        return None


def _time(record: Record) -> str:
    stamp = record.get("timestamp")
    return stamp if isinstance(stamp, str) and stamp else now_iso()
