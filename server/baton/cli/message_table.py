"""`baton show FILE`: the view as a table of messages, and the short ids it prints."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from baton.core.compaction.slices import first_words
from baton.core.conversation.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.errors import InvalidParams

SHORT_ID_CHARS = 8  # after an id's own prefix ("msg_", "cc_"), if it has one
PREVIEW_CHARS = 60


def short_ids(ids: Sequence[str]) -> dict[str, str]:
    """Each id's shortest prefix of at least SHORT_ID_CHARS characters (after a `xx_`
    prefix) that no other id in `ids` starts with; an id no prefix singles out stays whole."""
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for n, mid in enumerate(ordered):
        neighbours = ordered[max(0, n - 1) : n] + ordered[n + 1 : n + 2]
        shared = max((_common(mid, o) for o in neighbours), default=0)
        head = mid.index("_") + 1 if "_" in mid[:5] else 0
        out[mid] = mid[: max(shared + 1, head + SHORT_ID_CHARS)]
    return out


def _common(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def resolve_id(session: Session, given: str) -> str:
    """The message id `given` names: a whole id, or a prefix of exactly one id in the view."""
    if given in session.messages:
        return given
    if not given:
        raise InvalidParams("an empty message id names no message (see `baton show`)")
    found = [mid for mid in session.view if mid.startswith(given)]
    if given.isdigit() and int(given) < len(session.view):
        _an_index(session, given, found)
    if len(found) == 1:
        return found[0]
    if not found:
        raise InvalidParams(f"no message id in the view starts with {given!r} (see `baton show`)")
    listed = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
    raise InvalidParams(f"{given!r} is the start of {len(found)} message ids: {listed}")


def _an_index(session: Session, given: str, found: list[str]) -> None:
    """InvalidParams for a number that is the index of a row of `baton show` (its #
    column): read as the start of an id, it named another message than that row's, or
    none, with not a word."""
    shorts = short_ids(list(session.messages))
    row = f"#{int(given)} of `baton show` is message {shorts[session.view[int(given)]]}"
    if not found:
        head = f"no message id in the view starts with {given!r}: {row}"
    elif len(found) == 1:
        also = f"message {shorts[found[0]]} (#{session.view.index(found[0])})"
        head = f"{row}; {given!r} also starts {also}"
    else:
        head = f"{given!r} is the start of {len(found)} message ids, and {row}"
    raise InvalidParams(f"{head}: give the id as `baton show` prints it, not the row's #")


def preview(message: Message, chars: int = PREVIEW_CHARS) -> str:
    """The first words of a message on one line; blocks without text say what they are."""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            parts.append(f"[{block.name} {json.dumps(block.input, ensure_ascii=False)}]")
        elif isinstance(block, ToolResultBlock):
            error = " error" if block.is_error else ""
            parts.append(f"[result{error}: {_result_text(block)}]")
        elif isinstance(block, ThinkingBlock):
            parts.append(f"[thinking: {block.thinking}]")
        elif isinstance(block, RedactedThinkingBlock):
            parts.append("[redacted thinking]")
        elif isinstance(block, ImageBlock):
            parts.append("[image]")
        elif isinstance(block, DocumentBlock):
            parts.append("[document]")
    text = first_words(parts, chars)  # a huge message's words not all split
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _result_text(block: ToolResultBlock) -> str:
    content = block.content
    if isinstance(content, str):
        return content
    texts = [str(c.get("text", "")) for c in content or [] if c.get("type") == "text"]
    return " ".join(texts) or "(no text)"


def rows(session: Session) -> list[dict[str, Any]]:
    """One JSON-ready row per message of the view, in order."""
    view = session.view_messages()
    shorts = short_ids(list(session.messages))
    return [
        {
            "index": n,
            "id": m.id,
            "shortId": shorts[m.id],
            "role": m.role,
            "kind": m.kind,
            "tokens": m.tokens,
            "createdAt": m.created_at,
            "pinned": m.pinned,
            "preview": preview(m),
        }
        for n, m in enumerate(view)
    ]


def table(table_rows: Sequence[dict[str, Any]]) -> list[str]:
    """The rows as aligned text columns: index, short id, role, kind, tokens, first words."""
    id_width = max([len("id"), *(len(r["shortId"]) for r in table_rows)])
    index_width = max(1, len(str(len(table_rows) - 1)))
    tokens_width = max([len("tokens"), *(len(f"{r['tokens']:,}") for r in table_rows)])
    head = f"{'#':>{index_width}}  {'id':<{id_width}}  role       kind        "
    lines = [f"{head}{'tokens':>{tokens_width}}  first words"]
    for r in table_rows:
        pin = " (pinned)" if r["pinned"] else ""
        lines.append(
            f"{r['index']:>{index_width}}  {r['shortId']:<{id_width}}  {r['role']:<9}  "
            f"{r['kind']:<10}  {r['tokens']:>{tokens_width},}  {r['preview']}{pin}"
        )
    return lines
