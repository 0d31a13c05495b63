"""A session's heavy work runs off the event loop (issue 26): while one session's offline
compaction is held inside its summarizer, every other session's requests are answered;
the same session's work waits its turn; a cancel stops the compaction with nothing changed.
Checked by ordering (the compaction is still running when the other answers arrive)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton import protocol as p
from baton.acp import meter
from baton.acp.agent import BatonAgent
from baton.core.compaction.summary import extractive
from baton.core.conversation import listing
from baton.core.conversation import transcript_repairs as transcript_module
from baton.core.conversation.store import SessionStore
from baton.core.conversation.view_state import ViewState
from baton.core.conversation.view_tokens import ViewTokens
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features import compaction, sessions
from baton.lsp.features.common import Call
from baton.lsp.server import BatonServer, create_server
from baton_testkit.fake_anthropic import FakeAnthropic

WAIT = 20.0  # an upper bound, never a pause


class Gate:
    """Holds the calls it watches (in whatever thread they run) until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.threads: list[int] = []

    def hold(self) -> None:
        self.threads.append(threading.get_ident())
        self.entered.set()
        self.release.wait(WAIT)  # bounded: on the event loop this would hold everything

    async def wait_entered(self) -> bool:
        return await asyncio.to_thread(self.entered.wait, WAIT)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate()
    original = extractive.Facts.gather.__func__  # type: ignore[attr-defined]

    def gather(cls: Any, *args: Any, **kwargs: Any) -> Any:
        held.hold()  # the summarizer
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(extractive.Facts, "gather", classmethod(gather))
    yield held
    held.release.set()


@pytest.fixture
def server(tmp_path: Path) -> BatonServer:
    settings = Settings.model_validate({"dataDir": str(tmp_path), "summarizer": "extractive"})
    return create_server(BatonService(settings))


def turns(n: int, words: int = 200) -> list[p.MessageInput]:
    """`n` questions and their answers, each of `words` words after its number."""
    text = " ".join(f"w{j}" for j in range(words))
    out = []
    for i in range(n):
        out.append(p.MessageInput(role="user", content=f"question {i} {text}"))
        out.append(p.MessageInput(role="assistant", content=f"answer {i} {text}"))
    return out


async def _two_sessions(call: Call) -> tuple[str, str]:
    ids = []
    for title in ("held", "other"):
        sid = (await sessions.create(call, p.CreateParams(title=title))).session_id
        await sessions.append(call, p.AppendParams(session_id=sid, messages=turns(6)))
        ids.append(sid)
    return ids[0], ids[1]


def _compact(call: Call, session_id: str) -> Any:
    """Summarize all but the last turn of the session."""
    pivot = call.service.session(session_id).view_messages()[-3].id
    params = p.CompactParams(session_id=session_id, direction="up_to", pivot_message_id=pivot)
    return compaction.compact(call, params)


async def test_other_sessions_are_answered_while_a_compaction_runs(
    server: BatonServer, gate: Gate
) -> None:
    call = Call(server)
    held, other = await _two_sessions(call)
    running = asyncio.ensure_future(_compact(call, held))
    assert await gate.wait_entered()
    assert gate.threads[0] != threading.get_ident()  # not the event loop's thread
    # the other session: read, appended to, rendered, while the compaction is held
    usage = await sessions.usage(call, p.UsageParams(session_id=other))
    appended = await sessions.append(call, p.AppendParams(session_id=other, messages=turns(1)))
    view = await sessions.get(call, p.PageParams(session_id=other))
    rendered = await sessions.render(call, p.PageParams(session_id=other))
    assert not running.done()
    assert usage.used_tokens > 0 and len(appended.message_ids) == 2
    assert len(view.messages) == 14 and rendered.text.count("## User") == 7
    # the held session's own work waits for its compaction
    waiting = asyncio.ensure_future(sessions.render(call, p.PageParams(session_id=held)))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    gate.release.set()
    result = await asyncio.wait_for(running, WAIT)
    assert result.summarized_message_ids
    after = await asyncio.wait_for(waiting, WAIT)
    assert "summary" in after.text
    assert (await sessions.get(call, p.PageParams(session_id=held))).messages[0].kind == ("summary")


async def test_a_cancelled_compaction_off_the_loop_changes_nothing(
    server: BatonServer, gate: Gate
) -> None:
    call = Call(server)
    held, _ = await _two_sessions(call)
    before = [m.id for m in (await sessions.get(call, p.PageParams(session_id=held))).messages]
    running = asyncio.ensure_future(_compact(call, held))
    assert await gate.wait_entered()
    running.cancel()
    gate.release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, WAIT)
    view = await sessions.get(call, p.PageParams(session_id=held))
    assert [m.id for m in view.messages] == before
    assert not call.service.session(held).compacting
    # and the session compacts afterwards as usual
    done = await _compact(call, held)
    assert done.summarized_message_ids


async def test_auto_compact_runs_off_the_loop_too(tmp_path: Path, gate: Gate) -> None:
    # threshold 13,400 tokens: the held session's appends cross it and start auto-compact
    settings = Settings.model_validate(
        {
            "dataDir": str(tmp_path),
            "summarizer": "extractive",
            "contextWindow": 20_000,
            "keepWindow": {"minTokens": 300, "minTextMessages": 1, "maxTokens": 2_000},
        }
    )
    server = create_server(BatonService(settings))
    call = Call(server)
    held, other = await _two_sessions(call)
    for _ in range(30):  # ~800 tokens a turn
        await sessions.append(call, p.AppendParams(session_id=held, messages=turns(1)))
        if gate.entered.is_set():
            break
    assert await gate.wait_entered()  # the background auto-compact, held in its summarizer
    assert gate.threads[0] != threading.get_ident()
    session = call.service.session(held)
    assert session.compacting and not session.boundaries
    usage = await sessions.usage(call, p.UsageParams(session_id=other))
    view = await sessions.get(call, p.PageParams(session_id=other))
    assert usage.used_tokens > 0 and len(view.messages) == 12
    assert session.compacting and not session.boundaries  # still held meanwhile
    gate.release.set()
    for _ in range(int(WAIT / 0.05)):  # bounded: until the auto-compaction commits
        if session.boundaries:
            break
        await asyncio.sleep(0.05)
    assert session.boundaries and session.view_messages()[0].kind == "summary"


async def test_model_limits_first_asked_off_the_loop_are_still_fetched(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A usage computed in a worker thread (get, render) cannot start the Models API
    fetch there (no loop runs it): the next ask on the loop does."""
    fake_anthropic.models["claude-test-wide"] = {"max_input_tokens": 400_000, "max_tokens": 8_000}
    service = BatonService(Settings(data_dir=str(tmp_path)), api_key="sk-ant-test-lanes-000000")
    arrived = asyncio.Event()
    settings = service.settings
    assert (
        await asyncio.to_thread(service.models.limits, "claude-test-wide", settings, print) is None
    )
    assert service.models.limits("claude-test-wide", settings, lambda _: arrived.set()) is None
    await asyncio.wait_for(arrived.wait(), WAIT)
    found = service.models.limits("claude-test-wide", settings, print)
    assert found is not None and found.max_input_tokens == 400_000
    await service.close()


async def test_other_sessions_are_answered_while_a_list_reads_a_transcript(
    server: BatonServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list reads each transcript new to its index (ten of 24 MB: some 3.5 s, every other
    request waiting, when it read them on the event loop) in a worker thread."""
    call = Call(server)
    held, other = await _two_sessions(call)
    elsewhere = SessionStore(server.service.settings.resolved_data_dir(), lambda _: 1)
    written = elsewhere.create("written by another process").session_id
    elsewhere.close()
    gate = Gate()
    original = listing.summarize

    def summarize(path: Any, *args: Any, **kwargs: Any) -> Any:
        if written in str(path):
            gate.hold()
        return original(path, *args, **kwargs)

    monkeypatch.setattr(listing, "summarize", summarize)
    listing_now = asyncio.ensure_future(sessions.list_sessions(call, p.NoParams()))
    try:
        assert await gate.wait_entered()
        assert gate.threads[0] != threading.get_ident()  # not the event loop's thread
        usage = await sessions.usage(call, p.UsageParams(session_id=other))
        appended = await sessions.append(call, p.AppendParams(session_id=held, messages=turns(1)))
        assert not listing_now.done()
        assert usage.used_tokens > 0 and len(appended.message_ids) == 2
    finally:
        gate.release.set()
    listed = await asyncio.wait_for(listing_now, WAIT)
    assert {s.session_id for s in listed.sessions} == {held, other, written}


@pytest.mark.parametrize(
    ("ending", "copy", "aside"),
    [(b"\n", "keep_aside", ".jsonl.bad"), (b"", "end_on_newline", ".jsonl.torn")],
    ids=["unreadable line", "torn last line"],
)
async def test_other_sessions_are_answered_while_a_first_write_keeps_lines_aside(
    server: BatonServer, monkeypatch: pytest.MonkeyPatch, ending: bytes, copy: str, aside: str
) -> None:
    """A session's first write copies what another program wrote into its transcript and
    the load could not read aside (an unreadable line to `.bad`; a torn last line to
    `.torn`, then cut), each read again from the file: for a line of 200 MB that held
    every other session 1.8 s (0.8 s for a torn one), on the event loop. A copy of over a
    MB is made in the session's lane first."""
    call = Call(server)
    held, other = await _two_sessions(call)
    path = server.service.session(held).transcript.path
    server.service.put_down(held)  # the file as another program leaves it
    garbage = b"not json " * 250_000  # 2.25 MB
    with path.open("ab") as handle:
        handle.write(garbage + ending)
    assert server.service.session(held).damage.lines == (1 if ending else 0)
    gate = Gate()
    original = getattr(transcript_module, copy)

    def copied(*args: Any, **kwargs: Any) -> Any:
        gate.hold()
        return original(*args, **kwargs)

    monkeypatch.setattr(transcript_module, copy, copied)
    appending = asyncio.ensure_future(
        sessions.append(call, p.AppendParams(session_id=held, messages=turns(1)))
    )
    try:
        assert await gate.wait_entered()
        assert gate.threads[0] != threading.get_ident()  # not the event loop's thread
        usage = await sessions.usage(call, p.UsageParams(session_id=other))
        assert not appending.done() and usage.used_tokens > 0
    finally:
        gate.release.set()
    assert len((await asyncio.wait_for(appending, WAIT)).message_ids) == 2
    assert path.with_suffix(aside).read_bytes() == garbage + b"\n"
    assert garbage not in path.read_bytes() or ending  # a torn line is cut
    again = await sessions.get(call, p.PageParams(session_id=held))
    assert len(again.messages) == 14


class _Posted:
    """An ACP transport that keeps what the agent posts."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def post(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    async def drain(self) -> None:
        return None


async def test_an_acp_load_reads_a_session_not_open_yet_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`baton acp`'s session/load read the transcript on the agent's loop: for 100,000
    messages every other request waited for it (a session/list 2.9-4.8 s, the replay's
    updates included). A session not open yet is read in its lane's thread."""
    settings = Settings.model_validate({"dataDir": str(tmp_path / "data")})
    maker = BatonService(settings)
    sid = maker.create("written before").session_id
    maker.append(sid, turns(3))
    await maker.close()
    read_on: list[int] = []
    original = SessionStore.get

    def get(store: SessionStore, session_id: str) -> Any:
        read_on.append(threading.get_ident())
        return original(store, session_id)

    agent = BatonAgent(BatonService(settings), _Posted())
    agent.on_connect(None)
    monkeypatch.setattr(SessionStore, "get", get)

    await agent.load_session(cwd=str(tmp_path), session_id=sid)

    assert read_on[0] != threading.get_ident()
    assert len(agent.service.session(sid).view) == 6 and sid in agent.live


async def test_an_acp_load_finds_the_meters_anchor_and_cost_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a load's answer, its `usage_update` found the usage's anchor and the cost on
    the agent's loop, each a walk over every message: for 100,000 messages 0.11-0.13 s at
    the load's end, a session/list sent then waiting 0.2-0.27 s. Both are found in the
    lane, where the load reads the session; the meter is told as before."""
    settings = Settings.model_validate({"dataDir": str(tmp_path / "data")})
    maker = BatonService(settings)
    sid = maker.create("written before").session_id
    maker.append(sid, turns(3))
    await maker.close()
    walked_on: list[int] = []
    find_anchor, cost = ViewTokens._find_anchor, meter._cost

    def found(*args: Any, **kwargs: Any) -> Any:
        walked_on.append(threading.get_ident())
        return find_anchor(*args, **kwargs)

    def costed(session: Any) -> Any:
        walked_on.append(threading.get_ident())
        return cost(session)

    monkeypatch.setattr(ViewTokens, "_find_anchor", found)
    monkeypatch.setattr(meter, "_cost", costed)
    posted = _Posted()
    agent = BatonAgent(BatonService(settings), posted)
    agent.on_connect(None)

    await agent.load_session(cwd=str(tmp_path), session_id=sid)
    for _ in range(3):  # the updates queued after the answer: the meter's the last
        await asyncio.sleep(0)

    assert len(walked_on) >= 2 and threading.get_ident() not in walked_on
    told = [m["params"]["update"] for m in posted.messages if m.get("method") == "session/update"]
    assert told[-1]["sessionUpdate"] == "usage_update"


async def test_an_acp_load_finds_the_meters_figure_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a load's answer, its `usage_update` worked out the figure on the agent's
    loop, the first for the view: which of its messages hold images or documents, a walk
    over every message (with its tallies, 0.5-0.7 s for 100,000 messages), a request sent
    then waiting as long. The figure is found in the lane, where the load reads the
    session; the loop's reads the tallies left there, and the meter is told as before."""
    settings = Settings.model_validate({"dataDir": str(tmp_path / "data")})
    maker = BatonService(settings)
    sid = maker.create("written before").session_id
    maker.append(sid, turns(3))
    await maker.close()
    walked_on: list[int] = []
    media_indices = ViewState.media_indices

    def walked(state: ViewState, view: Any) -> Any:
        if state.media_at is None:
            walked_on.append(threading.get_ident())
        return media_indices(state, view)

    monkeypatch.setattr(ViewState, "media_indices", walked)
    posted = _Posted()
    agent = BatonAgent(BatonService(settings), posted)
    agent.on_connect(None)

    await agent.load_session(cwd=str(tmp_path), session_id=sid)
    for _ in range(3):  # the updates queued after the answer: the meter's the last
        await asyncio.sleep(0)

    assert walked_on and threading.get_ident() not in walked_on
    told = [m["params"]["update"] for m in posted.messages if m.get("method") == "session/update"]
    assert told[-1]["sessionUpdate"] == "usage_update"
    assert told[-1]["used"] == agent.service.usage(sid).used_tokens
