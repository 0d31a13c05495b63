"""What an imported session's header says, gathered from a Claude Code file's records as
they go by: when the conversation began, its model, its title."""

from __future__ import annotations

from pathlib import Path

from baton.core.conversation.files import path_text
from baton.core.conversation.messages import now_iso
from baton.core.conversation.session_names import TITLE_MAX_CHARS
from baton.core.conversation.transcript import Event
from baton.core.importers.claude_code_records import CONTINUED_PREFIX
from baton.core.importers.claude_code_repairs import Record


class Facts:
    """What the header says, gathered as the records go by: when the conversation began,
    its model (the last assistant's), its title (as Claude Code's /resume list names the
    session: the name /rename gave it, else its own generated title, else its `summary`
    record about this file, else the first typed prompt)."""

    def __init__(self, title: str | None) -> None:
        self.given = title
        self.first_time: str | None = None
        self.model = ""
        self.uuids: set[str] = set()
        self.titles: list[Record] = []  # `summary` records with a text
        # the latest `custom-title` (/rename) and `ai-title` (2.1's generated title) records
        self.named: dict[str, str] = {}
        self.prompt_title: str | None = None
        self.titled: tuple[object, object] | None = None  # that prompt's (parentUuid, uuid)
        self.size: int | None = None  # the file's bytes read so far (whole lines)
        self.fingerprint: str | None = None  # of those bytes (`read_fingerprint.py`)

    def add(self, record: Record) -> None:
        if self.first_time is None:
            stamp = record.get("timestamp")
            self.first_time = stamp if isinstance(stamp, str) and stamp else None
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            self.uuids.add(uuid)
        kind = record.get("type")
        message = record.get("message")
        if kind == "assistant" and isinstance(message, dict):
            model = message.get("model")
            if isinstance(model, str) and model and model != "<synthetic>":
                self.model = model
        elif isinstance(kind, str) and kind in TITLE_FIELDS:
            named = record.get(TITLE_FIELDS[kind])
            if isinstance(named, str) and named.strip():
                self.named[kind] = named
        elif kind == "summary" and record.get("summary"):
            leaf = record.get("leafUuid")  # a damaged record's list or object names no leaf
            self.titles.append({"summary": record["summary"], "leafUuid": _text(leaf)})
        elif kind == "user" and (self.prompt_title is None or self._edits_titled(record)):
            self.prompt_title = _prompt_title(record) or self.prompt_title
            if self.prompt_title is not None and self.titled is None:
                self.titled = (record.get("parentUuid", ...), record.get("uuid"))

    def _edits_titled(self, record: Record) -> bool:
        """Whether `record` is the prompt the title came from, edited in Claude Code (another
        prompt under the same parent: `claude_code_branches.py`): the title follows it."""
        if self.titled is None or record.get("parentUuid", ...) != self.titled[0]:
            return False
        return record.get("uuid") != self.titled[1] and _prompt_title(record) is not None

    def title(self) -> str:
        """The given title, else the file's, made to fit a title's rules (one line of at
        most TITLE_MAX_CHARS characters, no control characters)."""
        if self.given:
            return self.given
        found = self.prompt_title or ""
        if self.named:
            found = self.named.get("custom-title") or self.named["ai-title"]
        elif self.titles:
            about_this = [r for r in self.titles if r.get("leafUuid") in self.uuids]
            found = str((about_this[-1] if about_this else self.titles[0])["summary"])
        line = "".join(c for c in " ".join(found.split()) if ord(c) >= 32 and ord(c) != 127)
        return line[:TITLE_MAX_CHARS] or "Imported Claude Code session"

    def header(self, sid: str, path: Path) -> Event:
        return {
            "type": "session",
            "format": 1,
            "sessionId": sid,
            "title": self.title(),
            "model": self.model,
            "systemPrompt": None,
            "createdAt": self.first_time or now_iso(),
            "marksToolLoop": True,  # none of its messages is the tool loop's
            "importedFrom": path_text(path),
            **({} if self.size is None else {"importedSize": self.size}),
            **({} if self.fingerprint is None else {"importedFingerprint": self.fingerprint}),
        }


TITLE_FIELDS = {"custom-title": "customTitle", "ai-title": "aiTitle"}  # record type -> field


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _prompt_title(record: Record) -> str | None:
    """The first line of a typed prompt (not IDE context, command markup, interruption
    notes, a subagent's or a summary)."""
    if record.get("isSidechain") or record.get("isMeta") or record.get("isCompactSummary"):
        return None
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    texts = [content] if isinstance(content, str) else []
    if isinstance(content, list):
        texts = [str(b.get("text", "")) for b in content if isinstance(b, dict)]
    for text in (t.strip() for t in texts):
        if text and not text.startswith(("<", "[", "Caveat:", CONTINUED_PREFIX)):
            return text.splitlines()[0][:80]
    return None
