"""One tool call answered: planned, its level looked up (`ask` asked through the host,
`allowSession` remembered, `off` and denials told to the model), run, and its result block."""

from __future__ import annotations

import logging
from typing import Any

from baton.core.conversation.messages import ToolResultBlock, ToolUseBlock
from baton.core.tools.host import OUTCOMES, PermissionRequest
from baton.core.tools.registry import Call, Registry, ToolContext, ToolResult, level_of
from baton.core.tools.workspace import ToolError

log = logging.getLogger(__name__)

CANCELLED = "Not run: the user stopped the turn before this call ran."


def block(use_id: str, result: ToolResult) -> ToolResultBlock:
    return ToolResultBlock(
        tool_use_id=use_id, content=result.text, is_error=True if result.is_error else None
    )


def _failed(text: str, status: str = "failed") -> ToolResult:
    return ToolResult(
        text, is_error=True, summary=text, status="denied" if status == "denied" else "failed"
    )


async def answer(
    use: ToolUseBlock, registry: Registry, ctx: ToolContext, allowed: set[str]
) -> ToolResult:
    """The result of one call; raises only CancelledError (the turn was stopped)."""
    tool = registry.get(use.name)
    if tool is None:
        return _failed(f"Unknown tool {use.name!r}: the tools are {', '.join(registry.names())}.")
    input: dict[str, Any] = use.input if isinstance(use.input, dict) else {}
    try:
        call = await tool.prepare(input, ctx)
        refusal = await _permission(use, call, registry, ctx, allowed, input)
        if refusal is not None:
            return refusal
        return await call.run()
    except ToolError as exc:
        return _failed(f"Error: {exc}")
    except (OSError, ValueError, UnicodeError) as exc:
        log.debug("tool %s failed: %s", use.name, type(exc).__name__)
        return _failed(f"Error: {use.name} failed ({type(exc).__name__})")
    except Exception as exc:  # a tool's own fault: the model is still answered, the turn goes on
        log.warning("tool %s failed unexpectedly: %s", use.name, type(exc).__name__, exc_info=True)
        return _failed(f"Error: {use.name} failed ({type(exc).__name__})")


async def _permission(
    use: ToolUseBlock,
    call: Call,
    registry: Registry,
    ctx: ToolContext,
    allowed: set[str],
    input: dict[str, Any],
) -> ToolResult | None:
    level = level_of(call.level_key, ctx.settings, registry)
    if level == "ask" and not getattr(ctx.host, "can_ask", True):
        level = "off"  # nobody can be asked
    if level == "off":
        return _failed(
            f"Denied: {use.name} ({call.level_key}) is off in this editor's settings "
            "(baton.tools.permissions); do not try it again.",
            "denied",
        )
    if level == "auto" or call.level_key in allowed:
        return None
    request = PermissionRequest(
        session_id=ctx.session_id,
        tool_use_id=use.id,
        tool=use.name,
        input=input,
        title=call.title,
        kind=call.kind,
        path=call.path,
        diff=call.diff,
    )
    try:
        outcome = await ctx.host.ask_permission(request)
    except ToolError:
        outcome = "deny"
    if outcome not in OUTCOMES:
        outcome = "deny"
    if outcome == "allowSession":
        allowed.add(call.level_key)
    if outcome == "deny":
        return _failed(
            f"Denied: the user did not allow {call.title}. Nothing was changed; ask the user "
            "how to go on instead of retrying.",
            "denied",
        )
    return None
