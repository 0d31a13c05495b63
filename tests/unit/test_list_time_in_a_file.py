"""A list's time runs out inside one transcript (issue 26, item 2's time bound): the list
stops reading it there and lists it from what it read; the next one goes on from there.
A clock that moves a second each time it is read stands in for a file of gigabytes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from baton.core.conversation import listing, transcript_summary
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.store import SessionStore
from baton.core.conversation.summary_entry import Entry
from baton.core.conversation.transcript_summary import SMALL, summarize


class Ticking:
    """`time` for the list and the summary: each reading of the clock a second later."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture
def ticking(monkeypatch: pytest.MonkeyPatch) -> Iterator[Ticking]:
    clock = Ticking()
    monkeypatch.setattr(listing, "time", clock)
    monkeypatch.setattr(transcript_summary, "time", clock, raising=False)
    yield clock


def long_session(store: SessionStore, title: str) -> str:
    """A session whose transcript is past SMALL (read line by line, not in one go)."""
    session = store.create(title="first title")
    for n in range(400):
        text = f"turn {n} " + "word " * 150
        session.append([MessageInput(role="user", content=text)])
        session.append([MessageInput(role="assistant", content=f"reply {n}")])
    session.set_meta(title=title)  # the last line: known only to a read that got there
    assert session.transcript.path.stat().st_size > SMALL
    return session.session_id


def test_a_list_out_of_time_inside_a_transcript_stops_there_and_the_next_goes_on(
    store: SessionStore, ticking: Ticking, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = long_session(store, "the last title")
    store.close()
    parsed: list[bytes] = []
    parse = transcript_summary.parse_line

    def counted(line: bytes) -> Any:
        parsed.append(line)
        return parse(line)

    monkeypatch.setattr(transcript_summary, "parse_line", counted)

    hurried = store._index.summaries(store.sessions_dir, seconds=4)  # a few looks at the clock

    (row,) = hurried
    assert row.session_id == sid and row.partial and row.title == "first title"
    first_pass = len(parsed)
    assert 1 < first_pass < 100  # stopped inside the file (it has 802 lines)

    (row,) = store._index.summaries(store.sessions_dir, seconds=10_000)

    assert not row.partial and row.title == "the last title"
    lines = store.sessions_dir.joinpath(f"{sid}.jsonl").read_bytes().count(b"\n")
    assert len(parsed) == lines  # went on from where it stopped: no line read twice


def entry_fields(entry: Entry) -> tuple[object, ...]:
    return tuple(getattr(entry, name) for name in Entry.__dataclass_fields__)


def test_a_summary_cut_short_and_continued_is_the_summary_of_one_read(
    store: SessionStore,
) -> None:
    sid = long_session(store, "the last title")
    store.close()
    path = str(store.sessions_dir / f"{sid}.jsonl")
    st = os.lstat(path)

    cut = summarize(path, st, None, whole=True, deadline=0.0)  # out of time at once
    assert not cut.complete and 0 < cut.end < st.st_size

    whole = summarize(path, st, None, whole=True)
    assert entry_fields(summarize(path, st, cut, whole=True)) == entry_fields(whole)


def test_a_summary_cut_short_is_read_again_whole_once_the_file_changed_in_place(
    store: SessionStore,
) -> None:
    sid = long_session(store, "the last title")
    store.close()
    path = store.sessions_dir / f"{sid}.jsonl"
    cut = summarize(str(path), os.lstat(path), None, whole=True, deadline=0.0)
    data = path.read_bytes()
    assert data.count(b'"turn 3 ') == 1 and data.index(b'"turn 3 ') < cut.end
    path.write_bytes(data.replace(b'"turn 3 ', b"#turn 3 "))  # a line broken, in place
    st = os.lstat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    st = os.lstat(path)

    again = summarize(str(path), st, cut, whole=True)

    assert entry_fields(again) == entry_fields(summarize(str(path), st, None, whole=True))
    assert again.bad_lines == 1 and again.complete  # the line read before, read again


def test_a_line_longer_than_a_list_has_time_for_is_read_on_from_where_the_last_stopped(
    store: SessionStore, ticking: Ticking
) -> None:
    """A line of 12 MB (a file of gigabytes, at the ticking clock's pace: about 4 MB a
    list) is read a list at a time, each going on from where the last stopped."""
    session = store.create(title="first title")
    session.append([MessageInput(role="user", content="word " * 2_400_000)])
    session.set_meta(title="the last title")
    store.close()

    rows = [store._index.summaries(store.sessions_dir, seconds=4)[0] for _ in range(8)]

    partial = [row.partial for row in rows]
    assert partial[0] and partial[1]  # out of time inside the long line, twice at least
    assert False in partial  # then it got to the end
    done = rows[partial.index(False)]
    assert done.title == "the last title" and all(not p for p in partial[partial.index(False) :])
