"""A session opened for `session/load` and `session/resume`: read from its transcript off
the event loop, and, for a load, its history replayed a slice at a time, the loop given
back between slices."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from baton.acp.errors import cancelled
from baton.acp.history import replaying
from baton.acp.meter import session_cost
from baton.acp.open_sessions import Live, Replay
from baton.core.conversation.session import Session
from baton.core.usage.session_usage import compute_usage

if TYPE_CHECKING:
    from baton.acp.agent import BatonAgent

REPLAY_SLICE = 500  # messages a load replays between giving the loop back


async def replay(agent: BatonAgent, live: Live, session: Session, cwd: str) -> None:
    """The view's updates queued, a slice of REPLAY_SLICE messages at a time, the
    loop given back between slices (100,000 messages: a second of work, every other
    session waiting); in wire order still, as each slice is queued whole. Another
    load's replay of the session ends first; a close of the session or a
    session/cancel meanwhile stops this one, the load answered as cancelled. A list's read
    of the data dir goes first: its thread would share the interpreter with the
    slices (a list of 1 ms waiting 30 ms, one of 0.3 s waiting 0.7 s)."""
    sid = live.session_id
    while live.replay is not None:
        await live.replay.done.wait()
    if agent.live.get(sid) is not live:
        raise cancelled(f"session {sid} was closed while it loaded: load it again")
    report = live.host.report
    told = set(report.told) if report is not None else set()  # a round in flight's calls
    running = live.replay = Replay()
    try:
        folders = [Path(cwd)]
        replayed = replaying(agent.out, session, agent.compaction_entity, folders, told)
        for count in replayed:
            if count % REPLAY_SLICE:
                continue
            await agent.out.drain()  # the slice written, as the client reads
            await asyncio.sleep(0)  # and the loop given back
            while agent.listing:  # a list's read first: its thread shares the interpreter
                await asyncio.wait(set(agent.listing))
            if agent.live.get(sid) is not live:
                raise cancelled(f"session {sid} was closed while it loaded: load it again")
            if running.stopped:
                raise cancelled(
                    f"the load of session {sid} was cancelled (session/cancel) before "
                    f"its history was told: load it again to see it"
                )
    finally:
        live.replay = None
        running.done.set()


async def opened(agent: BatonAgent, session_id: str) -> Session:
    """The session, read from its transcript in its lane, off the event loop, when it
    is not open yet (100,000 messages: seconds, every other session waiting); one open
    already is as it is (its lane may hold a compaction a load tells as running). A list
    meanwhile leaves the session to the read (`SessionIndex.being_read`)."""
    store = agent.service.store
    if session_id not in store.held():
        with store.being_read(session_id):
            await agent.service.in_lane(session_id, partial(_read, agent, session_id))
    return agent.service.session(session_id)


async def look(agent: BatonAgent, session_id: str) -> None:
    """The session as its file holds it now, before a turn: read again in its lane when
    another process wrote it (a look, as an editor's get is), and what that process added
    told first (`listener.told_elsewhere`), so the client holds what the request carries."""
    service = agent.service
    await service.in_lane(session_id, partial(service.session, session_id))
    service.looked(session_id)


def _read(agent: BatonAgent, session_id: str) -> None:
    """The session read, its entry of the list's index brought up to date first: a
    list during the replay would read it whole itself (0.2 s for 100,000 messages,
    sharing the interpreter with the replay). The
    meter's anchor, cost and figure are found here too, each a walk over every message
    (the figure's first: which messages hold images or documents, 0.3-0.6 s for
    100,000) that the meter told after the answer would make on the loop; the loop's
    figure then reads the view's tallies as they are left here."""
    service = agent.service
    service.store.note_read(session_id)
    session = service.session(session_id)
    if session_id not in agent.live:  # no turn of it changes it on the loop meanwhile
        session.anchor()
        session_cost(session)
        compute_usage(session, service.settings, service.estimator)
