"""The code actions a session document offers are the ones that can run now: an action
whose command would be refused (nothing to summarize, an undo that must wait) comes
disabled with the reason (a client that cannot grey it out does not get it)."""

from __future__ import annotations

from typing import Any

from lsp_harness import Harness, RpcError, assistant, conversation, user
from lsprotocol import types
from test_server_send import compaction_held, keyed_session

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

TOP = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


def _inside(lsp_doc: dict[str, Any], index: int) -> dict[str, Any]:
    """A range inside the heading line of the view's message `index`."""
    line = lsp_doc["messages"][index]["range"]["start"]["line"]
    return {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 2}}


async def _offered(lsp: Harness, sid: str, rng: dict[str, Any]) -> dict[str, Any]:
    """The actions offered on `rng`, by title."""
    actions = await lsp.request(
        types.TEXT_DOCUMENT_CODE_ACTION,
        {
            "textDocument": {"uri": protocol.session_uri(sid)},
            "range": rng,
            "context": {"diagnostics": []},
        },
    )
    return {action.title: action for action in actions}


def _greys_out(lsp: Harness) -> bool:
    code_action = lsp.capabilities.text_document.code_action  # type: ignore[union-attr]
    return bool(code_action.disabled_support)  # type: ignore[union-attr]


async def _run(lsp: Harness, action: types.CodeAction) -> Any:
    assert action.command is not None
    return await lsp.command(action.command.command, *(action.command.arguments or []))


async def test_a_compaction_with_nothing_to_summarize_is_not_offered_as_runnable(
    any_lsp: Harness,
) -> None:
    """A short conversation fits in the recent window kept verbatim, and a span of pinned
    messages has nothing to summarize: those compactions are refused (nothing_to_compact),
    so their actions come disabled, saying why, or not at all."""
    sid = (await any_lsp.create())["sessionId"]
    ids = (await any_lsp.append(sid, *conversation(2)))["messageIds"]
    await any_lsp.request(
        protocol.SESSION_PIN, {"sessionId": sid, "messageId": ids[0], "pinned": True}
    )
    doc = await any_lsp.render(sid)
    first = await _offered(any_lsp, sid, _inside(doc, 0))
    refused = {
        "Compact conversation": "recent window kept verbatim",
        "Compact up to here": "every message in the span is pinned",
    }
    for title, why in refused.items():
        error = await any_lsp.error(protocol.COMPACT, _params(sid, first, title))
        assert error.baton_code == "nothing_to_compact" and why in error.message
        if _greys_out(any_lsp):
            assert first[title].disabled is not None and why in first[title].disabled.reason
        else:
            assert title not in first
    assert first["Compact from here"].disabled is None
    assert (await _offered(any_lsp, sid, _inside(doc, 1)))["Compact up to here"].disabled is None

    result = await _run(any_lsp, first["Compact from here"])
    assert result["summarizedMessageIds"] == ids[1:]


def _params(sid: str, offered: dict[str, Any], title: str) -> dict[str, Any]:
    """The `baton/compact` request the action titled `title` stands for (asked directly,
    since a client that cannot grey it out was not given it)."""
    if title == "Compact conversation":
        return {"sessionId": sid, "direction": "all"}
    pivot = offered["Compact from here"].command.arguments[0]["pivotMessageId"]
    return {"sessionId": sid, "direction": "up_to", "pivotMessageId": pivot}


async def test_an_undo_that_would_be_refused_is_not_offered_as_runnable(
    any_lsp: Harness,
) -> None:
    """The rewind to a tool result, then another result for the same call: undoing the
    rewind would send two results for one call, so it is refused; its action comes
    disabled with the refusal, or not at all. Once the latest boundary can be undone,
    its action runs."""
    sid = (await any_lsp.create())["sessionId"]
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.py"}}
    ids = (
        await any_lsp.append(
            sid,
            user("What does a.py set?"),
            {"role": "assistant", "content": [call]},
            _result("x = 1"),
            assistant("It sets x to 1."),
        )
    )["messageIds"]
    rewound = await any_lsp.request(
        protocol.SESSION_REWIND, {"sessionId": sid, "messageId": ids[2]}
    )
    since = await any_lsp.append(sid, _result("x = 2"), assistant("It sets x to 2."))
    top = await _offered(any_lsp, sid, TOP)
    error = await any_lsp.error(
        protocol.UNCOMPACT, {"sessionId": sid, "boundaryId": rewound["boundaryId"]}
    )
    assert isinstance(error, RpcError) and error.baton_code == "invalid_params"
    if _greys_out(any_lsp):
        undo = top["Undo last rewind"]
        assert undo.command.arguments[0]["boundaryId"] == rewound["boundaryId"]
        assert undo.disabled is not None and undo.disabled.reason == error.message
    else:
        assert "Undo last rewind" not in top

    # the turn sent since rewound too: that rewind, the latest, can be undone
    second = await any_lsp.request(
        protocol.SESSION_REWIND, {"sessionId": sid, "messageId": since["messageIds"][0]}
    )
    undo = (await _offered(any_lsp, sid, TOP))["Undo last rewind"]
    assert undo.disabled is None
    assert undo.command.arguments[0]["boundaryId"] == second["boundaryId"]


def _result(text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": text}],
    }


async def test_while_a_compaction_runs_its_session_offers_no_runnable_compaction_or_undo(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    """While a compaction runs (its summary written by the model), every other compaction
    and the undo are refused (compaction_in_progress); their actions were offered as
    runnable all the same, and failed when run."""
    lsp, sid, ids = await keyed_session(start_server, 10)
    fake_anthropic.reply("<summary>the first part</summary>")
    first = {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[1]}
    await lsp.request(protocol.COMPACT, first)
    async with compaction_held(lsp, fake_anthropic, sid, ids[5]) as running:
        doc = await lsp.render(sid)
        offered = await _offered(lsp, sid, _inside(doc, 2))
        assert set(offered) == {
            "Compact conversation",
            "Compact up to here",
            "Compact from here",
            "Undo last compaction",
        }
        for title, action in offered.items():
            assert action.disabled is not None, f"{title} offered as runnable"
            assert action.command is not None
            command = {"command": action.command.command, "arguments": action.command.arguments}
            refused = await lsp.error(types.WORKSPACE_EXECUTE_COMMAND, command)
            assert refused.baton_code == "compaction_in_progress"
            assert action.disabled.reason == refused.message, title
    assert (await running)["summary"].startswith("held summary")
    doc = await lsp.render(sid)
    offered = await _offered(lsp, sid, _inside(doc, 2))
    assert [t for t, a in offered.items() if a.disabled is not None] == ["Compact conversation"]
