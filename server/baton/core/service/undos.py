"""An undo of a long session's compaction in the session's lane: its check off the event
loop, its commit on it, in order with the session's compactions.

The check of an undo (`check_undo`: the view it gives, and whether it would break
anything) reads the whole view: about a second on a session of 100,000 messages, every
other session's requests waiting while it ran on the loop; the undo of a compaction that
later summaries hold undoes each of them, on a copy, twice (minutes on a long imported
chain), saying each step on its progress, a cancel stopping it at the next
(`undo_ahead.Watched`). On a long session (or when what it brings back needs counting,
when later summaries hold it, or another undo of the session waits) it runs in
the session's lane, in a worker thread, and the undo commits on the loop, still in the
lane, with that check while the session is at the revision it was checked at; a session
changed meanwhile (an append, a pin, read again) is checked again, in the lane, as often
as it changes (never on the loop: there the check of a long chain held every session for
minutes; the undo's cancel stops it at its next step). A short session's undo is made
where it is asked, as before: a thread's hop costs it more than its check does.

What it answers is what the undo made at once answers: refused as it arrives while the
session compacts; the latest compaction is the latest of those in force when it was
asked; a compaction asked after it waits, holding the session, until it has committed
(`settled`, which each compaction of the session awaits before its hooks and its plan)."""

from __future__ import annotations

import asyncio
import threading
from functools import partial
from typing import TYPE_CHECKING

from baton.core.compaction import engine
from baton.core.compaction.summary.summarizers import Progress
from baton.core.conversation.replaced import replaced_messages
from baton.core.conversation.session import Session
from baton.core.conversation.undo import undo_mapping
from baton.core.conversation.undo_ahead import Watched
from baton.core.conversation.undo_check import Checked, checked
from baton.core.service.lanes import stoppable, threadsafe
from baton.core.service.runtime import Runtimes
from baton.core.usage.budget import Usage

if TYPE_CHECKING:
    from baton.core.service.service import BatonService

OFF_LOOP_MESSAGES = 1_000  # an undo of a session holding this many is checked off the loop


class Undos:
    """The undos of each session under way in its lane, for its compactions to wait on."""

    def __init__(self, service: BatonService, runtimes: Runtimes) -> None:
        self._service = service
        self._runtimes = runtimes
        self._pending: dict[str, list[asyncio.Future[None]]] = {}

    async def settled(self, session_id: str) -> None:
        """Once every undo of the session asked before now has committed or failed."""
        pending = list(self._pending.get(session_id, ()))
        if pending:
            await asyncio.wait(pending)

    async def uncompact(
        self, session_id: str, boundary_id: str | None = None, progress: Progress | None = None
    ) -> Usage:
        """Undo `boundary_id` (default: the latest compaction) and tell the change;
        `progress` hears the steps of a long check (the undos of the summaries that hold
        it), which a cancel stops."""
        runtime = self._runtimes.of(session_id)
        session = runtime.session
        if not self._off_loop(session, boundary_id):
            engine.uncompact(session, boundary_id)
            return self._service.changes.changed(runtime, "uncompact")
        engine.undo_target(session, boundary_id)  # refused now as the undo at once would be
        asked = list(session.active)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.setdefault(session_id, []).append(done)
        try:
            async with self._service.lanes.lane(session_id):
                target, made = await self._checked(session, boundary_id, asked, progress)
                # a compaction asked since waits for this commit (`settled`): none runs
                session.uncompact(target, made)
                return self._service.changes.changed(runtime, "uncompact")
        finally:
            pending = self._pending[session_id]
            pending.remove(done)
            if not pending:
                del self._pending[session_id]
            done.set_result(None)

    def _off_loop(self, session: Session, boundary_id: str | None) -> bool:
        """Whether the undo goes to the session's lane: a long session, another undo of it
        under way there (it keeps its turn), a compaction whose summary others hold (its
        check undoes each of them, on a copy, saying each step), or turns to count that
        it brings back."""
        if len(session.messages) >= OFF_LOOP_MESSAGES or session.session_id in self._pending:
            return True
        latest = session.active[-1] if session.active else None
        target = latest if boundary_id is None else boundary_id
        if target is None or target not in session.active:
            return False  # refused where it is
        if not set(undo_mapping(session.boundaries[target])) <= set(session.view):
            return True
        return any(not m.tokens for m in replaced_messages(session, target))

    async def _checked(
        self,
        session: Session,
        boundary_id: str | None,
        asked: list[str],
        progress: Progress | None,
    ) -> tuple[str, Checked]:
        """The boundary to undo and its check made in a worker thread for the session as
        it is now: one that changed meanwhile is checked again there, until a check finds
        it as it was (the commit then takes that check as it is)."""
        told = threadsafe(progress)
        while True:
            target = session.undo_target(boundary_id, asked)
            revision = session.revision
            try:
                closing = self._service.lanes.closing
                made = await stoppable(partial(_checked_watched, session, target, told), closing)
            except Exception:  # refused, or read while the loop changed it
                if session.revision == revision:
                    raise  # refused (what to undo first): as the undo at once says
                continue  # the session changed: checked again
            if session.revision == revision:
                return target, made


def _checked_watched(
    session: Session, target: str, told: Progress | None, stop: threading.Event
) -> Checked:
    return checked(session, target, Watched(stop, told))
