"""Import of Claude Code session files (JSONL, or the JSON-array variant) into a session."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_camel

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message, invariant_violations, now_iso
from baton.core.conversation.session import Session, TokenCounter
from baton.core.conversation.store import SessionStore, new_session_id
from baton.core.conversation.transcript import Event, Transcript, check_writable
from baton.core.errors import InvalidParams
from baton.core.importers.claude_code_records import CONTINUED_PREFIX, RecordConverter
from baton.core.importers.claude_code_repairs import Record

__all__ = [
    "MAX_IMPORT_BYTES",
    "ImportReport",
    "import_claude_code",
    "import_with_report",
    "named_file",
]

MAX_IMPORT_BYTES = 256 * 1024 * 1024
MAX_PATH = 4096  # characters in a path a request names


@dataclass
class ImportReport:
    """What an import found in the file and what it made of it."""

    source: str
    records: int = 0  # JSON objects read
    kinds: Counter[str] = field(default_factory=Counter)  # `type` or `type/subtype`
    messages: int = 0  # built from records (summaries, stray results as text), repairs not
    merged_records: int = 0  # assistant records folded into the previous record's message
    tool_pairs: int = 0  # tool_use blocks answered by a tool_result
    opaque: int = 0
    sidechain: int = 0
    empty: int = 0  # conversation records with no content (kept as opaque)
    unsupported_blocks: int = 0
    broken_lines: list[int] = field(default_factory=list)
    boundaries: int = 0
    session_ids: list[str] = field(default_factory=list)
    # what the import changed so that the view keeps the API's rules (the file is untouched)
    repairs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # what was kept as found

    def notes(self) -> list[str]:
        out: list[str] = []
        if len(self.session_ids) > 1:
            out.append(f"{len(self.session_ids)} Claude Code session ids joined in one session")
        if self.broken_lines:
            out.append(f"skipped {len(self.broken_lines)} unreadable line(s)")
        if self.empty:
            out.append(f"{self.empty} record(s) without content kept as opaque")
        if self.unsupported_blocks:
            out.append(f"{self.unsupported_blocks} unsupported block(s) replaced by a marker")
        return out + self.repairs + self.problems

    def wire(self) -> dict[str, Any]:
        """JSON-ready, camelCase keys (as the rest of the wire)."""
        out = {to_camel(k): v for k, v in asdict(self).items()}
        out["kinds"] = dict(self.kinds)  # asdict would rebuild the Counter from pairs
        return out


def named_file(path: str) -> Path:
    """The file a request names for import, or InvalidParams saying why it cannot be read."""
    if len(path) > MAX_PATH:
        raise InvalidParams(f"path is longer than {MAX_PATH} characters")
    shown = path if len(path) <= 200 else path[:200] + "..."
    file = Path(path).expanduser()
    try:
        found = file.is_file()
    except (OSError, ValueError) as exc:  # a name too long, a NUL, an unreadable folder
        reason = getattr(exc, "strerror", None) or "not a usable path"
        raise InvalidParams(f"cannot read {shown!r}: {reason}") from None
    if not found:
        raise InvalidParams(f"no file at {shown!r}")
    return file


def import_claude_code(path: Path, store: SessionStore, *, title: str | None = None) -> Session:
    """A new session holding the conversation of a Claude Code session file."""
    return import_with_report(path, store, title=title)[0]


def import_with_report(
    path: Path, store: SessionStore, *, title: str | None = None
) -> tuple[Session, ImportReport]:
    """Read and convert the whole file first; write only when all of it made sense."""
    report = ImportReport(source=str(path))
    records = read_records(path, report)
    check_writable(records, path.name)  # a lone surrogate escape could never be written
    builder = RecordConverter(report, store.count)
    for record in records:
        builder.add(record)
    builder.finish()
    if report.messages == 0:
        raise InvalidParams(f"{path.name} holds no Claude Code conversation records")
    report.problems.extend(invariant_violations(builder.view))  # none, unless a repair missed
    report.tool_pairs = _tool_pairs(builder.all_messages)
    events = _events(builder.entries, store.count)
    sid = new_session_id()
    target = store.path_for(sid)
    header = {
        "type": "session",
        "format": 1,
        "sessionId": sid,
        "title": title or _title(records) or "Imported Claude Code session",
        "model": _model(records),
        "systemPrompt": None,
        "createdAt": _first_time(records),
        "importedFrom": str(path),
    }
    transcript = Transcript.create(target, header)
    try:
        transcript.append_many(events)  # the whole conversation in one write + fsync
    except BaseException:
        transcript.close()
        target.unlink(missing_ok=True)
        raise
    transcript.close()
    return store.get(sid), report


def _tool_pairs(messages: list[Message]) -> int:
    uses = {u.id for m in messages for u in m.tool_uses()}
    return len(uses & {r.tool_use_id for m in messages for r in m.tool_results()})


def _events(entries: list[Message | Boundary | Record], count: TokenCounter) -> list[Event]:
    events: list[Event] = []
    for entry in entries:
        if isinstance(entry, Message):
            entry.tokens = count(entry)
            events.append({"type": "message", "message": entry.wire()})
        elif isinstance(entry, Boundary):
            events.append({"type": "boundary", "boundary": entry.wire()})
        else:
            events.append({"type": "opaque", "record": entry})
    return events


def read_records(path: Path, report: ImportReport) -> list[Record]:
    """Every JSON object in the file; broken JSONL lines are counted and skipped."""
    try:
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise InvalidParams(
                f"{path.name} is {size:,} bytes; imports are limited to {MAX_IMPORT_BYTES:,}"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidParams(f"cannot read {path}: {exc.strerror or exc}") from None
    if b"\0" in data[:65536]:
        raise InvalidParams(f"{path.name} is a binary file, not a Claude Code session")
    numbered: Iterable[tuple[int, Any]]
    if data.lstrip()[:1] == b"[":
        try:
            numbered = enumerate(json.loads(data), start=1)
        except ValueError as exc:
            raise InvalidParams(f"{path.name} is not valid JSON: {exc}") from None
    else:
        lines = enumerate(data.split(b"\n"), start=1)
        numbered = ((n, _loads(line)) for n, line in lines if line.strip())
    records: list[Record] = []
    for number, item in numbered:
        if isinstance(item, dict):
            records.append(item)
        else:
            report.broken_lines.append(number)
    if not records:
        raise InvalidParams(
            f"{path.name} is not a Claude Code session file "
            "(expected one JSON record per line, or a JSON array of records)"
        )
    report.records = len(records)
    return records


def _loads(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _first_time(records: list[Record]) -> str:
    """When the conversation began: the first record's timestamp (now, if none has one)."""
    for record in records:
        stamp = record.get("timestamp")
        if isinstance(stamp, str) and stamp:
            return stamp
    return now_iso()


def _model(records: list[Record]) -> str:
    for record in reversed(records):
        message = record.get("message")
        if record.get("type") == "assistant" and isinstance(message, dict):
            model = message.get("model")
            if isinstance(model, str) and model and model != "<synthetic>":
                return model
    return ""


def _title(records: list[Record]) -> str | None:
    """Claude Code's own title (a `summary` record about this file), else the first prompt."""
    uuids = {r.get("uuid") for r in records}
    titles = [r for r in records if r.get("type") == "summary" and r.get("summary")]
    if titles:
        about_this = [r for r in titles if r.get("leafUuid") in uuids]
        return str((about_this[-1] if about_this else titles[0])["summary"])
    for record in records:
        if record.get("type") != "user" or record.get("isSidechain") or record.get("isMeta"):
            continue
        content = (record.get("message") or {}).get("content")
        texts = [content] if isinstance(content, str) else []
        if isinstance(content, list):
            texts = [str(b.get("text", "")) for b in content if isinstance(b, dict)]
        for text in (t.strip() for t in texts):
            # skip IDE context, command markup, interruption notes and summaries
            if text and not text.startswith(("<", "[", "Caveat:", CONTINUED_PREFIX)):
                return text.splitlines()[0][:80]
    return None
