"""Compaction over the wire: baton/compact, baton/uncompact and the baton.* commands."""

from __future__ import annotations

from lsp_harness import Harness, conversation

from baton import protocol

# every field a CompactResult always sends (all but those that default to None), by wire name
RESULT_KEYS = {
    field.alias or name
    for name, field in protocol.CompactResult.model_fields.items()
    if field.is_required() or field.default is not None
}


async def _session_with(lsp: Harness, turns: int) -> tuple[str, list[str]]:
    sid = (await lsp.create(title="long"))["sessionId"]
    ids = (await lsp.append(sid, *conversation(turns)))["messageIds"]
    return sid, ids


async def test_compact_all_replaces_old_messages_with_a_summary(lsp: Harness) -> None:
    # enough text that the keep window (10,000 tokens) leaves something to summarize
    sid, ids = await _session_with(lsp, 40)
    mark = lsp.recorder.mark()
    result = await lsp.request(protocol.COMPACT, {"sessionId": sid})
    assert result.keys() >= RESULT_KEYS
    assert result["direction"] == "all"
    assert result["trigger"] == "manual"
    assert result["summarizer"] == "extractive"  # no key: the offline summarizer
    assert result["summary"]
    assert result["summarizedMessageIds"] == ids[: len(result["summarizedMessageIds"])]
    assert result["keptMessageIds"] == ids[len(result["summarizedMessageIds"]) :]
    assert result["postTokens"] < result["preTokens"]

    view = await lsp.get(sid)
    assert view["messages"][0]["kind"] == "summary"
    assert [m["id"] for m in view["messages"] if m["kind"] == "message"] == result["keptMessageIds"]
    assert view["session"]["compactions"] == 1
    changed = await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "compact", after=mark
    )
    assert changed["sessionId"] == sid
    usage = await lsp.recorder.notification(protocol.USAGE_CHANGED, after=mark)
    assert usage["usage"]["usedTokens"] < result["preTokens"]


async def test_dry_run_plans_without_changing_anything(lsp: Harness) -> None:
    sid, ids = await _session_with(lsp, 40)
    before = await lsp.render(sid)
    plan = await lsp.request(protocol.COMPACT, {"sessionId": sid, "dryRun": True})
    assert plan["summary"] is None
    assert plan["summarizedMessageIds"]
    assert plan["summarizedMessageIds"] + plan["keptMessageIds"] == ids
    after = await lsp.render(sid)
    assert after == before
    preview = await lsp.command(protocol.CMD_PREVIEW_COMPACT, {"sessionId": sid})
    assert preview["summary"] is None
    assert preview["summarizedMessageIds"] == plan["summarizedMessageIds"]
    assert (await lsp.render(sid)) == before
    # the command takes the request's dryRun as the request does: a client moving from one
    # to the other gets a plan, never a commit it did not ask for
    dry = await lsp.command(protocol.CMD_COMPACT, {"sessionId": sid, "dryRun": True})
    assert dry["summary"] is None and dry["boundaryId"] == ""
    assert dry["summarizedMessageIds"] == plan["summarizedMessageIds"]
    assert (await lsp.render(sid)) == before


async def test_compact_up_to_from_and_range_requests(lsp: Harness) -> None:
    sid, ids = await _session_with(lsp, 6)
    up_to = await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[3]}
    )
    assert up_to["summarizedMessageIds"] == ids[:4]
    assert up_to["keptMessageIds"] == ids[4:]
    view = [m for m in (await lsp.get(sid))["messages"] if m["kind"] != "attachment"]
    assert view[0]["kind"] == "summary"
    assert [m["id"] for m in view[1:]] == ids[4:]

    sid2, ids2 = await _session_with(lsp, 6)
    from_here = await lsp.request(
        protocol.COMPACT, {"sessionId": sid2, "direction": "from", "pivotMessageId": ids2[6]}
    )
    assert from_here["keptMessageIds"] == ids2[:6]
    assert from_here["summarizedMessageIds"] == ids2[6:]
    view2 = (await lsp.get(sid2))["messages"]
    assert [m["id"] for m in view2[:6]] == ids2[:6]  # the cached prefix survives
    assert view2[6]["kind"] == "summary"

    sid3, ids3 = await _session_with(lsp, 6)
    span = await lsp.request(
        protocol.COMPACT,
        {
            "sessionId": sid3,
            "direction": "range",
            "pivotMessageId": ids3[2],
            "endMessageId": ids3[7],
        },
    )
    assert span["summarizedMessageIds"] == ids3[2:8]
    kinds = [(m["id"], m["kind"]) for m in (await lsp.get(sid3))["messages"]]
    assert kinds[:2] == [(ids3[0], "message"), (ids3[1], "message")]
    assert kinds[2][1] == "summary"
    assert [mid for mid, kind in kinds if kind == "message"][2:] == ids3[8:]


async def test_commands_compact_with_one_argument_object(lsp: Harness) -> None:
    sid, ids = await _session_with(lsp, 6)
    result = await lsp.command(
        protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "pivotMessageId": ids[1]}
    )
    assert result["direction"] == "up_to"
    assert result["summarizedMessageIds"] == ids[:2]

    sid, ids = await _session_with(lsp, 6)
    # `messageId`, the commands' first spelling of the pivot, is still accepted
    result = await lsp.command(protocol.CMD_COMPACT_FROM, {"sessionId": sid, "messageId": ids[8]})
    assert result["direction"] == "from"
    assert result["summarizedMessageIds"] == ids[8:]

    sid, ids = await _session_with(lsp, 6)
    result = await lsp.command(
        protocol.CMD_COMPACT_RANGE, {"sessionId": sid, "messageId": ids[4], "endMessageId": ids[5]}
    )
    assert result["direction"] == "range"
    assert result["summarizedMessageIds"] == ids[4:6]

    sid, ids = await _session_with(lsp, 40)
    result = await lsp.command(protocol.CMD_COMPACT, {"sessionId": sid, "instructions": "terse"})
    assert result["direction"] == "all"


async def test_uncompact_restores_the_original_messages(lsp: Harness) -> None:
    sid, ids = await _session_with(lsp, 6)
    first = await lsp.request(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[3]}
    )
    second = await lsp.command(protocol.CMD_COMPACT_FROM, {"sessionId": sid, "messageId": ids[10]})
    assert first["boundaryId"] != second["boundaryId"]

    mark = lsp.recorder.mark()
    undone = await lsp.request(
        protocol.UNCOMPACT, {"sessionId": sid, "boundaryId": first["boundaryId"]}
    )
    assert "usedTokens" in undone["usage"]
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "uncompact", after=mark
    )
    view = (await lsp.get(sid))["messages"]
    assert [m["id"] for m in view[:10]] == ids[:10]  # the first compaction is undone
    assert view[10]["kind"] == "summary"  # the second one stays

    result = await lsp.command(protocol.CMD_UNCOMPACT, {"sessionId": sid})
    assert "usage" in result
    view = (await lsp.get(sid))["messages"]
    assert [m["id"] for m in view] == ids
    assert (await lsp.get(sid))["session"]["compactions"] == 0


async def test_nothing_to_compact_and_nothing_to_undo(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    error = await lsp.error(protocol.COMPACT, {"sessionId": sid})
    assert error.baton_code == "nothing_to_compact"
    error = await lsp.error(protocol.UNCOMPACT, {"sessionId": sid})
    assert error.baton_code == "nothing_to_compact"
    assert (await lsp.get(sid))["messages"] == []


async def test_compaction_errors_name_the_missing_thing(lsp: Harness) -> None:
    sid, ids = await _session_with(lsp, 3)
    missing = await lsp.error(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": "msg_nope"}
    )
    assert missing.baton_code == "message_not_found"
    no_pivot = await lsp.error(protocol.COMPACT, {"sessionId": sid, "direction": "up_to"})
    assert no_pivot.baton_code == "invalid_params"
    unknown = await lsp.error(protocol.COMPACT, {"sessionId": "s_missing"})
    assert unknown.baton_code == "session_not_found"
    command = await lsp.error(
        "workspace/executeCommand",
        {
            "command": protocol.CMD_COMPACT_UP_TO,
            "arguments": [{"sessionId": "s_missing", "messageId": "m"}],
        },
    )
    assert command.baton_code == "session_not_found"
    assert [m["id"] for m in (await lsp.get(sid))["messages"]] == ids


async def test_commands_need_exactly_one_argument_object(lsp: Harness) -> None:
    sid, _ids = await _session_with(lsp, 2)
    for arguments in ([], [{"sessionId": sid}, {"sessionId": sid}], ["just a string"], [None]):
        error = await lsp.error(
            "workspace/executeCommand", {"command": protocol.CMD_COMPACT, "arguments": arguments}
        )
        assert error.baton_code == "invalid_params", arguments
    missing_field = await lsp.error(
        "workspace/executeCommand",
        {"command": protocol.CMD_COMPACT_UP_TO, "arguments": [{"sessionId": sid}]},
    )
    assert missing_field.baton_code == "invalid_params"
    unknown = await lsp.error(
        "workspace/executeCommand", {"command": "baton.nope", "arguments": [{}]}
    )
    assert unknown.baton_code == "invalid_params"
    assert (await lsp.get(sid))["session"]["compactions"] == 0
