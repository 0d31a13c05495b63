"""What a session's `meta` events keep besides its title, its model and the client's declared
context: the tools the last send offered, auto-compact's pause, the bytes of its file an
import read and their fingerprint (which the header gives too, when known as it was
written), a system prompt made again for another folder (in place of the header's), and
the folders an ACP session works in from a point on.
Each reader takes the field's raw value and what is in force; a value it cannot read leaves
that in force."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

PausedBy = Literal["failures", "thrashing"]
REASON_MAX_CHARS = 2_000
FINGERPRINT = re.compile(r"[0-9a-f]{32}")
PLACEMENT_FIELDS = frozenset({"folders", "systemPrompt"})


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


def read_folders(raw: object) -> list[str] | None:
    """`folders`: the folders the session works in from this event on (an ACP session's
    cwd, recorded as it is given and whenever it changes); anything but a list of texts
    is not read."""
    if isinstance(raw, list) and all(isinstance(folder, str) for folder in raw):
        return raw
    return None


def folders_by_message(
    message_ids: Iterable[str], since: Sequence[tuple[int, list[str]]]
) -> dict[str, list[str]]:
    """Each message's folders: those recorded last before it was added (`since`: how many
    messages were known when each record came, and its folders); a message added before
    any record has none."""
    out: dict[str, list[str]] = {}
    at = -1
    for index, message_id in enumerate(message_ids):
        while at + 1 < len(since) and since[at + 1][0] <= index:
            at += 1
        if at >= 0:
            out[message_id] = since[at][1]
    return out


def only_placement(event: dict[str, Any]) -> bool:
    """Whether a `meta` event records only where the session works (its folders, its
    default system prompt made again for them), as an ACP load in another folder writes:
    an open, not a change of the conversation, so it leaves the session's last activity
    (`updatedAt`, the order of the lists) as it was."""
    fields = event.keys() - {"type", "at"}
    return bool(fields) and fields <= PLACEMENT_FIELDS
