"""What a compaction replaced, over the wire (`baton/session/replaced`, a page at a time, as
the transcript holds them), and the session's task list on its view (`SessionView.todos`,
also an imported Claude Code session's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_harness import Harness, assistant, conversation, user

from baton import protocol


def _todo_call(call_id: str, *items: tuple[str, str, str]) -> dict[str, Any]:
    todos = [{"content": c, "status": s, "activeForm": a} for c, s, a in items]
    return {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": call_id, "name": "TodoWrite", "input": {"todos": todos}}
        ],
    }


def _result(call_id: str, text: str = "Task list saved.") -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text}],
    }


async def test_the_messages_a_compaction_replaced_come_a_page_at_a_time(lsp: Harness) -> None:
    sid = (await lsp.create(title="replaced"))["sessionId"]
    turns = [*conversation(20), _todo_call("toolu_1", ("Fix the parser", "pending", "Fixing"))]
    turns += [_result("toolu_1"), user("go on"), assistant("On it.")]
    ids = (await lsp.append(sid, *turns))["messageIds"]
    originals = {mid: turn for mid, turn in zip(ids, turns, strict=True)}
    result = await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[-3]}
    )
    summarized = result["summarizedMessageIds"]
    assert summarized == ids[: len(summarized)] and len(summarized) > 12
    boundary = result["boundaryId"]
    view = await lsp.get(sid)
    assert view["messages"][0]["kind"] == "summary"
    assert view["messages"][0]["boundaryId"] == boundary

    pages: list[dict[str, Any]] = []
    offset = 0
    while True:
        page = await lsp.request(
            protocol.SESSION_REPLACED,
            {"sessionId": sid, "boundaryId": boundary, "offset": offset, "limit": 5},
        )
        assert page["boundaryId"] == boundary and page["offset"] == offset
        assert page["totalMessages"] == len(summarized) and len(page["messages"]) <= 5
        pages.append(page)
        offset += len(page["messages"])
        if offset >= page["totalMessages"]:
            break
    shown = [m for page in pages for m in page["messages"]]
    assert [m["id"] for m in shown] == summarized
    for message in shown:  # as they were appended: the transcript's text, not the summary's
        sent = originals[message["id"]]["content"]
        if isinstance(sent, str):
            assert message["content"][0]["text"] == sent
    todo = next(m for m in shown if m["content"][0].get("name") == "TodoWrite")
    # the call's result sits on the next page: its status is read from the whole span
    assert todo["toolCalls"][0]["status"] == "done"

    whole = await lsp.request(protocol.SESSION_REPLACED, {"sessionId": sid, "boundaryId": boundary})
    assert [m["id"] for m in whole["messages"]] == summarized and whole["offset"] == 0
    past = await lsp.request(
        protocol.SESSION_REPLACED, {"sessionId": sid, "boundaryId": boundary, "offset": 999}
    )
    assert past["messages"] == [] and past["totalMessages"] == len(summarized)


async def test_an_unknown_compaction_or_a_bad_page_is_invalid_params(lsp: Harness) -> None:
    sid = (await lsp.create(title="replaced"))["sessionId"]
    await lsp.append(sid, *conversation(4))
    unknown = await lsp.error(
        protocol.SESSION_REPLACED, {"sessionId": sid, "boundaryId": "cmp_nothing"}
    )
    assert unknown.data["code"] == "invalid_params" and "cmp_nothing" in unknown.message
    for bad in ({"boundaryId": ""}, {"boundaryId": "cmp_x", "limit": 0}, {}):
        error = await lsp.error(protocol.SESSION_REPLACED, {"sessionId": sid, **bad})
        assert error.data["code"] == "invalid_params", bad
    missing = await lsp.error(
        protocol.SESSION_REPLACED, {"sessionId": "nosuchsession", "boundaryId": "cmp_x"}
    )
    assert missing.data["code"] == "session_not_found"


async def test_the_view_carries_the_latest_task_list_through_a_compaction(lsp: Harness) -> None:
    sid = (await lsp.create(title="todos"))["sessionId"]
    await lsp.append(sid, *conversation(6))
    assert "todos" not in await lsp.get(sid)  # never written: absent
    await lsp.append(
        sid,
        _todo_call(
            "toolu_a",
            ("Read the spec", "in_progress", "Reading the spec"),
            ("Write it", "pending", "Writing it"),
        ),
        _result("toolu_a"),
    )
    assert (await lsp.get(sid))["todos"] == [
        {"content": "Read the spec", "status": "in_progress", "activeForm": "Reading the spec"},
        {"content": "Write it", "status": "pending", "activeForm": "Writing it"},
    ]
    later = await lsp.append(
        sid,
        _todo_call(
            "toolu_b",
            ("Read the spec", "completed", "Reading the spec"),
            ("Write it", "in_progress", "Writing it"),
        ),
        _result("toolu_b"),
        user("thanks"),
        assistant("Writing it now."),
        *conversation(6),
    )
    pivot = later["messageIds"][3]  # the calls are summarized away
    compacted = await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": pivot}
    )
    assert later["messageIds"][0] in compacted["summarizedMessageIds"]
    view = await lsp.get(sid)
    assert view["messages"][0]["kind"] == "summary"
    assert [(t["content"], t["status"]) for t in view["todos"]] == [
        ("Read the spec", "completed"),
        ("Write it", "in_progress"),
    ]


async def test_an_imported_claude_code_sessions_task_list_is_on_its_view(
    lsp: Harness, tmp_path: Path
) -> None:
    def record(n: int, role: str, content: list[dict[str, Any]]) -> str:
        return json.dumps(
            {
                "type": role,
                "uuid": f"u{n}",
                "parentUuid": f"u{n - 1}" if n else None,
                "sessionId": "cc1",
                "timestamp": f"2025-01-01T00:00:{n:02d}Z",
                "message": {"role": role, "content": content},
            }
        )

    items = [
        {"content": "Import it", "status": "completed", "activeForm": "Importing it"},
        {"content": "Check it", "status": "in_progress", "activeForm": "Checking it"},
    ]
    call = {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": items}}
    lines = [
        record(0, "user", [{"type": "text", "text": "Plan it."}]),
        record(1, "assistant", [call]),
        record(2, "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        record(3, "assistant", [{"type": "text", "text": "Checking."}]),
    ]
    path = tmp_path / "cc.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = await lsp.request(protocol.SESSION_IMPORT, {"path": str(path)})
    assert (await lsp.get(session["sessionId"]))["todos"] == items
