"""The first list after an import reads none of the new transcript: the import hands the
list's index the file's entry, made from the events it wrote (`Entry.written`), where the
list summarized the whole file again (0.8-1.2 s for the 76 MB transcript of a 100 MB
import, every list behind it waiting). The entry is the one a read of the file makes."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation import listing
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.listing import SessionIndex
from baton.core.conversation.messages import ApiUsage, Message, TextBlock
from baton.core.conversation.store import SessionStore
from baton.core.conversation.summary_entry import Entry
from baton.core.conversation.transcript_summary import summarize
from baton.core.importers.claude_code import import_with_report
from baton_testkit.claude_code_gen import generate

WAIT = 20.0  # an upper bound, never a pause
GENERATED = {  # the three eras of Claude Code's files, and compactions among their records
    "old": {"era": "old", "compactions": 0},
    "recent": {"era": "recent", "compactions": 0},
    "newest": {"era": "newest", "compactions": 0},
    "compacted": {"era": "recent", "compactions": 2},
    "compacted-newest": {"era": "newest", "compactions": 1, "restarts": 1},
}


def reads_counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each file the list's index summarizes (reads) from now on."""
    read: list[str] = []

    def counted(path: str, *args: Any, **kwargs: Any) -> Any:
        read.append(Path(path).name)
        return summarize(path, *args, **kwargs)

    monkeypatch.setattr(listing, "summarize", counted)
    return read


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_the_list_after_an_import_reads_none_of_its_transcript_and_lists_it_as_read(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = generate(7, **GENERATED[name]).write(tmp_path / "claude.jsonl")
    store = SessionStore(tmp_path / "data", lambda message: 1)
    session, _ = import_with_report(source, store)
    sid = session.session_id
    read = reads_counted(monkeypatch)
    listed = store.summaries(held=())
    assert read == []  # nothing of the new transcript read, nor of any other
    fresh = SessionIndex().summaries(store.sessions_dir)  # a list that reads the file
    assert read == [f"{sid}.jsonl"]
    assert listed == fresh  # field by field (dataclasses)
    assert [s.session_id for s in listed] == [sid]
    assert listed[0].compactions > 0 or not name.startswith("compacted")
    path = store.path_for(sid)
    made = listing._unpack(store._index._entries[sid])  # what the next list goes on from
    assert made == summarize(str(path), os.lstat(path), None, whole=True)


def test_a_transcript_changed_after_its_import_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The handed entry stands for the file as the import left it: a line appended since
    (by this server or another process) is read as any list reads it, from where the
    entry ends."""
    source = generate(3, era="newest", compactions=0).write(tmp_path / "claude.jsonl")
    store = SessionStore(tmp_path / "data", lambda message: 1)
    session, _ = import_with_report(source, store)
    with store.path_for(session.session_id).open("a", encoding="utf-8") as out:
        out.write('{"type": "meta", "title": "Renamed elsewhere"}\n')
    calls: list[Any] = []

    def counted(path: str, st: os.stat_result, before: Any, **kwargs: Any) -> Any:
        calls.append(before)
        return summarize(path, st, before, **kwargs)

    monkeypatch.setattr(listing, "summarize", counted)
    (listed,) = store.summaries(held=())
    assert listed.title == "Renamed elsewhere"
    assert len(calls) == 1 and calls[0] is not None  # continued from the import's entry
    assert listed == SessionIndex().summaries(store.sessions_dir)[0]


def _message(at: str, usage: ApiUsage | None = None) -> Message:
    return Message(role="assistant", content=[TextBlock(text="a")], created_at=at, usage=usage)


@pytest.mark.parametrize("start", ["", "not a time", "2026-01-01T00:00:00Z"])
def test_an_entry_given_written_events_is_the_one_their_lines_give(start: str) -> None:
    """Times out of order, none, not a time, naive and with an offset; a reply whose usage
    is all zero (the one before it stands), usage after a boundary (unknown until then),
    events between messages that are passed by: `written` of the models as written gives
    the entry `event` gives of their lines read back."""
    usage, zero = ApiUsage(input_tokens=10, output_tokens=5), ApiUsage()
    boundary = Boundary(direction="all", created_at="2026-01-20T00:00:00Z")
    header = {"type": "session", "sessionId": "s_x", "title": "t", "createdAt": start}
    messages = [
        _message("2026-02-01T10:00:00.000Z", usage),
        _message("2026-01-15T10:00:00.000Z"),  # earlier: the latest stays
        _message(""),
        _message("yesterday", ApiUsage(input_tokens=3)),
        _message("2026-02-01T12:00:00+01:00", zero),  # 11:00 UTC: later than 10:00
        _message("2026-02-01T10:30:00"),  # naive, taken as UTC
        _message("2026-02-01T11:00:00Z"),  # the same instant: the first one's text stays
    ]
    events: list[dict[str, Any]] = [
        header,
        *({"type": "message", "message": m} for m in messages[:3]),
        {"type": "opaque", "record": {"type": "progress"}},
        {"type": "boundary", "boundary": boundary.wire()},
        *({"type": "message", "message": m} for m in messages[3:]),
        {"type": "meta", "title": "renamed"},
    ]
    given, read = Entry(1, 2), Entry(1, 2)
    given.written(events[:4])
    given.written(events[4:])
    for event in events:
        line = json.dumps(event, default=lambda m: m.wire())
        read.event(json.loads(line))
    assert given == read
    assert read.updated_at and read.tokens == 3  # the fold had times and usage to weigh


def test_an_import_ending_while_a_list_runs_does_not_wait_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import's worker handed its entry over under the list's lock, so an import that
    ended while a list ran (up to its 5 s) waited for it before it answered. The entry is
    now left for the next list that finds the file, which reads none of it."""
    source = generate(4, era="recent", compactions=1).write(tmp_path / "claude.jsonl")
    store = SessionStore(tmp_path / "data", lambda message: 1)
    index = store._index
    done = threading.Event()
    with index._listing:  # a list under way

        def imported() -> None:
            import_with_report(source, store)
            done.set()

        worker = threading.Thread(target=imported, daemon=True)
        worker.start()
        assert done.wait(WAIT)  # answered while the list holds its lock
    read = reads_counted(monkeypatch)
    listed = store.summaries(held=())
    assert read == []
    assert listed == SessionIndex().summaries(store.sessions_dir)
