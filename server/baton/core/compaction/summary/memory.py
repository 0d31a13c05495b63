"""The session notes' background updater, what the notes cover, and the `memory` summarizer."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationError

from baton.core.compaction.retention.facts import (
    CountText,
    approx_tokens,
    cut_to_tokens,
    cut_with_marker,
)
from baton.core.compaction.summary.model_summary import approx_count, ask_model
from baton.core.compaction.summary.notes import (
    EMPTY,
    SECTIONS,
    MemoryNotes,
    NotesMark,
    notes_path,
)
from baton.core.compaction.summary.notes_state import NotesState
from baton.core.compaction.summary.summarizers import (
    EXTRACTIVE_MAX_TOKENS,
    ExtractiveSummarizer,
    Progress,
    Summarizer,
    SummaryRequest,
)
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message, now_iso
from baton.core.conversation.session import Session
from baton.core.conversation.transcript import read_events
from baton.core.model_api.client import ModelClient

log = logging.getLogger(__name__)

FIRST_UPDATE_TOKENS = 10_000  # of conversation before the first notes
MORE_TOKENS = 5_000  # of new conversation before each later update
TOOL_CALLS = 3  # ... together with this many tool calls, or a turn with none
NOTES_OUTPUT = 16_000
UNCOVERED_HEADING = "# Since the notes were last updated"
# notes section <- extractive summary sections (by number) when built offline
OFFLINE_SOURCES: dict[str, tuple[int, ...]] = {
    "Current state": (8, 7, 9),
    "Task specification": (1,),
    "Files and functions": (3,),
    "Errors and corrections": (4,),
    "Codebase documentation": (2,),
    "Learnings": (5,),
    "Worklog": (6,),
}
NOTES_SYSTEM = (
    "You keep the working notes of a coding session up to date, so that the session can "
    "continue from the notes alone if its conversation is cleared."
)
_SUMMARY_SECTION = re.compile(r"^## (\d+)\. .*?\n(.*?)(?=^## \d+\. |\Z)", re.M | re.S)
_NOTES_TAG = re.compile(r"<notes>(.*?)(?:</notes>|$)", re.DOTALL | re.IGNORECASE)


# ---- when to update, and how ---------------------------------------------------------------


def _conversation(session: Session) -> list[Message]:
    """Every conversation message ever appended, in order (not what compactions made)."""
    made = {m.id for b in session.boundaries.values() for m in b.new_messages}
    return [m for m in session.messages.values() if m.id not in made and m.kind == "message"]


def _since(messages: list[Message], covered: str | None) -> list[Message]:
    ids = [m.id for m in messages]
    if covered in ids:
        return messages[ids.index(covered) + 1 :]
    return messages


def due(session: Session, mark: NotesMark, has_notes: bool) -> bool:
    """First after 10,000 tokens of conversation; then after 5,000 more and either three
    tool calls or a reply that called no tool."""
    new = _since(_conversation(session), mark.covered if has_notes else None)
    needed = MORE_TOKENS if has_notes else FIRST_UPDATE_TOKENS
    grown = 0
    for message in new:  # up to the figure: an import's summarized turns have no count
        grown += message.tokens or session.count(message)
        if grown >= needed:
            break
    if grown < needed:
        return False
    if not has_notes:
        return True
    calls = sum(len(m.tool_uses()) for m in new)
    view = session.view_messages()
    quiet_turn = bool(view) and view[-1].role == "assistant" and not view[-1].tool_uses()
    return calls >= TOOL_CALLS or quiet_turn


class NotesUpdater:
    """Rewrites a session's notes when they are due. The server runs `maybe_update` in the
    background after replies and appends; one update per session runs at a time (per
    `state`, the session's, which the caller owns)."""

    def __init__(
        self,
        client: ModelClient | None = None,
        model: str = "",
        *,
        count_text: CountText | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.count_text: CountText = count_text or approx_tokens
        # the updates running for callers that own no state, only while they run
        self._own: dict[str, NotesState] = {}

    async def maybe_update(self, session: Session, state: NotesState | None = None) -> bool:
        """Update the notes if due; True when they were rewritten."""
        current = state or self._own.get(session.session_id)
        if current is not None and current.running:
            return False
        body, mark = MemoryNotes.for_session(session, self.count_text).read()
        if not due(session, mark, body is not None):
            return False
        await self.update(session, state)
        return True

    async def update(self, session: Session, state: NotesState | None = None) -> str:
        """Rewrite the notes now (a model request, or offline without a client)."""
        sid = session.session_id
        if state is None:
            state = self._own[sid] = NotesState(running=True)
        state.running = True
        try:
            notes = MemoryNotes.for_session(session, self.count_text)
            current, mark = notes.read()
            conversation = _conversation(session)
            covered = conversation[-1].id if conversation else None
            if self.client is None:
                text = await self._offline(session)
            else:
                text = await self._ask(session, current, mark)
            return notes.write(text, NotesMark(covered, now_iso()))
        finally:
            state.running = False
            if self._own.get(sid) is state:
                del self._own[sid]

    async def _offline(self, session: Session) -> str:
        request = SummaryRequest(direction="all", messages=session.view_messages())
        summary = await ExtractiveSummarizer(self.count_text).summarize(request)
        numbered = dict(_SUMMARY_SECTION.findall(summary))
        parts = [f"# Session title\n{session.title or EMPTY}"]
        for name, sources in OFFLINE_SOURCES.items():
            bodies = [numbered.get(str(n), "").strip() for n in sources]
            parts.append(f"# {name}\n" + "\n\n".join(b for b in bodies if b))
        return "\n\n".join(parts)

    async def _ask(self, session: Session, current: str | None, mark: NotesMark) -> str:
        assert self.client is not None
        view = session.view_messages()
        new = _since(view, mark.covered) if current else view
        template = "\n".join(f"# {name}\n..." for name in SECTIONS)
        prompt = (
            "Update the session notes with what the conversation above adds. "
            + (f"The current notes:\n<notes>\n{current}\n</notes>\n" if current else "")
            + "Answer with the complete new notes inside <notes> tags, using exactly these "
            "ten headings in this order:\n"
            + template
            + "\nKeep each section under about 2,000 tokens. Be specific: file paths, "
            "function names, commands, error messages, decisions and their reasons. "
            "Current state says what is being worked on right now and what comes next. "
            "The worklog is a terse chronological list of steps; add to its end. "
            "Do not call tools."
        )
        text = await ask_model(
            self.client,
            model=self.model,
            system=NOTES_SYSTEM,
            context=[],
            messages=new or view[-1:],
            prompt=prompt,
            max_tokens=NOTES_OUTPUT,
            count=approx_count,
        )
        match = _NOTES_TAG.search(text)
        return match[1] if match else text


# ---- what the notes cover -----------------------------------------------------------------


def _history(transcript_path: str) -> tuple[dict[str, int], dict[str, list[str]]]:
    """From the transcript: where each appended message came, and what each message a
    compaction made stands for (a summary, a microcompacted copy, an attachment)."""
    try:
        events, _ = read_events(Path(transcript_path))
    except OSError:
        return {}, {}
    order: dict[str, int] = {}
    stands_for: dict[str, list[str]] = {}
    for event in events:
        raw = event.get("message")
        if event.get("type") == "message" and isinstance(raw, dict):
            order.setdefault(str(raw.get("id")), len(order))
        elif event.get("type") == "boundary":
            try:
                stands_for.update(Boundary.model_validate(event.get("boundary")).stands_for)
            except ValidationError:
                continue
    return order, stands_for


def uncovered(messages: list[Message], covered: str | None, transcript_path: str) -> list[Message]:
    """The messages the notes do not cover, in order. Decided by where each message came in
    the transcript, so a compaction since the last update changes nothing: a message made
    by a compaction is covered when everything it stands for is, so a summary that folded
    the covered message in together with later ones is not. A mark the transcript does
    not know (none, or a stale file) vouches for nothing, and neither does a message it
    does not know. A tool result goes with its call."""
    order, stands_for = _history(transcript_path)
    reach = order.get(covered or "")
    if reach is None:
        return list(messages)

    def known(mid: str, seen: frozenset[str]) -> bool:
        if mid in stands_for and mid not in seen:
            return all(known(part, seen | {mid}) for part in stands_for[mid])
        return order.get(mid, reach + 1) <= reach

    missing = {i for i, m in enumerate(messages) if not known(m.id, frozenset())}
    missing |= {
        i - 1
        for i in missing
        if i > 0 and messages[i].tool_results() and messages[i - 1].tool_uses()
    }
    return [m for i, m in enumerate(messages) if i in missing]


# ---- the summarizer ------------------------------------------------------------------------


class MemorySummarizer:
    """Uses the session notes as the summary: no model call at compaction time. Messages of
    the span the notes do not cover yet follow them, summarized by the extractive
    summarizer. With no notes yet it falls back to the extractive summarizer, and says so."""

    name = "memory"

    def __init__(
        self, *, fallback: Summarizer | None = None, count_text: CountText | None = None
    ) -> None:
        self.count_text: CountText = count_text or approx_tokens
        self.fallback: Summarizer = fallback or ExtractiveSummarizer(self.count_text)

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        report = progress or _quiet
        body, mark = None, NotesMark()
        # The notes describe the whole session: they can stand for "everything but the
        # recent window", not for a pivot's part or a middle span.
        if request.transcript_path and request.direction == "all":
            body, mark = MemoryNotes(notes_path(request.transcript_path), self.count_text).read()
        if not body or not request.transcript_path:
            report("No session notes yet: using the extractive summarizer instead", None)
            return await self.fallback.summarize(request, progress)
        rest = uncovered(request.messages, mark.covered, request.transcript_path)
        if not rest:
            report("Using the session notes as the summary", 1.0)
            return body
        report(
            f"Using the session notes as the summary, and summarizing offline the {len(rest)} "
            "messages they do not cover yet",
            0.0,
        )
        count = self.count_text
        heading = (
            f"{UNCOVERED_HEADING}\nThe notes above do not cover {len(rest)} of the messages "
            "this summary stands for; an offline summary of those follows."
        )
        tail_limit = 0  # no overall bound: the extractive summarizer's own cap
        if request.max_tokens > 0:
            # The tail gets what the notes leave, yet at least a third of the room: the
            # notes are cut before the newest part of the conversation is.
            room = request.max_tokens - count(heading) - 8
            tail_limit = max(1, min(max(room - count(body), room // 3), EXTRACTIVE_MAX_TOKENS))
            body = cut_with_marker(body, max(room - tail_limit, 0), count)
        part = replace(request, messages=rest, context_before=[], max_tokens=tail_limit)
        tail = await ExtractiveSummarizer(count).summarize(part, progress)
        text = f"{body}\n\n{heading}\n\n{tail}"
        return cut_to_tokens(text, request.max_tokens, count) if request.max_tokens > 0 else text


def _quiet(message: str, fraction: float | None) -> None:
    del message, fraction
