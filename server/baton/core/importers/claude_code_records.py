"""How Claude Code records become Baton messages, compaction boundaries and opaque events."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import (
    ApiUsage,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    now_iso,
)
from baton.core.importers.claude_code_branches import PromptBranches, edit_rewind
from baton.core.importers.claude_code_chain import (
    SUMMARIZER,
    ClearedResults,
    RepeatedRecords,
    kept_segment,
)
from baton.core.importers.claude_code_repairs import (
    BLOCK_ADAPTER,
    ImportedView,
    Record,
    record_uuid,
)

if TYPE_CHECKING:
    from baton.core.importers.claude_code import ImportReport

CONTINUED_PREFIX = "This session is being continued from a previous conversation"
RESTARTED = (
    "[Claude Code started the conversation again here, without what came before: "
    "that part is not in the model's context]"
)


class RecordConverter(ImportedView):
    """Turns records, in file order, into `entries`: messages, boundaries, opaque records.

    The view it builds passes `invariant_violations()`: what the file breaks (results of
    lost or sidechain tool calls, repeated call ids, a response split by other messages, a
    conversation that starts with the assistant) is repaired in the imported copy, never
    in the file, and every repair is listed in the report's `repairs`.
    """

    def __init__(self, report: ImportReport, count: Callable[[Message], int]) -> None:
        super().__init__(report)
        self.count = count
        self.boundary: Record | None = None  # a compact_boundary awaiting its summary
        self.session_ids: set[str] = set()
        self.old_style = False  # a summary record with no compact_boundary was seen
        self.last_context = 0  # the context of the latest response (its usage's total)
        self.branches = PromptBranches()  # the newest typed prompt under each parent
        self.repeats = RepeatedRecords()
        self.results = ClearedResults()  # the view's tool results, for a microcompaction
        # the message each conversation record of the view went into (a response written as
        # several records is one message): where a compaction's kept segment starts and ends
        self.holder: dict[str, str] = {}

    def add(self, record: Record) -> None:
        kind = str(record.get("type"))
        subtype = record.get("subtype")
        self.report.kinds[f"{kind}/{subtype}" if subtype else kind] += 1
        sid = record.get("sessionId")
        if isinstance(sid, str) and sid not in self.session_ids:
            self.session_ids.add(sid)  # a set beside the report's list: no scan per record
            self.report.session_ids.append(sid)
        if record.get("isSidechain"):
            self.report.sidechain += 1  # a subagent's own conversation
            return self._opaque(record)
        if self.repeats.seen(record, kind, subtype):
            self.report.repeated += 1  # the same message to Claude Code, which reads by uuid
            return self._opaque(record)
        if kind == "system" and subtype == "microcompact_boundary":
            return self._microcompact(record)
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
            self._assistant(record, message, blocks)
        else:
            self._user(record, blocks)
        uuid = record.get("uuid")
        if isinstance(uuid, str) and self.last is not None:
            self.holder[uuid] = self.last.id
        return None

    def _assistant(self, record: Record, message: Record, blocks: list[ContentBlock]) -> None:
        api_id = message.get("id") if isinstance(message.get("id"), str) else None
        usage = _usage(message.get("usage"))
        if usage is not None and message.get("model") != "<synthetic>":
            self.last_context = usage.context_tokens
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
                    f"record {record_uuid(record)}: API message {api_id} continues after other "
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

    def _user(self, record: Record, blocks: list[ContentBlock]) -> None:
        first = self.report.messages == 0
        root = "parentUuid" in record and record["parentUuid"] is None
        text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        summary = bool(record.get("isCompactSummary")) or (
            (first or root) and text.startswith(CONTINUED_PREFIX)
        )
        if self.boundary is not None:
            # close what the summary replaces, so that undoing the compaction is valid too
            self._answer_open(f"compact_boundary {record_uuid(self.boundary)}", _time(record))
            self._flush_notes()
            if not self.view:  # the boundary replaces nothing of this file
                self.report.repairs.append(
                    f"compact_boundary {record_uuid(self.boundary)}: nothing before it in "
                    "this file; kept as opaque, its summary starts the conversation"
                )
                self._opaque(self.boundary)
                self.boundary = None
        prompt = summary or any(not isinstance(b, ToolResultBlock) for b in blocks)
        if not prompt:
            return self._results_record(record, blocks)
        typed = not summary and not record.get("isMeta")  # a prompt the user wrote
        if typed and not (root and self.old_style):
            self._leave_branch(record)
        if self.boundary is None and self.view and (summary or (root and self.old_style)):
            # Claude Code before compact_boundary: a summary (or, after one, any prompt
            # without a parent) starts the model's context again; what came before is
            # no more than the API saw if a compaction stands for it
            self._answer_open(f"message {record_uuid(record)}", _time(record))
            self._flush_notes()
            if not summary:
                self._restart(record)
        self.old_style = self.old_style or (summary and self.boundary is None)
        content = self._answers(record, blocks, None)  # a prompt ends the turn: text in place
        message = Message(
            id=self._id(record), role="user", content=content, created_at=_time(record)
        )
        if summary:
            message.kind = "summary"
        if self.boundary is not None:
            self._commit_boundary(self.boundary, message)
            return
        if summary and self.view:
            self._commit_boundary(None, message)
            return
        self._answer_open(f"message {message.id}", message.created_at)
        self._append(message)
        if typed:
            self.branches.add(record, message.id)
        self._flush_notes()

    def _leave_branch(self, record: Record) -> None:
        """A typed prompt under the parent of an earlier one is an edit of it
        (`claude_code_branches.py`): the view from that prompt on goes out, as a rewind."""
        replaced = self.branches.replaced(record)
        if replaced is None:
            return
        first, earlier = replaced
        if first not in self.view:  # a compaction summarized it since
            self.report.problems.append(
                f"record {record_uuid(record)}: edits prompt {earlier}, which a later "
                "compaction summarized; imported after the turns it replaces"
            )
            return
        at = _time(record)
        self._answer_open(f"message {record_uuid(record)}", at)  # the left branch stays valid
        self._flush_notes()
        boundary = edit_rewind(self.view, first, record, earlier, at)
        self.entries.append(boundary)
        self.view = list(boundary.view_after)
        self.last, self.last_api_id, self.turn_api_id = None, None, None
        self.report.edits += 1

    def _restart(self, record: Record) -> None:
        """A prompt with no parent after an old compaction: what came before is out of the
        model's context, and a note says so, standing for it (undo brings it back)."""
        uuid = record.get("uuid")
        note = Message(
            id=self._id({"uuid": f"restart-{uuid}"} if isinstance(uuid, str) else {}),
            role="user",
            content=[TextBlock(text=RESTARTED)],
            created_at=_time(record),
        )
        self._commit_boundary(None, note, built=False, at=record)

    def _results_record(self, record: Record, blocks: list[ContentBlock]) -> None:
        """A record of tool results only; those answering no open call wait as notes."""
        if not self.notes:
            self.notes_from, self.notes_at = record, _time(record)
        results = self._answers(record, blocks, self.notes)
        if results:
            message = Message(
                id=self._id(record), role="user", content=results, created_at=_time(record)
            )
            self._append(message)
        elif self.open_uses:
            self.report.repairs.append(
                f"record {record_uuid(record)}: left without content and dropped; its tool results "
                "follow as text after the results of the response's other calls"
            )

    def _commit_boundary(
        self,
        record: Record | None,
        summary: Message,
        *,
        built: bool = True,
        at: Record | None = None,
    ) -> None:
        """Claude Code's compaction becomes a Baton one: the summary stands for the view.
        `record` is its compact_boundary (None for a compaction of the time before them,
        whose figure before is then the last response's); `built` when the summary is a
        record's message (a restart's note is the import's own)."""
        self.boundary = None
        summary.kind = "summary"
        summary.tokens = self.count(summary)
        meta = (record or {}).get("compactMetadata") or {}
        before = self.view
        kept = self._kept(record, meta.get("preservedSegment"))
        summarized = before[: len(before) - len(kept)]
        trigger = meta.get("trigger") if meta.get("trigger") in ("manual", "auto") else "manual"
        pre = meta.get("preTokens") if record is not None else self.last_context
        found = {"record": record} if record is not None else {"found": "no compact_boundary"}
        self.entries.append(
            Boundary(
                trigger=trigger,
                direction="up_to" if kept else "all",
                created_at=_time(record or at or {"timestamp": summary.created_at}),
                summarizer=SUMMARIZER,
                pre_tokens=pre if isinstance(pre, int) else 0,
                post_tokens=summary.tokens,  # kept messages are counted with the view
                summary_id=summary.id,
                new_messages=[summary],
                stands_for={summary.id: summarized},
                summarized_ids=summarized,
                kept_ids=kept,
                view_before=before,
                view_after=[summary.id, *kept],
                extra=found,
            )
        )
        self.report.boundaries += 1
        self.report.messages += int(built)
        self.view = [summary.id, *kept]
        self.holder = {uuid: mid for uuid, mid in self.holder.items() if mid in kept}
        self.last, self.last_api_id, self.turn_api_id = summary, None, None

    def _kept(self, record: Record | None, segment: object) -> list[str]:
        """The messages a Claude Code compaction kept (`kept_segment`); the whole view is
        summarized, with a note, when its segment names no run that ends the view."""
        kept = kept_segment(self.holder, self.view, segment) if record is not None else []
        if kept is not None:
            return kept
        assert record is not None
        self.report.problems.append(
            f"compact_boundary {record_uuid(record)}: its kept messages are not the end of "
            "the view; imported as a compaction of the whole view"
        )
        return []

    def _microcompact(self, record: Record) -> None:
        """Claude Code cleared old tool results before a request (the file keeps them in
        full): the view clears them too, so that it holds what the API saw next."""
        self._flush_notes()
        boundary, notes = self.results.boundary(
            record, self.view, self.entries, lambda: self._id({}), self.count
        )
        where = f"microcompact_boundary {record_uuid(record)}"
        self.report.problems.extend(f"{where}: {note}" for note in notes)
        if boundary is None:
            return self._opaque(record)
        self.entries.append(boundary)
        self.view = list(boundary.view_after)
        self.report.boundaries += 1
        return None

    def _put(self, message: Message) -> None:
        super()._put(message)
        self.results.add(message)

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
                blocks.append(BLOCK_ADAPTER.validate_python(raw))
            except ValidationError:
                kind = raw.get("type") if isinstance(raw, dict) else type(raw).__name__
                blocks.append(TextBlock(text=f"[unsupported block: {kind}]"))
                self.report.unsupported_blocks += 1
        return blocks


_USAGE_FIELDS = tuple(ApiUsage.model_fields)


def _usage(raw: Any) -> ApiUsage | None:
    if not isinstance(raw, dict):
        return None
    try:
        return ApiUsage.model_validate(
            {k: v for k in _USAGE_FIELDS if isinstance(v := raw.get(k), int)}
        )
    except ValidationError:
        return None


def _time(record: Record) -> str:
    stamp = record.get("timestamp")
    return stamp if isinstance(stamp, str) and stamp else now_iso()
