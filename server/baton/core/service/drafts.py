"""Compaction drafts for every front end: preview (write and measure a compaction without
committing it), apply (as written or edited), regenerate, discard (`core/compaction/preview`,
their record `core/compaction/draft_record`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from baton.core.compaction import draft_record, engine, preview
from baton.core.compaction.draft_file import draft_beside
from baton.core.compaction.draft_record import CompactDraft
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.summary.summarizers import Progress
from baton.core.conversation.folders import remove_beside
from baton.core.conversation.transcript import check_writable
from baton.core.errors import CompactionInProgress, InvalidParams, StorageError

if TYPE_CHECKING:
    from baton.core.service.service import BatonService

log = logging.getLogger(__name__)

MAX_SUMMARY_CHARS = 2_000_000  # an edited summary past this is refused (`invalid_params`)
HOOK_TOO_LATE = (
    "the PreCompact hook's instructions were not applied: the draft's summary was written "
    "before it ran (preview again to have them)"
)


def restore_changed(draft: CompactDraft, result: CompactResult) -> list[str]:
    """A warning when the commit restored other files than the draft said (a file edited or
    closed in between: the restore reads the editor at the commit), with the figures."""
    then = {f.uri: f.tokens for f in draft.restored_files}
    now = {f.uri: f.tokens for f in result.restored_files}
    if then == now:
        return []
    uris = [*then, *(uri for uri in now if uri not in then)]
    changes = [_change(uri, then.get(uri), now.get(uri)) for uri in uris]
    said = "; ".join(change for change in changes if change)
    return [
        f"the restored files changed since the draft was made ({said}): "
        f"postTokens is {result.post_tokens:,}, not the draft's {draft.post_tokens:,}"
    ]


def _change(uri: str, then: int | None, now: int | None) -> str:
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    if then == now:
        return ""
    if now is None:
        return f"{name} not restored, {then or 0:,} tokens in the draft"
    return f"{name} {now:,} tokens, " + ("not in the draft" if then is None else f"not {then:,}")


class Drafts:
    """The service's drafts: one per session, its record beside the transcript."""

    def __init__(self, service: BatonService) -> None:
        self._service = service

    async def preview(
        self,
        session_id: str,
        request: CompactRequest,
        progress: Progress | None = None,
        *,
        regenerate: str | None = None,
        summary: str | None = None,
    ) -> CompactDraft:
        """A draft of `request` (or, with `regenerate`, of that draft's request with the
        instructions given, when any): the summarizer the compaction would use writes it.
        With `regenerate` and `summary`, that draft with the summary as edited, measured
        again without writing a summary."""
        service = self._service
        session = service.session(session_id)
        check_writable(request.instructions, "instructions")
        await service.models.client_ready()  # a summarizer that uses the key needs the SDK
        if summary is not None and regenerate is None:
            raise InvalidParams("`summary` goes with the `draftId` of the draft it edits")
        # a draft is written either way: locked by another process, or a file it cannot write
        session.refuse_if_read_only()
        if regenerate is not None:
            record = draft_record.load_record(session, regenerate)
            if summary is not None:
                self._check_summary(summary)
                ctx = service.compaction.context(progress, session_id)
                model = session.model or service.settings.model
                return preview.remeasure(session, record, ctx, summary, model=model)
            request = draft_record.request_of(record, request.instructions)
        if session.compacting:
            raise CompactionInProgress(f"session {session_id} is being compacted")
        ctx = service.compaction.context(progress, session_id)
        model = session.model or service.settings.model
        return await preview.make_draft(session, request, ctx, model=model)

    def current(self, session_id: str) -> tuple[CompactDraft, bool] | None:
        """The session's saved draft and whether it is still fresh, if any."""
        return draft_record.current_draft(self._service.session(session_id))

    def state(self, session_id: str) -> tuple[CompactDraft, str | None] | None:
        """The session's saved draft and why it is stale (None: fresh), if any (the hover)."""
        return draft_record.draft_state(self._service.session(session_id))

    async def apply(
        self,
        session_id: str,
        draft_id: str,
        summary: str | None = None,
        progress: Progress | None = None,
    ) -> CompactResult:
        service = self._service
        session = service.session(session_id)
        if summary is not None:
            self._check_summary(summary)
        await service.models.client_ready()
        ctx = service.compaction.context(progress, session_id, manual=True)
        record = draft_record.load_record(session, draft_id)
        request = draft_record.request_of(record)

        drafted = CompactDraft.model_validate(record["draft"])

        async def commit(asked: CompactRequest) -> CompactResult:
            result = preview.apply(session, record, ctx, summary)
            warnings = [*result.warnings, *restore_changed(drafted, result)]
            if asked.instructions != request.instructions:
                # the summary is written already: a PreCompact hook's instructions cannot apply
                warnings.append(HOOK_TOO_LATE)
            return result.model_copy(update={"warnings": warnings})

        # within a compaction's frame, as any compaction: its hooks run around the commit,
        # which is announced (and resumes a paused auto-compact) as it happens
        return await engine.run_compaction(session, request, ctx, commit)

    @staticmethod
    def _check_summary(summary: str) -> None:
        check_writable(summary, "summary")
        if len(summary) > MAX_SUMMARY_CHARS:
            raise InvalidParams(f"the summary is longer than {MAX_SUMMARY_CHARS:,} characters")

    def discard(self, session_id: str, draft_id: str) -> None:
        """Drop the session's draft `draft_id`; never from a read-only view (its draft is
        the writer's, another process's perhaps)."""
        session = self._service.session(session_id)
        session.refuse_if_read_only()
        draft_record.discard(session, draft_id)

    def forget(self, session_id: str) -> None:
        """Remove the draft of a session just deleted: no Apply can use it now. One that
        cannot be removed is logged and left; the delete stands."""
        path = draft_beside(self._service.store.path_for(session_id))
        try:
            remove_beside(path)
        except (OSError, StorageError) as exc:
            log.warning("the draft of deleted session %s is left in %s: %s", session_id, path, exc)
