"""What a session's `meta` events keep besides its title, its model and the client's declared
context: the tools the last send offered, auto-compact's pause, the bytes of its file an
import read and their fingerprint (which the header gives too, when known as it was
written), and a system prompt made again for another folder (in place of the header's).
Each reader takes the field's raw value and what is in force; a value it cannot read leaves
that in force."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, cast

PausedBy = Literal["failures", "thrashing"]
REASON_MAX_CHARS = 2_000
FINGERPRINT = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class AutoPause:
    """Auto-compact stopped on the session (repeated failures, or thrashing) and why."""

    by: PausedBy
    reason: str

    def wire(self) -> dict[str, str]:
        return {"by": self.by, "reason": self.reason}


def read_sent_tools(raw: object, current: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tools`: the tool definitions a send offered the model, kept so that a session read
    again counts them as the send did; anything but a list of objects is not read."""
    if isinstance(raw, list) and all(isinstance(tool, dict) for tool in raw):
        return raw
    return current


def read_auto_pause(raw: object, current: AutoPause | None) -> AutoPause | None:
    """`autoCompactPaused`: `{"by", "reason"}` when auto-compact paused, null when it
    resumed; a restart keeps the pause until a manual compaction ends it."""
    if raw is None:
        return None
    if isinstance(raw, dict):
        by, reason = raw.get("by"), raw.get("reason")
        if by in ("failures", "thrashing") and isinstance(reason, str):
            return AutoPause(cast(PausedBy, by), reason[:REASON_MAX_CHARS])
    return current


def read_imported_size(raw: object, current: int | None) -> int | None:
    """`importedSize`: the bytes of a Claude Code file its import read (whole lines)."""
    return raw if type(raw) is int and raw >= 0 else current


def read_imported_fingerprint(raw: object, current: str | None) -> str | None:
    """`importedFingerprint`: a hash of the first and last 64 KB of those bytes (32 hex
    digits); an import before it noted the size alone."""
    return raw if isinstance(raw, str) and FINGERPRINT.fullmatch(raw) else current


def read_system_prompt(event: dict[str, Any], current: str | None) -> str | None:
    """`systemPrompt`: the session's system prompt from here on, in place of its header's
    (made again for the folder an ACP session was loaded in); a value that is no text is
    not read, and a `meta` event without it leaves the prompt in force."""
    raw = event.get("systemPrompt", current)
    return raw if isinstance(raw, str) else current
