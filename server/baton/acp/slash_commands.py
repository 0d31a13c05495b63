"""The slash commands' turns (`/compact`, `/compact-up-to`, `/compact-from`,
`/undo-compact`, `/pin`, `/context`): each run and its answer said as the agent's own
message; `say` is how any part of a turn says one."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from baton.acp import commands
from baton.acp.compaction_report import (
    CompactionReport,
    agent_text,
    agent_wait,
    boundary_summary,
    done_sentence,
    undone_sentence,
)
from baton.acp.errors import told
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.boundary import Direction
from baton.core.conversation.messages import new_id
from baton.core.errors import BatonError
from baton.core.model_api.stream_failures import WaitText

if TYPE_CHECKING:
    from baton.acp.agent import BatonAgent
    from baton.acp.open_sessions import Live


def say(agent: BatonAgent, session_id: str, text: str) -> None:
    """An agent message of Baton's own (a command's answer, a note in the turn)."""
    if agent.outbox is not None and session_id in agent.live:
        agent_text(agent.outbox, session_id, text)


MICRO = "the old tool results it cleared after an idle gap are back"

DIRECTIONS: dict[str, Direction] = {
    "compact": "all",
    "compact-up-to": "up_to",
    "compact-from": "from",
}


async def run_command(agent: BatonAgent, live: Live, command: commands.Command) -> str:
    """A slash command's turn: run, its answer said; the stop reason."""
    sid = live.session_id
    service = agent.service
    session = service.session(sid)
    if command.name in DIRECTIONS:
        await _compact(agent, sid, command)
    elif command.name == "undo-compact":
        try:
            latest = commands.latest_compaction(session)
            before = service.usage(sid).used_tokens
            usage = await service.compaction.undo(sid, latest)
        except BatonError as exc:
            say(agent, sid, f"Nothing undone: {exc.message}")
        else:
            if session.boundaries[latest].direction == "microcompact":
                # told as no entity (old tool results cleared after an idle gap)
                what = f"the latest microcompaction ({MICRO})"
                say(agent, sid, undone_sentence(before, usage, what))
            else:
                # the entity the compaction was told as (live and replayed) under its id
                entity = CompactionReport(
                    agent.out, sid, agent.compaction_entity, f"compaction-{latest}"
                )
                entity.undone()
                say(agent, sid, undone_sentence(before, usage))
    elif command.name == "pin":
        message = commands.resolve(session, command.argument)
        pinned = not message.pinned
        service.pin(sid, message.id, pinned)
        number = session.view.index(message.id) + 1
        word = "Pinned" if pinned else "Unpinned"
        keeps = "compactions keep it verbatim" if pinned else "compactions may summarize it"
        say(agent, sid, f"{word} message {number} (`{message.id}`): {keeps}.")
    elif command.name == "context":
        say(agent, sid, commands.context_text(session, service.usage(sid)))
    return "end_turn"


async def _compact(agent: BatonAgent, sid: str, command: commands.Command) -> None:
    service = agent.service

    def _waits(text: str) -> None:  # of its progress, a wait to ask the API again is told
        if isinstance(text, WaitText):
            agent_wait(agent.out, sid, text)

    direction = DIRECTIONS[command.name]
    boundary_id = new_id("cmp")  # the entity is named as a load names it once committed
    if direction == "all":
        instructions = command.argument or None
        request = CompactRequest("all", instructions=instructions, boundary_id=boundary_id)
    else:
        pivot = commands.resolve(service.session(sid), command.argument)  # bad input: an error
        request = CompactRequest(direction, pivot.id, boundary_id=boundary_id)
    report = CompactionReport(agent.out, sid, agent.compaction_entity, f"compaction-{boundary_id}")
    report.start()
    live = agent.live[sid]
    live.compaction = report  # a load meanwhile tells it in progress again
    try:
        result = await service.compaction.compact(sid, request, lambda text, _: _waits(text))
    except asyncio.CancelledError:
        report.cancelled()
        raise
    except BatonError as exc:
        report.failed(told(exc))
        return
    finally:
        live.compaction = None
    # the summary message the model reads, as an auto-compaction's and a load's replay tell it
    summary = boundary_summary(service.session(sid), result.boundary_id) or result.summary or ""
    report.completed(summary, done_sentence(result))
