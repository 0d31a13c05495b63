"""`baton acp`'s session/load replays the view a slice at a time, giving the loop back
between slices (issue 26, item 8): another session's request is answered while a long
session's replay is under way (a list's read of the data dir before its next slice), the
load's updates still all before its answer, and a close or a session/cancel of the
session meanwhile stops the replay. Checked by order:
the replay is held at the end of its first slice (the drain of what it queued)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import TextContentBlock

from baton import protocol as p
from baton.acp import loading, told_live
from baton.acp.agent import BatonAgent
from baton.core.conversation import listing
from baton.core.conversation.store import SessionStore
from baton.core.service.service import BatonService
from baton.core.settings import Settings

WAIT = 20.0  # an upper bound, never a pause
MESSAGES = 40
SLICE = 5


class HeldTransport:
    """An ACP transport that keeps what the agent posts and holds the first drain after
    the first message the session's replay tells until released."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.messages: list[dict[str, Any]] = []
        self.replaying = asyncio.Event()
        self.release = asyncio.Event()

    def post(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        params = message.get("params", {})
        told = str(params.get("update", {}).get("sessionUpdate", "")).endswith("message_chunk")
        if params.get("sessionId") == self.session_id and told:
            self.replaying.set()

    async def drain(self) -> None:
        if self.replaying.is_set():
            await asyncio.wait_for(self.release.wait(), WAIT)

    def told(self) -> list[str]:
        """The message ids the session's chunks were told under, in order."""
        return [
            m["params"]["update"]["messageId"]
            for m in self.messages
            if m["params"]["sessionId"] == self.session_id
            and m["params"]["update"]["sessionUpdate"].endswith("message_chunk")
        ]


async def _written(tmp_path: Path) -> tuple[Settings, str, list[str]]:
    settings = Settings.model_validate({"dataDir": str(tmp_path / "data")})
    maker = BatonService(settings)
    sid = maker.create("long").session_id
    maker.create("other")
    turns = [
        p.MessageInput(role="user" if i % 2 == 0 else "assistant", content=f"message {i}")
        for i in range(MESSAGES)
    ]
    maker.append(sid, turns)
    ids = [m.id for m in maker.session(sid).view_messages()]
    await maker.close()
    return settings, sid, ids


async def _loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[BatonAgent, HeldTransport, str, list[str], asyncio.Task[Any]]:
    monkeypatch.setattr(loading, "REPLAY_SLICE", SLICE)
    settings, sid, ids = await _written(tmp_path)
    transport = HeldTransport(sid)
    agent = BatonAgent(BatonService(settings), transport)
    agent.on_connect(None)
    load = asyncio.create_task(agent.load_session(cwd=str(tmp_path), session_id=sid))
    await asyncio.wait_for(transport.replaying.wait(), WAIT)
    return agent, transport, sid, ids, load


async def test_another_request_is_answered_while_a_load_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole view was queued in one go on the agent's loop: for 100,000 messages a
    session/list sent meanwhile waited 1.5-3.4 s for it."""
    agent, transport, _, ids, load = await _loading(tmp_path, monkeypatch)

    listed = await agent.list_sessions(cwd=None)

    assert not load.done()  # answered while the load's replay is held
    assert len(listed.sessions) == 2
    assert transport.told() == ids[:SLICE]
    transport.release.set()
    await asyncio.wait_for(load, WAIT)
    assert transport.told() == ids  # every message, in order, before the answer


async def test_a_close_during_a_load_stops_its_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, transport, sid, ids, load = await _loading(tmp_path, monkeypatch)

    await agent.close_session(session_id=sid)
    transport.release.set()

    with pytest.raises(RequestError) as refused:
        await asyncio.wait_for(load, WAIT)
    assert refused.value.code == -32800  # ACP's "request cancelled", not invalid params
    assert refused.value.data == {"code": "cancelled"}
    assert f"session {sid} was closed while it loaded" in str(refused.value)
    assert transport.told() == ids[:SLICE]  # nothing of the session after its close
    assert sid not in agent.live


async def test_a_cancel_during_a_load_stops_its_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent, transport, sid, ids, load = await _loading(tmp_path, monkeypatch)

    await agent.cancel(session_id=sid)
    transport.release.set()

    with pytest.raises(RequestError) as refused:
        await asyncio.wait_for(load, WAIT)
    assert refused.value.code == -32800 and refused.value.data == {"code": "cancelled"}
    assert "was cancelled (session/cancel)" in str(refused.value)
    assert transport.told() == ids[:SLICE]
    again = asyncio.create_task(agent.load_session(cwd=str(tmp_path), session_id=sid))
    await asyncio.wait_for(again, WAIT)  # a load again tells it all
    assert transport.told()[SLICE:] == ids


async def test_a_prompt_during_a_load_waits_for_its_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its turn's updates would come among the replay's: the turn starts once it ends."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    agent, transport, sid, ids, load = await _loading(tmp_path, monkeypatch)
    text = [TextContentBlock(type="text", text="go on")]
    prompt = asyncio.create_task(agent.prompt(session_id=sid, prompt=text))

    await agent.list_sessions(cwd=None)  # the loop went round: the prompt ran as far as it can

    assert not prompt.done() and agent.live[sid].turn is None
    transport.release.set()
    await asyncio.wait_for(load, WAIT)
    with contextlib.suppress(RequestError):  # no key: the turn is refused
        await asyncio.wait_for(prompt, WAIT)
    assert transport.told()[: len(ids)] == ids


async def test_a_list_reading_the_data_dir_is_answered_before_a_load_replays_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session/list reads the data dir in a worker thread, which shares the interpreter
    with the replay's slices on the loop: on a 100,000-message session a list sent during
    the load waited 0.68-0.75 s for a read of 0.25-0.32 s of the interpreter's time, and
    one of under 1 ms (the index up to date) waited 28 ms. The replay waits for a list's
    read between its slices. Checked by order: the list's read is held for as many turns
    of the loop as the whole replay takes."""
    agent, transport, _, ids, load = await _loading(tmp_path, monkeypatch)
    reading, read = threading.Event(), threading.Event()
    summaries = SessionStore.summaries

    def held(store: SessionStore, *args: Any) -> Any:
        reading.set()
        read.wait(WAIT)
        return summaries(store, *args)

    monkeypatch.setattr(SessionStore, "summaries", held)
    listing = asyncio.create_task(agent.list_sessions(cwd=None))
    await asyncio.to_thread(reading.wait, WAIT)
    transport.release.set()
    for _ in range(20 * MESSAGES):  # the loop's turns: the whole replay's, and more
        await asyncio.sleep(0)
    read.set()

    done, _ = await asyncio.wait({load, listing}, timeout=WAIT, return_when="FIRST_COMPLETED")

    assert done == {listing}  # the list first, the replay waiting for it
    assert len(listing.result().sessions) == 2
    await asyncio.wait_for(load, WAIT)
    assert transport.told() == ids  # every message, in order, before the answer


async def test_a_list_after_a_load_reads_only_what_the_load_appended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list's index did not hold a session the load read whole: a list sent during
    the replay of a 100,000-message session read its 23 MB again (0.2 s of the
    interpreter, the replay waiting). The load brings the session's entry of the index up
    to date in its lane, before its read; the list reads no more than the load appended."""
    settings, sid, ids = await _written(tmp_path)
    transport = HeldTransport(sid)
    transport.release.set()
    agent = BatonAgent(BatonService(settings), transport)
    agent.on_connect(None)
    await agent.load_session(cwd=str(tmp_path), session_id=sid)
    read_from: list[int] = []
    summarize = listing.summarize

    def summarized(path: str, st: Any, before: Any, **how: Any) -> Any:
        if sid in path:
            read_from.append(before.end if before is not None else 0)
        return summarize(path, st, before, **how)

    monkeypatch.setattr(listing, "summarize", summarized)

    listed = await agent.list_sessions(cwd=None)

    assert len(listed.sessions) == 2 and transport.told() == ids
    assert all(start > 0 for start in read_from)  # never from the start again


async def test_a_load_gives_the_loop_back_before_its_first_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before its first update the replay found the calls the server's tool loop
    answered, a look at every message of the view, in one go on the loop: for 100,000
    messages 0.27 s, a request answered on the loop waiting 0.16-0.3 s as the replay
    began. That look now gives the loop back every REPLAY_SCAN messages, as the telling
    does. Checked by order: a task queued just after the load runs before any update."""
    monkeypatch.setattr(told_live, "REPLAY_SCAN", SLICE)
    settings, sid, ids = await _written(tmp_path)
    transport = HeldTransport(sid)
    transport.release.set()
    agent = BatonAgent(BatonService(settings), transport)
    agent.on_connect(None)
    agent.service.session(sid)  # open already: the load reads nothing in its lane
    seen: list[int] = []

    async def other() -> None:
        seen.append(len(transport.told()))

    load = asyncio.create_task(agent.load_session(cwd=str(tmp_path), session_id=sid))
    await asyncio.create_task(other())
    await asyncio.wait_for(load, WAIT)

    assert seen == [0]  # the other task ran before the replay told anything
    assert transport.told() == ids


async def test_a_list_while_a_load_summarizes_the_session_is_answered_and_set_right_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load of a session the list's index has not seen (the agent just started)
    summarizes it first (0.26-0.6 s of parsing for 100,000 messages), and a session/list
    sent then waited for that summary (374-462 ms). The list now tells the session from
    its header (its first title, its creation's time) and the load, once it read the
    session, tells its title and updatedAt as they are after its answer. Checked by order:
    the load's summary is held until the list is answered."""
    settings, sid, _ = await _written(tmp_path)
    maker = BatonService(settings)
    maker.rename(sid, "The parser's refactor")
    session = maker.session(sid)
    title, updated = session.title, session.updated_at
    await maker.close()
    transport = HeldTransport(sid)
    transport.release.set()
    agent = BatonAgent(BatonService(settings), transport)
    agent.on_connect(None)
    summarizing, summarized = threading.Event(), threading.Event()
    summarize = listing.summarize

    def held(path: str, st: Any, before: Any, *, whole: bool, **kw: Any) -> Any:
        if sid in path and whole:
            summarizing.set()
            summarized.wait(WAIT)
        return summarize(path, st, before, whole=whole, **kw)

    monkeypatch.setattr(listing, "summarize", held)
    load = asyncio.create_task(agent.load_session(cwd=str(tmp_path), session_id=sid))
    await asyncio.to_thread(summarizing.wait, WAIT)
    listed = asyncio.create_task(agent.list_sessions(cwd=None))
    done, _ = await asyncio.wait({listed}, timeout=WAIT)
    summarized.set()

    assert done == {listed}  # answered while the load's summary was held
    row = next(s for s in listed.result().sessions if s.session_id == sid)
    assert row.title == "long" and row.updated_at != updated
    await asyncio.wait_for(load, WAIT)
    await asyncio.sleep(0)  # the loop's turn after the answer: what greet queued
    infos = [
        m["params"]["update"]
        for m in transport.messages
        if m["params"]["sessionId"] == sid
        and m["params"]["update"]["sessionUpdate"] == "session_info_update"
    ]
    assert infos == [{"sessionUpdate": "session_info_update", "title": title, "updatedAt": updated}]
    again = await agent.list_sessions(cwd=None)  # the load's summary: nothing to set right
    row = next(s for s in again.sessions if s.session_id == sid)
    assert (row.title, row.updated_at) == (title, updated)
    await agent.load_session(cwd=str(tmp_path), session_id=sid)
    await asyncio.sleep(0)
    assert sum(1 for m in transport.messages if "session_info" in str(m)) == 1
