"""The session notes file beside a transcript: its ten sections, their caps, how far it reaches."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from baton.core.compaction.retention.facts import CountText, approx_tokens, cut_to_tokens
from baton.core.conversation.files import read_small
from baton.core.conversation.folders import replace_beside
from baton.core.conversation.session import Session
from baton.core.errors import StorageError

log = logging.getLogger(__name__)

SECTIONS: tuple[str, ...] = (
    "Session title",
    "Current state",
    "Task specification",
    "Files and functions",
    "Workflow",
    "Errors and corrections",
    "Codebase documentation",
    "Learnings",
    "Key results",
    "Worklog",
)
SECTION_TOKENS = 2_000
TOTAL_TOKENS = 12_000
EMPTY = "_Nothing recorded yet._"
NOTES_BYTES = 4 * 1024 * 1024  # notes of 12,000 tokens, and room for a hand's edits
_META = re.compile(r"^<!-- baton-notes (.*?) -->\n?", re.DOTALL)
_HEADING = re.compile(r"^#{1,3}\s+(?:\d+\.\s*)?(.+?)\s*$", re.MULTILINE)


def notes_path(transcript_path: Path | str) -> Path:
    """`<sessionId>.notes.md` beside `<sessionId>.jsonl`."""
    path = Path(transcript_path)
    return path.with_name(f"{path.stem}.notes.md")


@dataclass
class NotesMark:
    """How far the notes reach: the last message they cover."""

    covered: str | None = None
    updated: str | None = None


class MemoryNotes:
    """One session's notes file (0600): ten sections, each near 2,000 tokens, 12,000 in all."""

    def __init__(self, path: Path, count_text: CountText | None = None) -> None:
        self.path = path
        self.count_text: CountText = count_text or approx_tokens

    @classmethod
    def for_session(cls, session: Session, count_text: CountText | None = None) -> MemoryNotes:
        return cls(notes_path(session.transcript.path), count_text)

    def read(self) -> tuple[str | None, NotesMark]:
        """(the notes body, or None when there are none yet, or none can be read; how far
        they reach). Read only as a regular file of at most NOTES_BYTES: a link is never
        followed, a FIFO never waited on; notes that cannot be read are written afresh."""
        try:
            data = read_small(self.path, NOTES_BYTES)
            text = data.decode("utf-8") if data is not None else None
        except (OSError, StorageError, UnicodeDecodeError) as exc:
            log.warning("%s is not read: %s", self.path, getattr(exc, "message", None) or exc)
            text = None
        if text is None:
            return None, NotesMark()
        mark = NotesMark()
        meta = _META.match(text)
        if meta:
            fields = dict(p.split("=", 1) for p in meta[1].split() if "=" in p)
            mark = NotesMark(fields.get("covered"), fields.get("updated"))
            text = text[meta.end() :]
        return (text.strip() or None), mark

    def write(self, body: str, mark: NotesMark) -> str:
        """Normalize `body` into the ten capped sections and replace the file atomically."""
        notes = self.normalize(body)
        header = f"<!-- baton-notes covered={mark.covered or ''} updated={mark.updated or ''} -->"
        replace_beside(self.path, f"{header}\n{notes}\n".encode())
        return notes

    def normalize(self, text: str) -> str:
        sections = parse_sections(text)
        capped = {name: self._cap(name, body, SECTION_TOKENS) for name, body in sections.items()}
        sizes = {name: self.count_text(body) for name, body in capped.items()}
        excess = sum(sizes.values()) - TOTAL_TOKENS
        for name in sorted(sizes, key=lambda n: sizes[n], reverse=True):
            if excess <= 0:
                break  # over the total: shrink the largest sections first
            target = max(sizes[name] - excess, SECTION_TOKENS // 10)
            capped[name] = self._cap(name, capped[name], target)
            excess -= sizes[name] - self.count_text(capped[name])
        return "\n\n".join(f"# {name}\n{capped[name] or EMPTY}" for name in SECTIONS)

    def _cap(self, name: str, body: str, limit: int) -> str:
        if self.count_text(body) <= limit:
            return body
        if name == "Worklog":  # the newest entries matter most
            lines = body.split("\n")
            kept = cut_to_tokens("\n".join(reversed(lines)), limit - 12, self.count_text)
            return "[... older entries cut ...]\n" + "\n".join(reversed(kept.split("\n")))
        return cut_to_tokens(body, limit - 12, self.count_text) + "\n[... cut ...]"


def parse_sections(text: str) -> dict[str, str]:
    """The ten sections' bodies from notes-like markdown; unknown headings stay with the
    section before them, missing sections come back empty."""
    found = {name: "" for name in SECTIONS}
    by_key = {_key(name): name for name in SECTIONS}
    current: str | None = None
    position = 0
    for heading in _HEADING.finditer(text):
        name = by_key.get(_key(heading[1]))
        if name is None:
            continue
        _add(found, current, text[position : heading.start()])
        current, position = name, heading.end()
    _add(found, current, text[position:])
    return found


def _key(title: str) -> str:
    return re.sub(r"[^a-z]", "", title.lower())


def _add(found: dict[str, str], name: str | None, chunk: str) -> None:
    chunk = chunk.strip()
    if name is None or not chunk or chunk == EMPTY:
        return
    found[name] = f"{found[name]}\n\n{chunk}".strip()
