"""Compaction: the `baton/compact` and `baton/uncompact` requests and the `baton.*` commands
that code actions carry; `compact_request` is the one mapping from wire params to a
`CompactRequest`."""

from __future__ import annotations

from pydantic import BaseModel

from baton import protocol as p
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.boundary import Direction
from baton.lsp.dispatch.progress import work_done
from baton.lsp.features.common import Call, Handler

CompactArgs = (
    p.CompactParams
    | p.CompactCommandArgs
    | p.PivotCommandArgs
    | p.PreviewCommandArgs
    | p.RangeCommandArgs
    | p.DraftPreviewParams
)


def compact_request(
    args: CompactArgs, direction: Direction | None = None, *, dry_run: bool | None = None
) -> CompactRequest:
    """What the params or a command's argument ask for; `direction` and `dry_run` are what
    the command itself fixes (`baton.compactUpTo` is `up_to`, a preview is a dry run)."""
    model: BaseModel = args  # not every shape has every field: absent means "not given"
    wanted: Direction = direction if direction is not None else getattr(model, "direction", "all")
    return CompactRequest(
        direction=wanted,
        pivot_message_id=getattr(model, "pivot_message_id", None),
        end_message_id=getattr(model, "end_message_id", None),
        instructions=getattr(model, "instructions", None),
        dry_run=bool(getattr(model, "dry_run", False)) if dry_run is None else dry_run,
    )


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


async def run(call: Call, session_id: str, request: CompactRequest) -> p.CompactResult:
    """One compaction with progress on the client's token (or one of the server's)."""
    call.service.session(session_id)  # unknown ids fail before any progress shows
    title = "Baton: planning a compaction" if request.dry_run else "Baton: compacting"
    async with work_done(call.ls, title, call.token) as reporter:
        result = await call.service.compaction.compact(session_id, request, reporter)
        summarized = _plural(len(result.summarized_message_ids), "message")
        reporter.final_message = (
            f"{summarized} would be summarized" if request.dry_run else f"Summarized {summarized}"
        )
    return result


async def compact(call: Call, args: p.CompactParams) -> p.CompactResult:
    return await run(call, args.session_id, compact_request(args))


async def uncompact(call: Call, args: p.UncompactParams) -> p.UncompactResult:
    call.service.session(args.session_id)  # unknown ids fail before any progress shows
    async with work_done(call.ls, "Baton: undoing a compaction", call.token) as reporter:
        usage = await call.service.compaction.undo(args.session_id, args.boundary_id, reporter)
    return p.UncompactResult(usage=usage)


async def compact_command(call: Call, args: p.CompactCommandArgs) -> p.CompactResult:
    return await run(call, args.session_id, compact_request(args))


async def compact_up_to(call: Call, args: p.PivotCommandArgs) -> p.CompactResult:
    return await run(call, args.session_id, compact_request(args, "up_to"))


async def compact_from(call: Call, args: p.PivotCommandArgs) -> p.CompactResult:
    return await run(call, args.session_id, compact_request(args, "from"))


async def compact_range(call: Call, args: p.RangeCommandArgs) -> p.CompactResult:
    return await run(call, args.session_id, compact_request(args, "range"))


async def preview_compact(call: Call, args: p.PreviewCommandArgs) -> p.CompactResult:
    return await run(call, args.session_id, compact_request(args, dry_run=True))


async def preview_draft(call: Call, args: p.DraftPreviewParams) -> p.CompactDraft:
    """A draft: the summary written (streamed with progress, cancellable), not committed."""
    call.service.session(args.session_id)
    request = compact_request(args, dry_run=False)
    async with work_done(call.ls, "Baton: writing a compaction draft", call.token) as reporter:
        draft = await call.service.drafts.preview(
            args.session_id, request, reporter, regenerate=args.draft_id, summary=args.summary
        )
        summarized = _plural(len(draft.summarized_message_ids), "message")
        reporter.final_message = f"Draft: {summarized} would be summarized"
    return draft


async def apply_draft(call: Call, args: p.ApplyDraftParams) -> p.CompactResult:
    call.service.session(args.session_id)
    async with work_done(call.ls, "Baton: applying a compaction draft", call.token) as reporter:
        result = await call.service.drafts.apply(
            args.session_id, args.draft_id, args.summary, reporter
        )
        reporter.final_message = (
            f"Summarized {_plural(len(result.summarized_message_ids), 'message')}"
        )
    return result


async def discard_draft(call: Call, args: p.DraftParams) -> p.Empty:
    call.service.drafts.discard(args.session_id, args.draft_id)
    return p.Empty()


REQUESTS: dict[str, Handler] = {
    p.COMPACT: compact,
    p.UNCOMPACT: uncompact,
    p.COMPACT_PREVIEW: preview_draft,
    p.COMPACT_APPLY_DRAFT: apply_draft,
    p.COMPACT_DISCARD_DRAFT: discard_draft,
}
COMMANDS: dict[str, Handler] = {
    p.CMD_COMPACT: compact_command,
    p.CMD_COMPACT_UP_TO: compact_up_to,
    p.CMD_COMPACT_FROM: compact_from,
    p.CMD_COMPACT_RANGE: compact_range,
    p.CMD_PREVIEW_COMPACT: preview_compact,
    p.CMD_UNCOMPACT: uncompact,
}
