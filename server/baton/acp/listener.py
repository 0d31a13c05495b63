"""The service's events told to the ACP client as `session/update`s: reply text as it
streams, the meter after every change, and each auto-compaction (in progress when it
starts its work, then its one end)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from baton.acp import turns
from baton.acp.compaction_report import CompactionReport, agent_text, boundary_summary
from baton.acp.history import replaying
from baton.acp.meter import usage_update
from baton.acp.open_sessions import Live, last_shown
from baton.core.service.events import (
    AutoCompacted,
    AutoCompactStarted,
    Event,
    ReplyText,
    SessionChanged,
)

if TYPE_CHECKING:
    from baton.acp.agent import BatonAgent
    from baton.core.conversation.session import Session


def told(agent: BatonAgent, event: Event) -> None:
    """One event, for a session this client has open (the others are not its business)."""
    outbox = agent.outbox
    if outbox is None or getattr(event, "session_id", None) not in agent.live:
        return
    if isinstance(event, ReplyText):  # the hottest path: the chunk's JSON written directly
        agent.live[event.session_id].streamed.setdefault(event.message_id, []).append(event.text)
        chunk = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": event.text},
            "messageId": event.message_id,
        }
        outbox.raw(event.session_id, chunk)
    elif isinstance(event, SessionChanged):
        live = agent.live[event.session_id]
        if event.reason == "reload":
            told_elsewhere(agent, live, event.session)
        elif live.replay is None:  # what this client changed it tells as it goes
            live.shown = last_shown(event.session)
        # a change that stored the turn's first prompt names the session
        turns.name_if_stored(agent, live, event.session)
        if event.tell_usage:
            outbox.update(event.session_id, usage_update(event.usage, event.session))
    elif isinstance(event, AutoCompactStarted):
        # named as its boundary is, so that a load replays it under the id seen live
        entity_id = f"compaction-{event.boundary_id}" if event.boundary_id else ""
        report = CompactionReport(agent.out, event.session_id, agent.compaction_entity, entity_id)
        agent.live[event.session_id].auto_compaction = report
        report.start()
    elif isinstance(event, AutoCompacted):
        auto_compacted(agent, event)


def told_elsewhere(agent: BatonAgent, live: Live, session: Session) -> None:
    """The session read again from its file, which another Baton process wrote (a look
    as a prompt is sent, once that process let go of it): the messages it added after
    the last one the client holds are told, after a word that they were added elsewhere,
    so the client shows what the next request carries. A view changed up to that message
    (compacted or undone there) is not told again: a word says to load it again."""
    if live.replay is not None:  # a load's replay tells the view it took
        return
    view = session.view
    start, last = live.shown
    if start and (len(view) < start or view[start - 1] != last):
        note = (
            "This conversation was changed in another Baton process (compacted, or undone "
            "there) since this panel showed it: load it again to see it as it is now."
        )
        agent_text(agent.out, live.session_id, note)
    elif start < len(view):
        note = "Added in another Baton process since this panel showed the conversation:"
        agent_text(agent.out, live.session_id, note)
        folders = [Path(live.cwd)]
        told = replaying(agent.out, session, agent.compaction_entity, folders, start=start)
        for _ in told:
            pass
    live.shown = last_shown(session)


def auto_compacted(agent: BatonAgent, event: AutoCompacted) -> None:
    """The end of the entity its start made; one that was not told started (the thrash
    guard's failure, or a session opened here meanwhile) is a new entity, started and
    ended at once: a committed one named after its boundary, as a replay names it. Only a
    committed one reads the session (held as it committed): one that failed may have
    failed on the session's file, which may not be read now."""
    outcome = event.outcome.outcome
    session = agent.service.session(event.session_id) if outcome == "compacted" else None
    boundary_id = session.active[-1] if session is not None and session.active else ""
    live = agent.live[event.session_id]
    report, live.auto_compaction = live.auto_compaction, None
    if report is None:
        entity_id = f"compaction-{boundary_id}" if boundary_id else ""
        report = CompactionReport(agent.out, event.session_id, agent.compaction_entity, entity_id)
        report.start()
    if session is not None:
        report.completed(boundary_summary(session, boundary_id), event.outcome.message)
    elif outcome == "cancelled":
        report.cancelled()
    else:
        report.failed(event.outcome.message)
