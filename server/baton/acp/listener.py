"""The service's events told to the ACP client as `session/update`s: reply text as it
streams, the meter after every change, and each auto-compaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.acp.compaction_report import CompactionReport, boundary_summary
from baton.acp.meter import usage_update
from baton.core.service.events import AutoCompacted, Event, ReplyText, SessionChanged

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
    elif isinstance(event, SessionChanged) and event.tell_usage:
        outbox.update(event.session_id, usage_update(event.usage, event.session))
    elif isinstance(event, AutoCompacted):
        auto_compacted(agent, event)


def auto_compacted(agent: BatonAgent, event: AutoCompacted) -> None:
    """A committed auto-compaction is the entity of its boundary; a failed one a new one."""
    session = agent.service.session(event.session_id)
    compacted = event.outcome.outcome == "compacted"
    boundary_id = session.active[-1] if compacted and session.active else ""
    entity_id = f"compaction-{boundary_id}" if boundary_id else ""
    report = CompactionReport(agent.out, event.session_id, agent.compaction_entity, entity_id)
    report.start()
    if compacted:
        report.completed(boundary_summary(session, boundary_id), event.outcome.message)
    else:
        report.failed(event.outcome.message)
