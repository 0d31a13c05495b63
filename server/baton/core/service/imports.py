"""A Claude Code file imported for every front end: off the event loop, the file's claim
held from the look for its earlier imports to the new session's answer, another copy told,
the session answered as its file holds it then (`read_again`)."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from baton.core.compaction.summary.summarizers import Progress
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import StorageError, TranscriptChanged, TranscriptError
from baton.core.service.lanes import in_thread, off_loop
from baton.core.service.results import Imported
from baton.core.service.runtime import Runtimes

if TYPE_CHECKING:
    from baton.core.importers.earlier_imports import ImportClaim
    from baton.core.service.service import BatonService

CLAIM_RETRY = 0.05  # seconds between two tries of an import's claim another import holds


class Imports:
    """Front ends call it through `service.import_file`; the new session is told as a
    change of the service's."""

    def __init__(self, service: BatonService, runtimes: Runtimes) -> None:
        self._service = service
        self._runtimes = runtimes

    async def import_file(
        self, path: str, title: str | None = None, progress: Progress | None = None
    ) -> Imported:
        """The import runs off the event loop, and so do the reads before it (the file's
        stat, the list the file's earlier imports are looked for in, their paths
        resolved): a file on a hung mount or a data dir of many sessions never holds the
        loop. Cancelling the call cancels it. The file's `ImportClaim` is held from before
        that list to the new session's answer: another import of the file meanwhile (this
        server's, another's, `baton import`'s) waits, and it is told as another copy."""
        from baton.core.importers import claude_code

        service = self._service
        file = await off_loop(partial(claude_code.named_file, path))
        service.data_dir.look()  # what became of the sessions folder since, told first
        claim = claude_code.ImportClaim(file, service.store)
        try:
            await self._claimed(claim, file, progress)
            service.data_dir.settle()  # the claim made the folder again, if it went: no news
            listed = await service.list_sessions()
            earlier = await off_loop(partial(claude_code.imports_among, file, listed))
            found = await claude_code.import_off_loop(
                file,
                service.store,
                title=title,
                progress=progress,
                closing=service.lanes.closing,
                forget=service.estimator.forget,  # what an import that keeps nothing counted
            )
            session, notes = found[0], found[1].notes()
            if session.transcript.moved_on():  # another program's doing since it was written
                service.store.release(session.session_id)
                session = service.store.adopt(
                    await off_loop(partial(read_again, session, service.store))
                )
        finally:
            claim.release()
        service.changes.changed(self._runtimes.opened(session), "create")
        if earlier:
            notes.insert(0, claude_code.another_copy(earlier))
        return Imported(session, notes)

    async def _claimed(self, claim: ImportClaim, file: Path, progress: Progress | None) -> None:
        """Once `claim` is held: while another import of `file` holds it, the progress says
        so and the claim is tried again every `CLAIM_RETRY` seconds. A cancel stops it; one
        during a try waits for the try's end, so that a claim it took is let go."""
        while not await in_thread(partial(claim.take, wait=False), self._service.lanes.closing):
            if progress is not None:
                progress(f"Waiting for another import of {file.name} to end", None)
                progress = None  # said once
            await asyncio.sleep(CLAIM_RETRY)


def read_again(session: Session, store: SessionStore) -> Session:
    """The session an import just made (`store` holds it no longer), read again from its
    file, which another program changed since the import wrote it: the file's session
    when it holds what the import wrote (a copy saved in its place), not kept by `store`
    (`load`); else `TranscriptChanged` naming the file and what became of it (what is
    there is left as it is). Safe off the event loop."""
    sid, path = session.session_id, session.transcript.path
    try:
        again = store.load(sid)
    except (TranscriptError, StorageError):  # gone (or no longer a file Baton reads)
        raise TranscriptChanged(
            f"{path} was deleted by another program before the import answered: session "
            f"{sid} is not there; import the file again",
            path=str(path),
        ) from None
    written = (session.view, session.transcript.events_but_renames, False)
    if (again.view, again.transcript.events_but_renames, again.damage.any) != written:
        again.transcript.close()
        raise TranscriptChanged(
            f"{path} was changed by another program before the import answered: it no "
            f"longer holds the session imported ({sid}), and is left as it is; import the "
            "file again",
            path=str(path),
        )
    return again
