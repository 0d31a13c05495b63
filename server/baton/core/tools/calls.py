"""One tool call answered: planned, its level looked up (`ask` asked through the host,
`allowSession` remembered, `off` and denials told to the model), run, and its result block."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from baton.core.conversation.messages import ToolResultBlock, ToolUseBlock
from baton.core.settings import Level
from baton.core.tools.host import PermissionRequest, ToolKind
from baton.core.tools.registry import Call, Registry, ToolContext, ToolResult, level_of
from baton.core.tools.workspace import ToolError

log = logging.getLogger(__name__)
_SURROGATE = re.compile("[\ud800-\udfff]")

MAX_RESULT_CHARS = 100_000  # what one result tells the model, at most (read_file's bound)
READ_KEY = "read_file"  # the level that lets the model read a file's text
NOT_RUN = "Not run: "  # how every answer to a call the loop did not run begins
CANCELLED = f"{NOT_RUN}the user stopped the turn before this call ran."
INTERRUPTED = (
    "Stopped: the user stopped the turn while the editor was applying this edit; it may "
    "have been applied (the editor can still apply it): read the file before going on."
)


def unknown_tool(name: str, names: Iterable[str]) -> str:
    """The answer to a call of a tool the model named that is not one of `names`."""
    return f"{_unknown_prefix(name)}{', '.join(names)}."


def _unknown_prefix(name: str) -> str:
    return f"Unknown tool {name!r}: the tools are "


def answered_here(name: str, result: ToolResultBlock) -> bool:
    """Whether `result` is worded as the tool loop's answer to a call of a tool it may not
    have (told as the loop tells its calls): "Unknown tool", or one it did not run ("Not
    run: ..." past its limit of rounds, a cancel, a cut call). How a transcript begun
    before the loop marked its messages (`Message.tool_loop`) tells them apart from an
    imported transcript's results."""
    text = result.content if isinstance(result.content, str) else ""
    return bool(result.is_error) and text.startswith((_unknown_prefix(name), NOT_RUN))


def block(use_id: str, result: ToolResult) -> ToolResultBlock:
    return ToolResultBlock(
        tool_use_id=use_id, content=result.text, is_error=True if result.is_error else None
    )


def _failed(text: str, status: str = "failed") -> ToolResult:
    return ToolResult(
        text, is_error=True, summary=text, status="denied" if status == "denied" else "failed"
    )


def capped(result: ToolResult) -> ToolResult:
    """`result` with its text cut at MAX_RESULT_CHARS (its closing notes kept), and a note
    saying so: each tool bounds its entries, not their length (500 deep paths of find_files
    came to 1.5 MB), and a result goes whole into every later request."""
    text = result.text
    if len(text) <= MAX_RESULT_CHARS:
        return result
    lines = text.split("\n")
    notes: list[str] = []
    while len(lines) > 1 and lines[-1].startswith("[") and len(notes) < 4:
        notes.insert(0, lines.pop())
    note = (
        f"[cut: the result was {len(text):,} characters, over the {MAX_RESULT_CHARS:,} a "
        "tool answers; narrow it (a path, a pattern, a line range)]"
    )
    room = MAX_RESULT_CHARS - sum(len(n) + 1 for n in notes) - len(note) - 1
    body = "\n".join(lines)[: max(room, 0)]
    if "\n" in body:
        body = body[: body.rindex("\n")]  # whole lines only
    text = "\n".join([body, *notes, note])[:MAX_RESULT_CHARS]
    return replace(result, text=text)


async def answer(
    use: ToolUseBlock,
    registry: Registry,
    ctx: ToolContext,
    allowed: set[str],
    applying: set[str] | None = None,
) -> ToolResult:
    """The result of one call, capped (an error may quote the input, however long) and
    writable (a lone surrogate, from a name that is not UTF-8, made U+FFFD: the transcript
    refuses it, and the turn with it); raises only CancelledError (the turn was stopped).
    An edit's id goes into `applying` as it is handed to the host: stopped from then on, it
    may be applied all the same."""
    result = capped(await _answer(use, registry, ctx, allowed, applying))
    text = _SURROGATE.sub("\ufffd", result.text)
    return result if text == result.text else replace(result, text=text)


async def _answer(
    use: ToolUseBlock,
    registry: Registry,
    ctx: ToolContext,
    allowed: set[str],
    applying: set[str] | None,
) -> ToolResult:
    tool = registry.get(use.name)
    if tool is None:
        return _failed(unknown_tool(use.name, registry.names()))
    input: dict[str, Any] = use.input if isinstance(use.input, dict) else {}
    try:
        # a level known from the input is looked at before the plan reads anything: an
        # edit planned while `off` answered "no match" or "Denied" by what the file holds
        key = tool.key_before_plan(input)
        if key is not None and _level(key, registry, ctx) == "off":
            return _off(use.name, key, registry, ctx)
        try:
            call = await tool.prepare(input, ctx)
        except ToolError as exc:
            if key is None or not _asked_first(key, registry, ctx, allowed):
                raise
            call = _failed_plan(tool.input_title(input), key, tool.kind, exc)
        # a denial names the call by its input only: what the plan found stays unsaid
        named = call.title if key is None else tool.input_title(input)
        refusal = await _permission(use, call, registry, ctx, allowed, input, named)
        if refusal is not None:
            return refusal
        if call.kind == "edit" and applying is not None:
            applying.add(use.id)
        return await call.run()
    except ToolError as exc:
        return _failed(f"Error: {exc}")
    except (OSError, ValueError, UnicodeError) as exc:
        log.debug("tool %s failed: %s", use.name, type(exc).__name__)
        return _failed(f"Error: {use.name} failed ({type(exc).__name__})")
    except Exception as exc:  # a tool's own fault: the model is still answered, the turn goes on
        log.warning("tool %s failed unexpectedly: %s", use.name, type(exc).__name__, exc_info=True)
        return _failed(f"Error: {use.name} failed ({type(exc).__name__})")


def _level(key: str, registry: Registry, ctx: ToolContext) -> Level:
    level = level_of(key, ctx.settings, registry)
    if level == "ask" and not getattr(ctx.host, "can_ask", True):
        return "off"  # nobody can be asked
    return level


def _off(name: str, key: str, registry: Registry, ctx: ToolContext) -> ToolResult:
    if level_of(key, ctx.settings, registry) == "ask":  # set to ask, with nobody to ask
        return _failed(
            f"Denied: {name} ({key}) needs the user's permission "
            "(baton.tools.permissions: ask) and this editor cannot ask for it; "
            "do not try it again.",
            "denied",
        )
    return _failed(
        f"Denied: {name} ({key}) is off in this editor's settings "
        "(baton.tools.permissions); do not try it again.",
        "denied",
    )


def _asked_first(key: str, registry: Registry, ctx: ToolContext, allowed: set[str]) -> bool:
    """Whether a call at `key` whose plan failed is asked about before the model is told
    why: its level is `ask` and the model may not read files freely, so the failure (no
    match, two matches, past the last line) would tell it what the file holds."""
    if _level(key, registry, ctx) != "ask" or key in allowed:
        return False
    return _level(READ_KEY, registry, ctx) != "auto" and READ_KEY not in allowed


def _failed_plan(title: str, key: str, kind: ToolKind, exc: ToolError) -> Call:
    """A call that only tells its failure, once the user allows that (never for the session:
    allowing a failure's answer allows no later call)."""

    async def run() -> ToolResult:
        raise exc

    return Call(
        f"{title}: it cannot be applied ({exc}); tell the model why",
        kind,
        key,
        run,
        options=("allowOnce", "deny"),
    )


async def _permission(
    use: ToolUseBlock,
    call: Call,
    registry: Registry,
    ctx: ToolContext,
    allowed: set[str],
    input: dict[str, Any],
    named: str,
) -> ToolResult | None:
    level = _level(call.level_key, registry, ctx)
    if level == "off":
        return _off(use.name, call.level_key, registry, ctx)
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
        options=call.options,
    )
    try:
        outcome = await ctx.host.ask_permission(request)
    except ToolError:
        outcome = "deny"
    if outcome == "allowSession" and outcome not in request.options:
        outcome = "allowOnce"  # a front end that offers every option anyway
    if outcome not in request.options:
        outcome = "deny"
    if outcome == "allowSession":
        allowed.add(call.level_key)
    if outcome == "deny":
        return _failed(
            f"Denied: the user did not allow {named}. Nothing was changed; ask the user "
            "how to go on instead of retrying.",
            "denied",
        )
    return None
