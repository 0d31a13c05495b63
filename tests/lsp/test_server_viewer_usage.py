"""A look at a session another server writes, by a client that only polls its usage."""

from __future__ import annotations

from typing import Any

from lsp_harness import Harness, conversation, user

from baton import protocol


async def test_a_usage_poll_that_finds_the_session_moved_on_tells_the_reload(
    lsp: Harness, start_server: Any
) -> None:
    """A meter that only asks `baton/usage` of a session another server writes got the
    fresh figure, but no `sessionChanged` (`reload`) and no `usageChanged`: only a get or
    a render told them, so the session's document and diagnostics stayed behind the
    figure the meter showed."""
    sid = (await lsp.create(title="shared"))["sessionId"]
    await lsp.append(sid, *conversation(3))
    viewer = await start_server()
    first = await viewer.request(protocol.USAGE, {"sessionId": sid})
    await lsp.append(sid, user("and one more thing " * 200))
    heard = len(viewer.recorder.received)
    polled = await viewer.request(protocol.USAGE, {"sessionId": sid})
    assert polled["usedTokens"] > first["usedTokens"]  # the fresh figure
    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload", heard
    )
    moved = await viewer.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["sessionId"] == sid, heard
    )
    assert moved["usage"]["usedTokens"] == polled["usedTokens"]
    rendered = await viewer.render(sid)  # the document had the new message already
    assert "and one more thing" in rendered["text"]
