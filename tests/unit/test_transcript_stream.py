"""Transcripts read line by line: every file reads as the whole-file reader read it, the
events are not kept, later reads see the same lines, and the header is still found."""

from __future__ import annotations

import gc
import json
import random
import shutil
import types
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.messages import Message, MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import Transcript, read_events
from baton.core.conversation.transcript_read import LinePass, LoadReport, parse_line

HEADER = {"type": "session", "sessionId": "s1", "format": 1, "title": "t", "model": "m"}


def whole_file_reader(path: Path) -> tuple[list[dict[str, Any]], LoadReport]:
    """How a transcript was read before it was streamed: the whole file, split at newlines."""
    report = LoadReport()
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    ends_clean = raw.endswith(b"\n") or not raw
    events: list[dict[str, Any]] = []
    at = 0  # where the line starts in the file
    for number, line in enumerate(lines, start=1):
        start, at = at, at + len(line) + 1
        if not line.strip():
            continue
        is_last = number == len(lines) or (number == len(lines) - 1 and lines[-1] == b"")
        try:
            event = parse_line(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if is_last and not ends_clean:
                report.torn_bytes = len(line)
            else:
                report.bad_lines.append(number)
                report.bad_spans.append((start, len(line)))
            continue
        if not isinstance(event, dict):
            report.bad_lines.append(number)
            report.bad_spans.append((start, len(line)))
            continue
        events.append(event)
    return events, report


FRAGMENTS = [
    b'{"type":"meta","title":"t","at":"2025-01-01T00:00:01Z"}',
    b'{"type":"message","message":{"id":"m1","role":"user","content":"hi"}}',
    b'{"type":"session","sessionId":"s1","format":1}',
    b'  {"a": 1}  ',
    b'{"a":1}\r',
    b"{}",
    b"[1, 2]",
    b"3",
    b"null",
    b'"text"',
    b"{oops",
    b'{"a":1}{"b":2}',
    b'{"t":"\xff\xfe"}',
    b'{"t":"lone \\ud800 surrogate"}',
    b'\xef\xbb\xbf{"bom":true}',
    b"",
    b" ",
    b"\t",
    b"\r",
    b"\x0b\x0c",
    b'{"deep":' * 300 + b"1" + b"}" * 300,
    b"[" * 300 + b"]" * 300,
    b'{"n":123456789012345678901234567890,"f":1.5e300}',
    '{"u":"\u00e9\u4e2d\U0001f600"}'.encode(),
    b"\x00{\x00}",  # {} in UTF-16, which `json` reads from bytes: as the line, not its newline
]


def random_file(rng: random.Random) -> bytes:
    parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 12))]
    newline = rng.choice([b"\n", b"\r\n"])
    data = newline.join(parts)
    ending = rng.random()
    if ending < 0.4:
        data += b"\n"
    elif ending < 0.6 and parts:
        data = data[: rng.randint(0, len(data))]  # cut anywhere, even inside a character
    return data


@pytest.mark.parametrize("seed", range(400))
def test_every_file_reads_as_the_whole_file_reader_read_it(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_file(random.Random(seed)))
    expected_events, expected_report = whole_file_reader(path)

    events, report = read_events(path)

    assert events == expected_events
    assert asdict(report) == asdict(expected_report)
    # and so does a transcript opened on it, read-only (nothing on disk changes)
    before = path.read_bytes()
    with Transcript.open(path, writable=False) as transcript:
        assert list(transcript.events()) == expected_events
        assert asdict(transcript.report) == asdict(expected_report)
        assert list(transcript.events()) == expected_events  # a second read: the same
    assert path.read_bytes() == before


@pytest.mark.parametrize("seed", range(100))
def test_a_writable_open_reads_the_same_and_its_rereads_see_the_repaired_file(
    tmp_path: Path, seed: int
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(random_file(random.Random(seed)))
    expected_events, expected_report = whole_file_reader(path)

    before = path.read_bytes()
    with Transcript.open(path) as transcript:
        assert list(transcript.events()) == expected_events
        assert asdict(transcript.report) == asdict(expected_report)
        assert path.read_bytes() == before  # reading writes nothing
        assert transcript._size == len(before)  # what later reads read: all of it
        assert list(transcript.events()) == expected_events
        transcript.append({"type": "meta", "title": "after"})
        data = path.read_bytes()
        assert data.endswith(b"\n")  # the tail was repaired before the append
        assert transcript._size == path.stat().st_size
        assert list(transcript.events()) == [*expected_events, {"type": "meta", "title": "after"}]
    assert read_events(path)[0] == [*expected_events, {"type": "meta", "title": "after"}]


def test_a_pass_with_a_limit_reads_that_many_bytes_and_a_cut_line_is_a_torn_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"type": "meta", "title": f"t{n}"}).encode() for n in range(3)]
    path.write_bytes(b"\n".join(lines) + b"\n")

    whole = LinePass(path, limit=path.stat().st_size)
    assert [e["title"] for e in whole] == ["t0", "t1", "t2"]
    assert whole.end == path.stat().st_size and whole.tail is None

    cut = LinePass(path, limit=len(lines[0]) + 1 + 5)
    assert [e["title"] for e in cut] == ["t0"]
    assert cut.tail == lines[1][:5] and cut.report.torn_bytes == 5
    assert list(LinePass(path, limit=0)) == []


def test_a_read_only_view_rereads_only_what_it_loaded(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    writer = Transcript.create(path, HEADER)
    writer.append({"type": "meta", "title": "one"})
    reader = Transcript.open(path)  # the lock is taken: read-only
    assert reader.read_only
    loaded = list(reader.events())
    writer.append({"type": "meta", "title": "two"})

    # what the view was built from, not the writer's later lines
    assert list(reader.events()) == loaded == [HEADER, {"type": "meta", "title": "one"}]
    writer.close()
    reader.close()


def test_the_header_is_the_first_event_read_or_written(tmp_path: Path) -> None:
    created = tmp_path / "a.jsonl"
    with Transcript.create(created, HEADER) as transcript:
        assert transcript.header == HEADER
    with Transcript.open(created) as transcript:
        assert transcript.header == HEADER  # found without anything else being read first

    broken = tmp_path / "b.jsonl"
    broken.write_bytes(b"{oops\n" + json.dumps(HEADER).encode() + b"\n")
    with Transcript.open(broken, writable=False) as transcript:
        assert transcript.header == HEADER  # as `events[0]` was: the first readable event

    empty = tmp_path / "c.jsonl"
    empty.write_bytes(b"")
    with Transcript.open(empty) as transcript:
        assert transcript.header is None
        transcript.append(HEADER)
        assert transcript.header == HEADER


def event_dicts_reachable(root: object) -> int:
    """How many event-shaped dicts (`{"type": "message", "message": ...}`) `root` reaches.

    The walk stops at classes, modules and functions: through a function's globals it
    would reach every module, and with them whatever other tests left behind."""
    seen: set[int] = set()
    stack = [root]
    found = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(obj))
        if type(obj) is dict and obj.get("type") == "message" and "message" in obj:
            found += 1
        stack.extend(gc.get_referents(obj))
    return found


def test_a_loaded_session_keeps_none_of_its_events(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, lambda m: 1)
    session = store.create(title="t")
    for n in range(50):
        session.append([MessageInput(role=("user", "assistant")[n % 2], content=f"turn {n}")])
    store.close()

    reopened = SessionStore(tmp_path, lambda m: 1)
    loaded = reopened.get(session.session_id)

    assert len(loaded.view) == 50
    assert event_dicts_reachable(loaded) == 0
    assert loaded.transcript.header is not None
    assert loaded.transcript.header["sessionId"] == session.session_id
    loaded.append([MessageInput(role="user", content="one more")])
    assert event_dicts_reachable(loaded) == 0  # an append keeps none either
    reopened.close()


def snapshot(session: Session) -> dict[str, Any]:
    def dump(message: Message) -> dict[str, Any]:
        out = message.model_dump(mode="json")
        if message.id == "baton_lost_start":
            out.pop("created_at")  # made at load time
        return out

    return {
        "messages": {mid: dump(m) for mid, m in session.messages.items()},
        "view": session.view,
        "boundaries": {bid: b.model_dump(mode="json") for bid, b in session.boundaries.items()},
        "active": session.active,
        "damage": asdict(session.damage),
        "problems": session.load_problems,
        "header": (session.session_id, session.title, session.model, session.created_at),
        "updated": session.updated_at,
        # not the revision: it is drawn from one count for the process, never repeated
    }


@pytest.mark.parametrize("cut", ["none", "garbage", "deleted", "torn", "garbage+torn"])
def test_a_damaged_session_replays_twice_from_the_file_as_it_did_from_memory(
    tmp_path: Path, cut: str
) -> None:
    """A damaged transcript is replayed a second time (repairing); that pass reads the
    file again and must see what the first one saw, also after a writable open repaired
    the file's torn tail."""
    store = SessionStore(tmp_path / "w", lambda m: 1)
    session = store.create(title="t")
    session.append([MessageInput(id="p1", role="user", content="one")])
    session.append([MessageInput(id="a1", role="assistant", content="two")])
    session.append([MessageInput(id="p2", role="user", content="three")])
    session.append([MessageInput(id="a2", role="assistant", content="four")])
    store.close()
    path = session.transcript.path
    lines = path.read_bytes().split(b"\n")[:-1]
    if "garbage" in cut:
        lines[2] = b"{not json"
    if "deleted" in cut:
        del lines[1]
    data = b"\n".join(lines) + b"\n"
    if "torn" in cut:
        data = data[:-20]
    path.write_bytes(data)
    shutil.copytree(tmp_path / "w", tmp_path / "r")

    read_only = Session(
        Transcript.open(tmp_path / "r" / "sessions" / path.name, writable=False), lambda m: 1
    )
    writable = SessionStore(tmp_path / "w", lambda m: 1).get(session.session_id)

    assert snapshot(writable) == snapshot(read_only)
    assert writable.damage.any == ("garbage" in cut)  # the second, repairing pass ran
    assert not writable.read_only
    writable.transcript.close()
    read_only.transcript.close()
