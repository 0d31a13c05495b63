"""`baton payload FILE`: the next reply request a session would send, and its thinking."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from baton.cli.common import (
    EXIT_OK,
    Subparsers,
    add_settings_file,
    api_limits,
    data_dir_estimator,
    data_dir_of,
    file_or_example,
    file_settings,
    json_text,
    open_session_file,
    title_line,
    utf8_argument,
)
from baton.core.errors import InvalidParams
from baton.core.one_line import one_line

if TYPE_CHECKING:
    from baton.core.conversation.messages import Message
    from baton.core.settings import Settings
    from baton.core.usage.budget import Usage


def thinking_rows(view: list[Message], sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per message of the view with thinking: its id, its blocks' signatures (cut
    short), and whether the next request sends them."""
    from baton.core.model_api.reply_request import THINKING_TYPES

    going = {
        str(b.get("signature") or b.get("data"))
        for turn in sent
        if turn["role"] == "assistant"
        for b in turn["content"]
        if b.get("type") in THINKING_TYPES
    }
    out: list[dict[str, Any]] = []
    for index, message in enumerate(view):
        keys = [
            str(getattr(b, "signature", None) or getattr(b, "data", ""))
            for b in message.content
            if b.type in THINKING_TYPES
        ]
        if not keys:
            continue
        out.append(
            {
                "index": index,
                "messageId": message.id,
                "origin": "reply" if message.prefix_hash else "imported",
                "blocks": len(keys),
                "sent": all(k in going for k in keys),
                "signatures": [k[:16] for k in keys],
            }
        )
    return out


def _tools(text: str) -> list[dict[str, Any]]:
    """--tools: a JSON list of tool definitions (objects), or a clear InvalidParams."""
    from baton.core.conversation.records import check_writable

    try:
        tools = json.loads(text)
    except (ValueError, RecursionError):
        raise InvalidParams("--tools is not JSON (a list of tool definitions)") from None
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise InvalidParams("--tools takes a JSON list of tool definitions (objects)")
    check_writable(tools, "--tools")  # no request can carry a lone surrogate
    return tools


def limits_line(
    model: str, usage: Usage, max_output: int, why_table: str | None, settings: Settings
) -> str:
    """The line that says which limits the request was made within, and where from."""
    whose = "the model table's" if why_table else "the Models API's"
    window = f"a window of {usage.context_window:,} tokens"
    if settings.context_window:
        window += " (the contextWindow setting's)"
    figures = f"{window}, output up to {max_output:,}"
    return one_line(
        f"  limits: {whose} for {model} ({figures}{'; ' + why_table if why_table else ''})"
    )


def cmd_payload(args: argparse.Namespace) -> int:
    from baton.cli.usage import served_usage
    from baton.core.compaction.automatic.due import checks, compaction_due
    from baton.core.compaction.automatic.microcompact import microcompact
    from baton.core.model_api.reply_request import request_thinking
    from baton.core.turn.next_request import next_request, ready_view
    from baton.core.turn.prompt_input import prompt_input
    from baton.core.usage.budget import budget_for

    utf8_argument(args.prompt, "--prompt")
    if args.prompt is not None and not args.prompt.strip():
        raise InvalidParams(
            "--prompt is empty: give the prompt the next send brings, or leave --prompt out "
            "for a send that continues"
        )
    settings = file_settings(args.settings)  # a bad file: one line, before anything is read
    prompt = prompt_input(args.prompt) if args.prompt is not None else None
    path = file_or_example(args.file)
    estimator = data_dir_estimator(data_dir_of(path))  # counted as its server counts
    # a copy made ready as the send makes the session ready: the file is never changed
    with open_session_file(path, estimator.count_message, writable=True) as loaded:
        session = loaded.session
        # without --tools, the tools the session's last send offered (its file keeps them)
        tools = _tools(args.tools) if args.tools is not None else session.sent_tools or None
        _, set_aside = ready_view(session, prompt)
        model = session.model or settings.model
        limits, why_table = api_limits(model, settings)  # as the send asks, before it counts
        usage = served_usage(session, settings, estimator, tools, limits)
        cleared = checks(usage) and microcompact(session, settings.microcompact) is not None
        if cleared:  # as the send's check does before it decides
            usage = served_usage(session, settings, estimator, tools, limits)
        request = next_request(session, tools, usage, settings, model, estimator, limits)
        max_output = budget_for(model, settings, limits)[0].max_output
        payload = request.payload
        compacts_first = compaction_due(usage)  # the send's own decision, not run here
        found = thinking_rows(request.view, payload.messages)
        if args.json:
            setting = settings.thinking_setting()
            thinking, _ = request_thinking(model, setting, request.max_tokens, payload)
            body = {
                "model": model,
                "max_tokens": request.max_tokens,
                "system": request.system,
                "tools": tools,
                "messages": request.messages,
                "thinking": thinking,
            }
            out = {
                "thinking": found,
                "prefixHash": payload.prefix_hash,
                "budgetNote": request.note,
                "clearedFirst": cleared,
                "autoCompactsFirst": compacts_first,
                "limits": {
                    "from": "modelTable" if why_table else "modelsApi",
                    "contextWindow": usage.context_window,
                    "maxOutput": max_output,
                },
                "request": body,
            }
            print(json_text(out))
            return EXIT_OK
        print(
            f"{title_line(session.title)}: the next request sends {len(request.messages):,} turns; "
            f"{sum(1 for r in found if r['sent'])} of {len(found)} messages with thinking "
            "send it back"
        )
        print(limits_line(model, usage, max_output, why_table, settings))
        if not request.messages or request.messages[-1]["role"] != "user":
            print("  the next send brings a prompt: --prompt TEXT shows its request")
        if set_aside is not None:
            print("  the interrupted reply that ends the view is set aside and made again")
        if cleared:
            print("  old tool results are cleared first (idle since the last reply)")
        if compacts_first:
            size = usage.request_size
            why = (
                f"its request, about {size.request_bytes:,} bytes, is over the API's 32 MB"
                if size is not None and size.over
                else f"{usage.used_tokens:,} tokens, at or past the threshold of "
                f"{usage.auto_compact_threshold:,}"
            )
            print(
                f"  the next send auto-compacts first ({why}): its request is made after "
                "that compaction, not the one shown"
            )
        if request.note is not None:
            print(f"  with the budget note: {request.note}")
        for row in found:
            state = "sent" if row["sent"] else "left out"
            print(
                one_line(
                    f"  #{row['index']:<4} {row['messageId']:<22} {row['origin']:<8} "
                    f"{row['blocks']} block(s) {', '.join(row['signatures'])}  {state}"
                )
            )
        if payload.stale_in_progress:
            print("  the turn in progress goes back after its prefix changed (drop_block)")
    return EXIT_OK


def add_payload(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "payload",
        help="the next reply request of a session file, as the next send would send it: "
        "which thinking goes back, the budget note when due",
    )
    parser.add_argument("file", nargs="?", help="the file (default: the bundled example)")
    parser.add_argument("--tools", help="the tools the request carries, as a JSON list")
    parser.add_argument(
        "--prompt", metavar="TEXT", help="the prompt the next send brings (default: none)"
    )
    add_settings_file(parser)
    parser.add_argument(
        "--json", action="store_true", help="print the request body and the thinking rows"
    )
    parser.set_defaults(func=cmd_payload)
