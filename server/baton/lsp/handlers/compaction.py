"""Compaction requests and the `baton.*` commands that code actions carry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton import protocol as p
from baton.core.compaction.result import CompactRequest
from baton.lsp.errors import guarded
from baton.lsp.handlers.common import dump, one_argument, parse, work_done_token
from baton.lsp.progress import work_done

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer

Json = dict[str, Any]


def register(ls: BatonServer) -> None:
    service = ls.service

    async def run(session_id: str, request: CompactRequest, token: Any = None) -> Json:
        service.session(session_id)  # unknown ids fail before any progress shows
        title = "Baton: planning a compaction" if request.dry_run else "Baton: compacting"
        async with work_done(ls, title, token) as reporter:
            result = await service.compact(session_id, request, reporter)
            summarized = len(result.summarized_message_ids)
            reporter.final_message = f"{summarized} message{'s' if summarized != 1 else ''}"
        return dump(result)

    @ls.feature(p.COMPACT)
    @guarded
    async def compact(params: Any) -> Json:
        args = parse(p.CompactParams, params)
        request = CompactRequest(
            direction=args.direction,
            pivot_message_id=args.pivot_message_id,
            end_message_id=args.end_message_id,
            instructions=args.instructions,
            dry_run=args.dry_run,
        )
        return await run(args.session_id, request, work_done_token(params))

    @ls.feature(p.UNCOMPACT)
    @guarded
    async def uncompact(params: Any) -> Json:
        args = parse(p.UncompactParams, params)
        usage = service.uncompact(args.session_id, args.boundary_id)
        return dump(p.UncompactResult(usage=usage))

    @ls.command(p.CMD_COMPACT)
    @guarded
    async def cmd_compact(*arguments: Any) -> Json:
        args = one_argument(p.CompactCommandArgs, arguments)
        request = CompactRequest(
            direction=args.direction,
            pivot_message_id=args.pivot_message_id,
            end_message_id=args.end_message_id,
            instructions=args.instructions,
        )
        return await run(args.session_id, request)

    @ls.command(p.CMD_COMPACT_UP_TO)
    @guarded
    async def cmd_compact_up_to(*arguments: Any) -> Json:
        args = one_argument(p.PivotCommandArgs, arguments)
        request = CompactRequest("up_to", args.pivot_message_id, instructions=args.instructions)
        return await run(args.session_id, request)

    @ls.command(p.CMD_COMPACT_FROM)
    @guarded
    async def cmd_compact_from(*arguments: Any) -> Json:
        args = one_argument(p.PivotCommandArgs, arguments)
        request = CompactRequest("from", args.pivot_message_id, instructions=args.instructions)
        return await run(args.session_id, request)

    @ls.command(p.CMD_COMPACT_RANGE)
    @guarded
    async def cmd_compact_range(*arguments: Any) -> Json:
        args = one_argument(p.RangeCommandArgs, arguments)
        request = CompactRequest(
            "range", args.pivot_message_id, args.end_message_id, instructions=args.instructions
        )
        return await run(args.session_id, request)

    @ls.command(p.CMD_PREVIEW_COMPACT)
    @guarded
    async def cmd_preview(*arguments: Any) -> Json:
        args = one_argument(p.PreviewCommandArgs, arguments)
        request = CompactRequest(
            direction=args.direction,
            pivot_message_id=args.pivot_message_id,
            end_message_id=args.end_message_id,
            dry_run=True,
        )
        return await run(args.session_id, request)

    @ls.command(p.CMD_UNCOMPACT)
    @guarded
    async def cmd_uncompact(*arguments: Any) -> Json:
        args = one_argument(p.UncompactParams, arguments)
        usage = service.uncompact(args.session_id, args.boundary_id)
        return dump(p.UncompactResult(usage=usage))
