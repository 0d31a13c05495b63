"""What a compaction's commit reads from every message the session holds (the files its
work touched, its latest task list and plan): on a long session a walk of tens of thousands
of messages, so it is read with the summary, off the event loop, and kept for the commit
while the session stays at the revision it was read at."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from baton.core.compaction.working_set.plan_todos import LatestCalls, latest_calls
from baton.core.compaction.working_set.session_files import SessionFile, session_files
from baton.core.conversation.messages import Message


@dataclass(frozen=True)
class HeldFacts:
    revision: int  # the session's, when `held` was taken
    touched: list[SessionFile] | None  # None: not read (no editor files to restore beside)
    latest: LatestCalls  # the latest task list's call and plan's call


def read_held(
    revision: int, held: Sequence[Message], folders: Sequence[Path], *, files: bool
) -> HeldFacts:
    """The facts of `held` (the session's `held_messages()` at `revision`, a list taken
    where the session changes: this may run on a worker thread)."""
    touched = session_files(held, folders) if files else None
    return HeldFacts(revision, touched, latest_calls(held))
