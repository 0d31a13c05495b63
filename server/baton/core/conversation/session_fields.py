"""What a session's header and `meta` records say about it as replay reads them: its id,
title, model and system prompt, where it came from, its times, the client's declared
context, the tools of its last send, auto-compact's pause and the folders it works in."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from baton.core.conversation.messages import now_iso
from baton.core.conversation.meta_records import (
    AutoPause,
    read_auto_pause,
    read_folders,
    read_imported_fingerprint,
    read_imported_size,
    read_sent_tools,
    read_system_prompt,
)
from baton.core.conversation.recorded_usage import ClientContext
from baton.core.conversation.transcript import Event


class SessionFields:
    """The fields a replay (`Replayed`) keeps from the header and `meta` records, and the
    latest time any record names."""

    def _reset_fields(self) -> None:
        self.session_id = ""
        self.title = ""
        self.model = ""
        self.system_prompt: str | None = None
        # (messages known, the system prompt from then), oldest first: the header's, then
        # each change (a load elsewhere made it again), for the usage a request measured
        self.system_prompts: list[tuple[int, str | None]] = []
        self.imported_from: str | None = None  # the file an imported session came from
        self.imported_size: int | None = None  # the bytes of that file the import read
        self.imported_fingerprint: str | None = None  # of those bytes
        self.compacted_from: str | None = None  # the file the CLI compacted into this one
        # the tool loop's messages carry `tool_loop` (a transcript begun since they do):
        # one without it is not the loop's
        self.marks_tool_loop = False
        self.created_at = ""
        self.updated_at = ""
        # (messages known, the folders the session works in from then), oldest first
        self.folders_since: list[tuple[int, list[str]]] = []
        self.client_context = ClientContext()
        self.sent_tools: list[dict[str, Any]] = []  # the tools the last send offered
        self.auto_pause: AutoPause | None = None  # auto-compact stopped, kept over restarts
        self._updated_instant: tuple[str, datetime | None] = ("", None)

    def _apply_header(self, event: Event) -> None:
        self.session_id = str(event.get("sessionId", ""))
        self.title = str(event.get("title") or "")
        self.model = str(event.get("model") or "")
        self.system_prompt = event.get("systemPrompt")
        self.system_prompts = [(0, self.system_prompt)]
        imported = event.get("importedFrom")
        self.imported_from = str(imported) if imported else None
        self.imported_size = read_imported_size(event.get("importedSize"), None)
        found = event.get("importedFingerprint")
        self.imported_fingerprint = read_imported_fingerprint(found, None)
        compacted = event.get("compactedFrom")
        self.compacted_from = str(compacted) if compacted else None
        self.marks_tool_loop = event.get("marksToolLoop") is True
        self.created_at = self.updated_at = str(event.get("createdAt") or now_iso())

    def _apply_meta(self, event: Event, known: int) -> None:
        """A `meta` record, `known` messages known when it came."""
        self.title = str(event.get("title", self.title))
        self.model = str(event.get("model", self.model))
        self.imported_size = read_imported_size(event.get("importedSize"), self.imported_size)
        self.imported_fingerprint = read_imported_fingerprint(
            event.get("importedFingerprint"), self.imported_fingerprint
        )
        self.client_context = ClientContext.read(event.get("clientContext"), self.client_context)
        self.sent_tools = read_sent_tools(event.get("tools"), self.sent_tools)
        prompt = read_system_prompt(event, self.system_prompt)
        if prompt != self.system_prompt:
            self.system_prompts.append((known, prompt))
        self.system_prompt = prompt
        folders = read_folders(event.get("folders"))
        if folders is not None:
            self.folders_since.append((known, folders))
        if "autoCompactPaused" in event:
            self.auto_pause = read_auto_pause(event["autoCompactPaused"], self.auto_pause)

    def _saw_time(self, stamp: str) -> None:
        """A record's time: `updated_at` is the latest seen (an unreadable one always loses),
        never before `created_at`. Each time is parsed once: the one kept is not parsed
        again for the next record."""
        if stamp == self.updated_at:
            return
        if self._updated_instant[0] != self.updated_at:
            self._updated_instant = (self.updated_at, instant(self.updated_at))
        before, after = self._updated_instant[1], instant(stamp)
        if before is None or (after is not None and after > before):
            self.updated_at = stamp
            self._updated_instant = (stamp, after)


def instant(stamp: str) -> datetime | None:
    """An ISO time (naive ones taken as UTC), None when it is not one."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
