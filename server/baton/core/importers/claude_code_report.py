"""What an import found in a Claude Code file and what it made of it (`ImportReport`): the
counts, and the notes `baton import` prints and `baton/session/import` answers."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic.alias_generators import to_camel

SHOWN_LINES = 5  # the unreadable lines a note names


@dataclass
class ImportReport:
    """What an import found in the file and what it made of it."""

    source: str
    records: int = 0  # JSON objects read
    kinds: Counter[str] = field(default_factory=Counter)  # `type` or `type/subtype`
    messages: int = 0  # built from records (summaries, stray results as text), repairs not
    merged_records: int = 0  # assistant records folded into the previous record's message
    repeated: int = 0  # conversation records read before under the same uuid (kept as opaque)
    tool_pairs: int = 0  # tool_use blocks answered by a tool_result
    opaque: int = 0
    sidechain: int = 0
    beside: int = 0  # records of another conversation written into the file at the same time
    empty: int = 0  # conversation records with no content (kept as opaque)
    api_errors: int = 0  # Claude Code's own 'API Error' replies, never sent (kept as opaque)
    unsupported_blocks: int = 0
    broken_lines: list[int] = field(default_factory=list)
    array: bool = False  # a JSON array: `broken_lines` are the numbers of its items
    boundaries: int = 0
    edits: int = 0  # prompts edited in Claude Code: each one's replaced turns rewound
    # another session's first prompt, each: the turns before it rewound (two sessions in a file)
    conversations: list[str] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    # what the import changed so that the view keeps the API's rules (the file is untouched)
    repairs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # what was kept as found

    def notes(self) -> list[str]:
        out: list[str] = []
        if len(self.session_ids) > 1:
            out.append(f"{len(self.session_ids)} Claude Code session ids joined in one session")
        if self.broken_lines:  # broken, or cut short (a file still being written)
            lines = ", ".join(str(n) for n in self.broken_lines[:SHOWN_LINES])
            if len(self.broken_lines) > SHOWN_LINES:
                lines += f" and {len(self.broken_lines) - SHOWN_LINES} more"
            unit = "item" if self.array else "line"  # an array's item may span many lines
            out.append(f"skipped {len(self.broken_lines)} unreadable {unit}(s): {unit} {lines}")
        if self.empty:
            out.append(f"{self.empty} record(s) without content kept as opaque")
        if self.repeated:
            out.append(
                f"{self.repeated} record(s) written again under a uuid already read: "
                "imported once, the repeats kept as opaque"
            )
        if self.unsupported_blocks:
            out.append(f"{self.unsupported_blocks} unsupported block(s) replaced by a marker")
        if self.beside:
            out.append(
                f"{self.beside} record(s) of another branch from the chain Claude Code "
                "resumes, which goes on in the file beside it (Claude Code run twice on the "
                "session, or an earlier branch resumed): kept as opaque, out of the view"
            )
        if self.edits:
            out.append(
                f"{self.edits} prompt(s) edited in Claude Code: the turns each one replaced are "
                "out of the view, as a rewind (undo brings them back)"
            )
        return out + self.conversations + self.repairs + self.problems

    def wire(self) -> dict[str, Any]:
        """JSON-ready, camelCase keys (as the rest of the wire)."""
        out = {to_camel(k): v for k, v in asdict(self).items()}
        out["kinds"] = dict(self.kinds)  # asdict would rebuild the Counter from pairs
        return out
