"""A session shown read-only (another server writes it) becomes writable once that
server lets go, told to a client that asks nothing meanwhile."""

from __future__ import annotations

from typing import Any

from lsp_harness import Harness, conversation, user

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-writer-let-go-0123456789"


async def test_a_viewer_that_asks_nothing_is_told_once_the_writer_let_go(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """Two windows on one data dir: the second shows the session the first writes,
    read-only. The first exits (its window closed, or a restart whose next server started
    before it had exited); the second's panel, sending nothing, kept Send off: only a look
    (a get, a usage) made its server the writer, and the panel looks again only when the
    window gets the focus back. Its server now notices on its own and tells it."""
    options = {"anthropicApiKey": API_KEY}
    writer: Harness = await start_server(options=options)
    sid = (await writer.create(title="shared"))["sessionId"]
    await writer.append(sid, *conversation(2))
    viewer: Harness = await start_server(options=options)
    assert (await viewer.get(sid))["session"]["readOnly"] is True
    await viewer.diagnostics(sid)  # its document's look done: nothing asks from here on
    heard = viewer.recorder.mark()

    await writer.close()  # shutdown, exit: its lock goes

    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload", heard
    )
    assert (await viewer.get(sid))["session"]["readOnly"] is False
    fake_anthropic.reply("Written here now.")
    sent = await viewer.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "go on"})
    assert sent["message"]["role"] == "assistant"
    texts = [m["content"] for m in (await viewer.get(sid))["messages"]]
    assert "go on" in str(texts) and "Written here now." in str(texts)


async def test_a_writer_gone_before_the_viewers_document_looked_is_told(start_server: Any) -> None:
    """The writer exits right after the viewer's get, before its document's diagnostics
    read the session: that read made the viewer the writer and told nothing, so its panel
    kept Send off (and the watch had no read-only session left to watch)."""
    writer: Harness = await start_server()
    sid = (await writer.create(title="shared"))["sessionId"]
    await writer.append(sid, *conversation(2))
    viewer: Harness = await start_server()
    assert (await viewer.get(sid))["session"]["readOnly"] is True
    heard = viewer.recorder.mark()

    await writer.close()

    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload", heard
    )
    assert (await viewer.get(sid))["session"]["readOnly"] is False
    await viewer.append(sid, user("written here now"))


async def test_a_viewer_told_the_writer_let_go_leaves_the_session_to_the_next_server(
    start_server: Any,
) -> None:
    """A window that once showed the session read-only (another window's server writing
    it) took the writer's lock on its own as soon as that server let go: the writer's
    window restarting its server (a new API key) found its conversation read-only, "open
    in another Baton process", though the other window no longer showed it and asked for
    nothing. The watch now only tells the viewer (`reload`); its client's get of the
    session is what makes it the writer, so the writer's next server opens it writable."""
    writer: Harness = await start_server()
    sid = (await writer.create(title="shared"))["sessionId"]
    await writer.append(sid, *conversation(2))
    viewer: Harness = await start_server()
    assert (await viewer.get(sid))["session"]["readOnly"] is True
    await viewer.diagnostics(sid)
    heard = viewer.recorder.mark()

    await writer.close()  # the restart: shutdown, exit, then the next server
    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload", heard
    )
    restarted: Harness = await start_server()

    assert (await restarted.get(sid))["session"]["readOnly"] is False
    await restarted.append(sid, user("written by the restarted server"))
    assert (await viewer.get(sid))["session"]["readOnly"] is True  # never two writers


async def test_the_let_go_the_watch_told_is_not_told_again_by_the_get_it_brings(
    start_server: Any,
) -> None:
    """The panel reads the session again on the watch's `reload`; that get, which makes its
    server the writer, told a second `reload` of the same view, so the panel read the
    whole session twice."""
    writer: Harness = await start_server()
    sid = (await writer.create(title="shared"))["sessionId"]
    await writer.append(sid, *conversation(2))
    viewer: Harness = await start_server()
    assert (await viewer.get(sid))["session"]["readOnly"] is True
    await viewer.diagnostics(sid)
    heard = viewer.recorder.mark()

    await writer.close()
    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload", heard
    )
    assert (await viewer.get(sid))["session"]["readOnly"] is False
    await viewer.request(protocol.USAGE, {"sessionId": sid})  # all told before its answer

    reloads = [
        p
        for m, p in viewer.recorder.received[heard:]
        if m == protocol.SESSION_CHANGED and p["sessionId"] == sid
    ]
    assert reloads == [{"sessionId": sid, "reason": "reload"}]


async def test_the_watch_tells_no_figure_of_a_view_it_did_not_read_again(
    start_server: Any,
) -> None:
    """The writer wrote after the viewer's last look, then exited: the watch's `reload`
    came with a `usageChanged` of the view the viewer held, the writer's last turn not in
    it, the meter told a figure the session no longer had until the panel's get read it
    again. The watch reads nothing: it tells the `reload` alone, and that get tells the
    figure of what it read."""
    writer: Harness = await start_server()
    sid = (await writer.create(title="shared"))["sessionId"]
    await writer.append(sid, *conversation(2))
    viewer: Harness = await start_server()
    assert (await viewer.get(sid))["session"]["readOnly"] is True
    await viewer.diagnostics(sid)
    await writer.append(sid, user("written after the viewer looked " * 300))
    heard = viewer.recorder.mark()

    await writer.close()
    await viewer.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["sessionId"] == sid and p["reason"] == "reload", heard
    )
    view = await viewer.get(sid)
    assert view["session"]["readOnly"] is False
    assert "written after the viewer looked" in str(view["messages"][-1])

    told = [
        p["usage"]["usedTokens"]
        for m, p in viewer.recorder.received[heard:]
        if m == protocol.USAGE_CHANGED and p["sessionId"] == sid
    ]
    assert told == [view["usage"]["usedTokens"]]
