"""Claude Code's compactions, microcompactions and edited prompts as imported boundaries."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message, TextBlock
from baton.core.importers.claude_code_branches import PromptBranches, edit_rewind
from baton.core.importers.claude_code_chain import SUMMARIZER, ClearedResults, kept_segment
from baton.core.importers.claude_code_repairs import ImportedView, Record, record_time, record_uuid

if TYPE_CHECKING:
    from baton.core.importers.claude_code_report import ImportReport

RESTARTED = (
    "[Claude Code started the conversation again here, without what came before: "
    "that part is not in the model's context]"
)


class ImportedBoundaries(ImportedView):
    """The imported view's boundaries: a compact_boundary with its summary (or an old
    summary, or a restart) becomes a compaction, a microcompact_boundary a microcompaction,
    an edited prompt a rewind. `RecordConverter` (claude_code_records.py) builds on it."""

    def __init__(self, report: ImportReport, count: Callable[[Message], int]) -> None:
        super().__init__(report)
        self.count = count
        self.boundary: Record | None = None  # a compact_boundary awaiting its summary
        self.last_context = 0  # the context of the latest response (its usage's total)
        self.branches = PromptBranches()  # the newest typed prompt under each parent
        self.results = ClearedResults()  # the view's tool results, for a microcompaction
        # the message each conversation record of the view went into (a response written as
        # several records is one message): where a compaction's kept segment starts and ends
        self.holder: dict[str, str] = {}

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
        at = record_time(record)
        self._answer_open(f"message {record_uuid(record)}", at)  # the left branch stays valid
        self._flush_notes()
        other = self.branches.another_conversation(record)
        found = "another conversation" if other else "edited prompt"
        boundary = edit_rewind(self.view, first, record, earlier, at, found)
        self.entries.append(boundary)
        self.view = list(boundary.view_after)
        self.last, self.last_api_id, self.turn_api_id = None, None, None
        if not other:
            self.report.edits += 1
            return
        self.report.conversations.append(
            f"record {record_uuid(record)} starts another conversation (session "
            f"{record.get('sessionId')}, no parent): the turns before it are out of the view, "
            "as a rewind (undo brings them back)"
        )

    def _restart(self, record: Record) -> None:
        """A prompt with no parent after an old compaction: what came before is out of the
        model's context, and a note says so, standing for it (undo brings it back)."""
        uuid = record.get("uuid")
        note = Message(
            id=self._id({"uuid": f"restart-{uuid}"} if isinstance(uuid, str) else {}),
            role="user",
            content=[TextBlock(text=RESTARTED)],
            created_at=record_time(record),
        )
        self._commit_boundary(None, note, built=False, at=record)

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
        meta = (record or {}).get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}  # a damaged record's string or list
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
                created_at=record_time(record or at or {"timestamp": summary.created_at}),
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
