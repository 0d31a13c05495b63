"""How Claude Code records become Baton messages and opaque events.

Compactions, microcompactions and edited prompts become boundaries in
claude_code_boundaries.py, which `RecordConverter` builds on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from baton.core.conversation.media import images_as_taken
from baton.core.conversation.messages import (
    CONTENT_ADAPTER,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
)
from baton.core.importers.claude_code_boundaries import ImportedBoundaries
from baton.core.importers.claude_code_chain import RepeatedRecords
from baton.core.importers.claude_code_models import message as _message
from baton.core.importers.claude_code_models import usage as _usage
from baton.core.importers.claude_code_read import Reading
from baton.core.importers.claude_code_repairs import (
    BLOCK_ADAPTER,
    Record,
    in_uuids,
    record_time,
    record_uuid,
    sent_as_user,
)

if TYPE_CHECKING:
    from baton.core.importers.claude_code_report import ImportReport

CONTINUED_PREFIX = "This session is being continued from a previous conversation"


class RecordConverter(ImportedBoundaries):
    """Turns records, in file order, into `entries`: messages, boundaries, opaque records.

    The view it builds passes `invariant_violations()`: what the file breaks (results of
    lost or sidechain tool calls, repeated call ids, a response split by other messages, a
    conversation that starts with the assistant) is repaired in the imported copy, never
    in the file, and every repair is listed in the report's `repairs`.
    """

    def __init__(
        self,
        report: ImportReport,
        count: Callable[[Message], int],
        beside: frozenset[str] = frozenset(),
        reading: Reading | None = None,
    ) -> None:
        super().__init__(report, count)
        self.session_ids: set[str] = set()
        self.old_style = False  # a summary record with no compact_boundary was seen
        # the repeats' fingerprints taken from the lines of `reading`'s file, read again
        self.repeats = RepeatedRecords(reading, lambda again: said(again, str(again.get("type"))))
        self.beside = beside  # the uuids of another conversation written at the same time

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
        if self.beside and in_uuids(record, self.beside):
            self.report.beside += 1  # not the conversation Claude Code resumes
            return self._opaque(record)
        if kind == "system" or kind == "attachment":  # only such a record may be sent as
            kind, message = said(record, kind)  # a user's: `said`, for the few records it is
        else:
            message = record.get("message")
        if self.repeats.seen(record, kind, subtype, message):
            self.report.repeated += 1  # the same message to Claude Code, which reads by uuid
            return self._opaque(record)
        if kind == "system" and subtype == "microcompact_boundary":
            return self._microcompact(record)
        if kind == "system" and subtype == "compact_boundary":
            self._drop_boundary()
            self.boundary = record
            return None
        if kind not in ("user", "assistant") or not isinstance(message, dict):
            return self._opaque(record)
        if kind == "assistant" and _api_error(record, message):
            self.report.api_errors += 1  # Claude Code never sends it back to the model
            return self._opaque(record)
        if self.boundary is not None and not (kind == "user" and record.get("isCompactSummary")):
            self._drop_boundary()
        blocks, changed = images_as_taken(self._blocks(message.get("content")))
        for change in changed:  # the API refuses such an image in every request
            self.report.repairs.append(f"record {record_uuid(record)}: {change}")
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
            if usage is not None:  # else it stays (an assignment costs a microsecond)
                last.usage = usage
            if isinstance(stop, str) and stop:
                last.stop_reason = stop
            self.report.merged_records += 1
            return
        uid = self._id(record)
        own_id = api_id
        if api_id is None or api_id != self.turn_api_id:
            # a new response: calls of the one before get no result any more (the API wants
            # them right after it), and stray results waiting as text can go in now
            if self.open_uses:  # (what they are answered before: made only then)
                self._answer_open(f"message {uid}", record_time(record))
            self._flush_notes()
            if not self.view:
                self._open(uid, record_time(record))
            if api_id in self.api_ids:
                own_id = None  # the API would take the two parts for one response
                self.report.repairs.append(
                    f"record {record_uuid(record)}: API message {api_id} continues after other "
                    "messages; imported as a response of its own, without that id"
                )
        model = message.get("model")
        self._append(
            _message(
                id=uid,
                role="assistant",
                content=self._calls(record, uid, blocks),
                created_at=record_time(record),
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
        summary = bool(record.get("isCompactSummary")) or (
            (first or root) and _text(blocks).startswith(CONTINUED_PREFIX)
        )
        if self.boundary is not None:
            # close what the summary replaces, so that undoing the compaction is valid too
            self._answer_open(f"compact_boundary {record_uuid(self.boundary)}", record_time(record))
            self._flush_notes()
            if not self.view:  # the boundary replaces nothing of this file
                self.report.repairs.append(
                    f"compact_boundary {record_uuid(self.boundary)}: nothing before it in "
                    "this file; kept as opaque, its summary starts the conversation"
                )
                self._opaque(self.boundary)
                self.boundary = None
        prompt = summary or _not_results_only(blocks)
        if not prompt:
            return self._results_record(record, blocks)
        # a prompt the user wrote (a slash command's system record, a queued one, are none)
        typed = not summary and not record.get("isMeta") and record.get("type") == "user"
        if typed and not (root and self.old_style):
            self._leave_branch(record)
        if self.boundary is None and self.view and (summary or (root and self.old_style)):
            # Claude Code before compact_boundary: a summary (or, after one, any prompt
            # without a parent) starts the model's context again; what came before is
            # no more than the API saw if a compaction stands for it
            self._answer_open(f"message {record_uuid(record)}", record_time(record))
            self._flush_notes()
            if not summary:
                self._restart(record)
        self.old_style = self.old_style or (summary and self.boundary is None)
        content = self._answers(record, blocks, None)  # a prompt ends the turn: text in place
        message = _message(
            id=self._id(record), role="user", content=content, created_at=record_time(record)
        )
        if summary:
            message.kind = "summary"
        if self.boundary is not None:
            self._commit_boundary(self.boundary, message)
            return
        if summary and self.view:
            self._commit_boundary(None, message)
            return
        if self.open_uses:
            self._answer_open(f"message {message.id}", message.created_at)
        self._append(message)
        if typed:
            self.branches.add(record, message.id)
        self._flush_notes()

    def _results_record(self, record: Record, blocks: list[ContentBlock]) -> None:
        """A record of tool results only; those answering no open call wait as notes."""
        if not self.notes:
            self.notes_from, self.notes_at = record, record_time(record)
        results = self._answers(record, blocks, self.notes)
        if results:
            message = _message(
                id=self._id(record), role="user", content=results, created_at=record_time(record)
            )
            self._append(message)
        elif self.open_uses:
            self.report.repairs.append(
                f"record {record_uuid(record)}: left without content and dropped; its tool results "
                "follow as text after the results of the response's other calls"
            )

    def finish(self) -> None:
        """After the last record: what still waits goes in (`entries` is then complete)."""
        self._drop_boundary()
        self._flush_notes()

    def _blocks(self, content: Any) -> list[ContentBlock]:
        if isinstance(content, str):
            return [TextBlock(text=content)] if content.strip() else []
        if not isinstance(content, list):
            return []
        try:  # one call for the whole list; a block it refuses is looked at on its own
            valid: list[ContentBlock] = _CONTENT(content)
            return valid
        except ValidationError:
            pass
        blocks: list[ContentBlock] = []
        for raw in content:
            try:
                blocks.append(BLOCK_ADAPTER.validate_python(raw))
            except ValidationError:
                kind = raw.get("type") if isinstance(raw, dict) else type(raw).__name__
                blocks.append(TextBlock(text=f"[unsupported block: {kind}]"))
                self.report.unsupported_blocks += 1
        return blocks


def said(record: Record, kind: str) -> tuple[str, object]:
    """The kind (`kind`: its type, as text) and message of a record as the import reads
    it: a record of another kind that Claude Code sends as a user's is a user message."""
    message = record.get("message")
    # only a system or an attachment record can be one (most records are neither)
    sent = sent_as_user(record) if kind == "system" or kind == "attachment" else None
    if sent is not None:
        return "user", {"role": "user", "content": sent}
    return kind, message


def _not_results_only(blocks: list[ContentBlock]) -> bool:
    """Whether a block is not a tool result (a loop: any() over a generator costs more)."""
    other = False
    for block in blocks:
        if not isinstance(block, ToolResultBlock):
            other = True
            break
    return other


def _text(blocks: list[ContentBlock]) -> str:
    return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))


# the validator itself: TypeAdapter.validate_python's Python wrapper costs more than most
# validations it hands on
_CONTENT = CONTENT_ADAPTER.validator.validate_python


def _api_error(record: Record, message: Record) -> bool:
    """Whether an assistant record is the reply Claude Code wrote itself for a request that
    failed ('API Error: ...'): shown in its transcript, but left out of every request it
    sends (`isApiErrorMessage` on a `<synthetic>` reply; other synthetic replies are sent)."""
    return record.get("isApiErrorMessage") is True and message.get("model") == "<synthetic>"
