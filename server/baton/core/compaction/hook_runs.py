"""The compaction hooks run around one compaction: PreCompact may block it or add
instructions, PostCompact is told the result; what failed becomes the result's warnings.
`run_compaction` is the frame every compaction that commits runs in."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from baton.core.compaction.hooks import BLOCK_EXIT, OUTPUT_CHARS, Hooks, read_output, run_hook
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.conversation.session import Session
from baton.core.errors import CompactionBlocked, CompactionInProgress
from baton.core.usage.session_usage import compute_usage

if TYPE_CHECKING:
    from baton.core.compaction.engine import CompactContext

T = TypeVar("T")


def _base(session: Session, request: CompactRequest, event: str) -> dict[str, Any]:
    return {
        "hook_event_name": event,
        "session_id": session.session_id,
        "transcript_path": str(session.transcript.path),
        "trigger": request.trigger,
        "direction": request.direction,
    }


async def before_hooks(
    hooks: Hooks | None, session: Session, request: CompactRequest, ctx: CompactContext
) -> tuple[CompactRequest, list[str]]:
    """The request with what PreCompact hooks added, and the warnings to report; raises
    CompactionBlocked when one blocks (nothing changed)."""
    if hooks is None or request.dry_run:
        return request, []
    warnings = list(hooks.problems)
    matching = [hook for hook in hooks.pre if hook.matches(request.trigger)]
    if not matching:
        return request, warnings
    usage = compute_usage(session, ctx.settings, ctx.estimator, tools_tokens=ctx.tools_tokens)
    payload = _base(session, request, "PreCompact") | {
        "custom_instructions": request.instructions or "",
        "pivot_message_id": request.pivot_message_id,
        "end_message_id": request.end_message_id,
        "used_tokens": usage.used_tokens,
        "context_window": usage.context_window,
        "auto_compact_threshold": usage.auto_compact_threshold,
        "messages": len(session.view),
    }
    added: list[str] = []
    for hook in matching:
        run = await run_hook(hook, payload)
        if run.warning is not None:
            warnings.append(run.warning)
            continue
        output, ignored = read_output(run)
        if run.exit_code == BLOCK_EXIT or output.get("decision") == "block":
            reason = str(output.get("reason") or run.stderr or "no reason given")[:OUTPUT_CHARS]
            raise CompactionBlocked(
                f"the PreCompact hook `{hook.shown()}` blocked the compaction: {reason}",
                hook=hook.shown(),
            )
        if run.exit_code != 0:
            detail = f": {run.stderr}" if run.stderr else ""
            warnings.append(
                f"the PreCompact hook `{hook.shown()}` failed ({run.exit_code}){detail}"
            )
            continue
        if ignored is not None:
            warnings.append(f"the PreCompact hook `{hook.shown()}` {ignored}")
            continue
        text = output.get("instructions")
        if isinstance(text, str) and text.strip():
            added.append(text.strip())
    if added:
        joined = "\n\n".join([*([request.instructions] if request.instructions else []), *added])
        request = replace(request, instructions=joined)
    return request, warnings


async def after_hooks(
    hooks: Hooks | None,
    session: Session,
    request: CompactRequest,
    result: CompactResult,
    warnings: list[str],
) -> CompactResult:
    """The result with the PostCompact hooks told of it, and every warning of both runs."""
    if hooks is not None and not result.dry_run:
        payload = _base(session, request, "PostCompact") | {"result": result.wire()}
        for hook in hooks.post:
            if not hook.matches(request.trigger):
                continue
            run = await run_hook(hook, payload)
            if run.warning is not None:
                warnings.append(run.warning)
            elif run.exit_code != 0:
                detail = f": {run.stderr}" if run.stderr else ""
                warnings.append(
                    f"the PostCompact hook `{hook.shown()}` failed ({run.exit_code}){detail}"
                )
    if not warnings:
        return result
    return result.model_copy(update={"warnings": [*result.warnings, *warnings]})


async def run_compaction(
    session: Session,
    request: CompactRequest,
    ctx: CompactContext,
    work: Callable[[CompactRequest], Awaitable[CompactResult]],
) -> CompactResult:
    """One compaction's frame, whoever does its work (`engine.compact`, the session's lane, a
    draft's apply, the summary written ahead of auto-compact): refused while another runs or
    where nothing may be written; the session compacting throughout (no other compaction,
    undo or pin meanwhile); the user's PreCompact hooks before `work`, which gets the request
    as they left it and commits last (no await after its commit), the PostCompact ones after,
    and their warnings in the result.

    Once `work` has committed, the compaction is done: `ctx.committed` is told at once (the
    service announces the change there, so the client never waits on a PostCompact hook to
    see the new view), and a cancel that arrives while the PostCompact hooks run comes too
    late: they run to their end and the result is returned, not a CancelledError."""
    if session.compacting:
        raise CompactionInProgress(f"session {session.session_id} is already being compacted")
    if not request.dry_run:  # a dry run writes nothing: a read-only session has one too
        session.refuse_if_read_only()  # says why: another process writes it, a damaged header…
    session.compacting = True
    try:
        if ctx.settled is not None:
            await ctx.settled()
        request, warnings = await before_hooks(ctx.hooks, session, request, ctx)
        result = await work(request)
        if not result.dry_run and ctx.committed is not None:
            ctx.committed(result)
    except BaseException:
        session.compacting = False
        raise

    async def after() -> CompactResult:
        try:
            return await after_hooks(ctx.hooks, session, request, result, warnings)
        finally:
            session.compacting = False

    return await _past_cancel(after())


async def _past_cancel(work: Awaitable[T]) -> T:
    """`work` run to its end even when the caller is cancelled meanwhile: the cancel came
    after the commit, too late to change anything, so it is dropped and the caller returns
    the result. `work` itself cancelled (the loop closing) still ends as cancelled."""
    task = asyncio.ensure_future(work)
    current = asyncio.current_task()
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():
                raise  # cancelled itself, not only its caller
            if current is not None:
                current.uncancel()  # taken back: the request answers with the result
