"""`baton payload FILE`: the next reply request a session would send, and its thinking."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from baton.cli.common import EXIT_OK, Subparsers, file_or_example, json_text, open_session_file
from baton.core.errors import InvalidParams

if TYPE_CHECKING:
    from baton.core.conversation.messages import Message


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


def cmd_payload(args: argparse.Namespace) -> int:
    from baton.core.model_api.reply_request import build_payload
    from baton.core.usage.estimator import default_estimator

    path = file_or_example(args.file)
    estimator = default_estimator()
    with open_session_file(path, estimator.count_message) as loaded:
        session = loaded.session
        view = session.view_messages()
        # without --tools, the tools the session's last send offered (its file keeps them)
        tools = _tools(args.tools) if args.tools is not None else session.sent_tools or None
        payload = build_payload(view, session.system_prompt, tools)
        found = thinking_rows(view, payload.messages)
        if args.json:
            body = {"system": session.system_prompt, "tools": tools, "messages": payload.messages}
            out = {"thinking": found, "prefixHash": payload.prefix_hash, "request": body}
            print(json_text(out))
            return EXIT_OK
        print(
            f"{session.title}: the next request sends {len(payload.messages):,} turns; "
            f"{sum(1 for r in found if r['sent'])} of {len(found)} messages with thinking "
            "send it back"
        )
        for row in found:
            state = "sent" if row["sent"] else "left out"
            print(
                f"  #{row['index']:<4} {row['messageId']:<22} {row['origin']:<8} "
                f"{row['blocks']} block(s) {', '.join(row['signatures'])}  {state}"
            )
        if payload.stale_in_progress:
            print("  the turn in progress goes back after its prefix changed (drop_block)")
    return EXIT_OK


def add_payload(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "payload",
        help="the next reply request of a session file: which thinking goes back",
    )
    parser.add_argument("file", nargs="?", help="the file (default: the bundled example)")
    parser.add_argument("--tools", help="the tools the request carries, as a JSON list")
    parser.add_argument(
        "--json", action="store_true", help="print the request body and the thinking rows"
    )
    parser.set_defaults(func=cmd_payload)
