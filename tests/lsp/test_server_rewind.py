"""`baton/session/rewind` over the wire: the view cut before a message, said as a
`rewind` change, and `baton/uncompact` with its boundary putting the messages back."""

from __future__ import annotations

from lsp_harness import Harness, conversation

from baton import protocol


async def test_rewind_then_undo_over_the_wire(lsp: Harness) -> None:
    sid = (await lsp.create(title="rewind"))["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    before = await lsp.get(sid)

    mark = lsp.recorder.mark()
    rewound = await lsp.request(protocol.SESSION_REWIND, {"sessionId": sid, "messageId": ids[2]})
    assert rewound["rewoundMessageIds"] == ids[2:]
    assert rewound["usage"]["usedTokens"] < before["usage"]["usedTokens"]
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "rewind", after=mark
    )
    after = await lsp.get(sid)
    assert [m["id"] for m in after["messages"]] == ids[:2]
    assert after["session"]["compactions"] == 0

    await lsp.request(protocol.UNCOMPACT, {"sessionId": sid, "boundaryId": rewound["boundaryId"]})
    assert [m["id"] for m in (await lsp.get(sid))["messages"]] == ids


async def test_rewind_to_an_unknown_message_is_invalid_params(lsp: Harness) -> None:
    sid = (await lsp.create(title="rewind"))["sessionId"]
    error = await lsp.error(protocol.SESSION_REWIND, {"sessionId": sid, "messageId": "msg_nope"})
    assert error.data["code"] == "invalid_params"
    assert "not in this session's view" in error.message
