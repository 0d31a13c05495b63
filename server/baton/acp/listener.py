"""The service's events told to the ACP client as `session/update`s: reply text as it
streams, the meter after every change, and each auto-compaction (in progress when it
starts its work, then its one end)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.acp import turns
from baton.acp.compaction_report import CompactionReport, boundary_summary
from baton.acp.meter import usage_update
from baton.core.service.events import (
    AutoCompacted,
    AutoCompactStarted,
    Event,
    ReplyText,
    SessionChanged,
)

if TYPE_CHECKING:
    from baton.acp.agent import BatonAgent


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
        # a change that stored the turn's first prompt names the session
        turns.name_if_stored(agent, agent.live[event.session_id], event.session)
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
