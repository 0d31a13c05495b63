"""How Claude Code records become Baton messages, compaction boundaries and opaque events."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from baton.core.boundary import Boundary
from baton.core.messages import (
    ApiUsage,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    now_iso,
)
from baton.core.session import INTERRUPTED
from baton.core.store import SESSION_ID

if TYPE_CHECKING:
    from baton.core.claude_code import ImportReport

CONTINUED_PREFIX = "This session is being continued from a previous conversation"
SUMMARIZER = "claude-code"
MISSING_START = "[the beginning of this conversation is not in the imported file]"
_BLOCK: TypeAdapter[ContentBlock] = TypeAdapter(ContentBlock)
Record = dict[str, Any]


class RecordConverter:
    """Turns records, in file order, into `entries`: messages, boundaries, opaque records.

    The view it builds passes `invariant_violations()`: what the file breaks (results of
    lost or sidechain tool calls, repeated call ids, a response split by other messages, a
    conversation that starts with the assistant) is repaired in the imported copy, never
    in the file, and every repair is listed in the report's `repairs`.
    """

    def __init__(self, report: ImportReport, count: Callable[[Message], int]) -> None:
        self.report = report
        self.count = count
        self.entries: list[Message | Boundary | Record] = []
        self.view: list[Message] = []
        self.ids: set[str] = set()
        self.last: Message | None = None  # the message a following record may extend
        self.last_api_id: str | None = None  # the file's API id of `last`
        self.boundary: Record | None = None  # a compact_boundary awaiting its summary
        self.all_messages: list[Message] = []
        # the API rules' state as the view grows (checking the whole view per record
        # would make the import quadratic)
        self.open_uses: dict[str, str] = {}  # the latest response's unanswered calls -> owner
        self.use_ids: set[str] = set()  # every tool_use id kept, across boundaries
        self.api_ids: set[str] = set()
        self.turn_api_id: str | None = None  # API id of the latest response since a prompt
        # stray tool results, as text, waiting for the response's other calls to be answered
        # (a text message before those results would end the turn)
        self.notes: list[ContentBlock] = []
        self.notes_from: Record = {}
        self.notes_at = ""

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
        if last is not None and last.role == "assistant" and api_id and self.last_api_id == api_id:
            # one API response written as several records: the later records carry the
            # response's final usage and stop reason
            last.content.extend(self._calls(record, last.id, blocks))
            last.usage = usage or last.usage
            last.stop_reason = stop or last.stop_reason
            self.report.merged_records += 1
            return
        uid = self._id(record)
        own_id = api_id
        if api_id is None or api_id != self.turn_api_id:
            # a new response: calls of the one before get no result any more (the API wants
            # them right after it), and stray results waiting as text can go in now
            self._answer_open(f"message {uid}", _time(record))
            self._flush_notes()
            if not self.view:
                self._open(uid, _time(record))
            if api_id in self.api_ids:
                own_id = None  # the API would take the two parts for one response
                self.report.repairs.append(
                    f"record {_uuid(record)}: API message {api_id} continues after other "
                    "messages; imported as a response of its own, without that id"
                )
        model = message.get("model")
        self._append(
            Message(
                id=uid,
                role="assistant",
                content=self._calls(record, uid, blocks),
                created_at=_time(record),
                api_message_id=own_id,
                usage=usage,
                model=model if isinstance(model, str) else None,
                stop_reason=stop if isinstance(stop, str) else None,
            )
        )
        self.last_api_id = api_id

    def _calls(self, record: Record, owner: str, blocks: list[ContentBlock]) -> list[ContentBlock]:
        """Opens the blocks' tool calls; a call reusing an earlier call's id becomes text."""
        out: list[ContentBlock] = []
        for block in blocks:
            if isinstance(block, ToolUseBlock):
                if block.id in self.use_ids:
                    call = json.dumps(block.input, ensure_ascii=False)
                    out.append(
                        TextBlock(text=f"[repeated tool call {block.id} {block.name}]: {call}")
                    )
                    self.report.repairs.append(
                        f"record {_uuid(record)}: tool_use {block.id} repeats an earlier "
                        "call's id; kept as text"
                    )
                    continue
                self.use_ids.add(block.id)
                self.open_uses[block.id] = owner
            out.append(block)
        return out

    def _user(self, record: Record, blocks: list[ContentBlock]) -> None:
        first = not self.all_messages
        text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        summary = bool(record.get("isCompactSummary")) or (
            first and text.startswith(CONTINUED_PREFIX)
        )
        if self.boundary is not None:
            # close what the summary replaces, so that undoing the compaction is valid too
            self._answer_open(f"compact_boundary {_uuid(self.boundary)}", _time(record))
            self._flush_notes()
            if not self.view:  # the boundary replaces nothing of this file
                self.report.repairs.append(
                    f"compact_boundary {_uuid(self.boundary)}: nothing before it in this file; "
                    "kept as opaque, its summary starts the conversation"
                )
                self._opaque(self.boundary)
                self.boundary = None
        prompt = summary or any(not isinstance(b, ToolResultBlock) for b in blocks)
        if not prompt:
            return self._results_record(record, blocks)
        content = self._answers(record, blocks, None)  # a prompt ends the turn: text in place
        message = Message(id=self._id(record), role="user", content=content)
        message.created_at = _time(record)
        if summary:
            message.kind = "summary"
        if self.boundary is not None:
            self._commit_boundary(self.boundary, message)
            return
        self._answer_open(f"message {message.id}", message.created_at)
        self._append(message)
        self._flush_notes()

    def _results_record(self, record: Record, blocks: list[ContentBlock]) -> None:
        """A record of tool results only; those answering no open call wait as notes."""
        if not self.notes:
            self.notes_from, self.notes_at = record, _time(record)
        results = self._answers(record, blocks, self.notes)
        if results:
            self._append(Message(id=self._id(record), role="user", content=results))
            self.view[-1].created_at = _time(record)
        elif self.open_uses:
            self.report.repairs.append(
                f"record {_uuid(record)}: left without content and dropped; its tool results "
                "follow as text after the results of the response's other calls"
            )

    def _answers(
        self, record: Record, blocks: list[ContentBlock], notes: list[ContentBlock] | None
    ) -> list[ContentBlock]:
        """The blocks, with each tool_result that answers no open call turned into text,
        in place, or moved to `notes` when given."""
        out: list[ContentBlock] = []
        for block in blocks:
            if not isinstance(block, ToolResultBlock) or self.open_uses.pop(block.tool_use_id, ""):
                out.append(block)
                continue
            (out if notes is None else notes).extend(_as_text(block))
            self.report.repairs.append(
                f"record {_uuid(record)}: tool_result {block.tool_use_id} answers no tool "
                "call of the preceding assistant turn; kept as text"
            )
        return out

    def _flush_notes(self) -> None:
        """The waiting notes as a user message (open calls, if any, are answered first)."""
        if not self.notes:
            return
        note = Message(id=self._id(self.notes_from), role="user", content=self.notes)
        note.created_at = self.notes_at
        self.notes = []
        self._answer_open(f"message {note.id}", note.created_at)
        self._append(note)

    def _answer_open(self, before: str, at: str) -> None:
        """Tool calls still open when a prompt or a new response comes get an error result
        (as Session.append does): their real results, if any, are not where the API wants them."""
        if not self.open_uses:
            return
        missing = list(self.open_uses)
        results: list[ContentBlock] = [
            ToolResultBlock(tool_use_id=u, content=INTERRUPTED, is_error=True) for u in missing
        ]
        repair = Message(id=self._id({}), role="user", content=results, created_at=at)
        self.report.repairs.append(
            f"answered unanswered tool call(s) {', '.join(missing)} "
            f"with '{INTERRUPTED}' before {before}"
        )
        self._put(repair)
        self.open_uses.clear()

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
        self.last, self.last_api_id, self.turn_api_id = summary, None, None

    def _append(self, message: Message) -> None:
        """A message built from records (counted in the report)."""
        self._put(message)
        self.all_messages.append(message)
        self.last, self.last_api_id = message, None
        self.report.messages += 1

    def _open(self, first: str, at: str) -> None:
        """The API wants a user message first: one saying the start is not in the file."""
        opening = Message(id=self._id({}), role="user", content=[TextBlock(text=MISSING_START)])
        opening.created_at = at
        self.report.repairs.append(
            f"message {first}: the conversation starts with an assistant message; "
            "a user message saying its beginning is missing was put before it"
        )
        self._put(opening)

    def _put(self, message: Message) -> None:
        """Into the entries and the view, keeping the API rules' state current."""
        self.entries.append(message)
        self.view.append(message)
        if message.role == "assistant":
            self.turn_api_id = message.api_message_id
            if message.api_message_id is not None:
                self.api_ids.add(message.api_message_id)
        elif not message.is_tool_result_only:
            self.open_uses.clear()  # a prompt ends the turn
            self.turn_api_id = None

    def _opaque(self, record: Record) -> None:
        self.entries.append(record)
        self.report.opaque += 1

    def _drop_boundary(self) -> None:
        """A compact_boundary whose summary record never came stays an opaque record."""
        if self.boundary is not None:
            self.report.problems.append("a compact_boundary without its summary was kept as opaque")
            self._opaque(self.boundary)
            self.boundary = None

    def finish(self) -> None:
        """After the last record: what still waits goes in (`entries` is then complete)."""
        self._drop_boundary()
        self._flush_notes()

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


def _as_text(result: ToolResultBlock) -> list[ContentBlock]:
    """A tool result with no call to answer, as a text block (whole: nothing is lost);
    images and documents it carried stay blocks of their own."""
    head = f"[tool result for {result.tool_use_id} whose call is not in this conversation"
    head += ", an error]" if result.is_error else "]"
    content = result.content
    if isinstance(content, str):
        return [TextBlock(text=f"{head}: {content}" if content else head)]
    texts: list[str] = []
    media: list[ContentBlock] = []
    for item in content or []:
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            texts.append(item["text"])
            continue
        try:
            block = _BLOCK.validate_python(item)
        except ValidationError:
            block = None
        if block is not None and block.type in ("image", "document"):
            media.append(block)
        else:
            texts.append(json.dumps(item, ensure_ascii=False))
    text = "\n".join(texts)
    return [TextBlock(text=f"{head}: {text}" if text else head), *media]


def _uuid(record: Record) -> str:
    return str(record.get("uuid") or "without uuid")


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
