"""A cancelled import's end: its thread waited for, at most `ENDING_WAIT` seconds once the
process ends; a session it finished all the same removed, and let go of off the loop."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from baton.core.background import daemon
from baton.core.memory import let_go_of

if TYPE_CHECKING:
    from baton.core.conversation.session import Session
    from baton.core.importers.claude_code_report import ImportReport

ENDING_WAIT = 2.0  # seconds a cancelled import's thread is waited for as the process ends


async def stopped(work: asyncio.Future[Any], closing: asyncio.Event | None) -> None:
    """Once the cancelled import's thread has ended, or `ENDING_WAIT` seconds after the
    process began to end (`closing` set), whichever comes first."""
    waits: set[asyncio.Future[Any]] = {work}
    if closing is not None:
        waits.add(asyncio.ensure_future(closing.wait()))
    with contextlib.suppress(BaseException):
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():  # the process ends: its thread, stopping at its next record
            await asyncio.wait({work}, timeout=ENDING_WAIT)
    for waiting in waits - {work}:
        waiting.cancel()


def unanswered(work: asyncio.Future[tuple[Session, ImportReport]]) -> None:
    """The session a cancelled import finished all the same, removed, and let go of in a
    thread of its own (freed here, at once, a big one held the loop: 0.33 s for 250 MB)."""
    if work.cancelled() or work.exception() is not None:
        return  # stopped: it removed what it wrote
    late, _ = work.result()
    late.transcript.close()
    late.transcript.path.unlink(missing_ok=True)
    daemon(lambda: let_go_of(late), "baton-import")
