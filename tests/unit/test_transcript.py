"""The transcript file: durable appends, private permissions, torn lines, one writer."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation import files
from baton.core.conversation.transcript import Transcript, read_events
from baton.core.errors import InvalidParams, SessionLocked, StorageError, TranscriptError

HEADER = {"type": "session", "sessionId": "s1", "format": 1}


def event(n: int) -> dict[str, Any]:
    return {"type": "meta", "title": f"title {n}", "at": f"2025-01-01T00:00:0{n}Z"}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "sessions" / "s1.jsonl"


def test_appended_events_survive_a_reopen_in_order(path: Path) -> None:
    with Transcript.create(path, HEADER) as transcript:
        transcript.append(event(1))
        transcript.append_many([event(2), event(3)])

    with Transcript.open(path) as reopened:
        assert list(reopened.events()) == [HEADER, event(1), event(2), event(3)]
        assert reopened.report.problems == []


def test_text_that_cannot_be_utf_8_is_refused_where_it_is_and_nothing_is_written(
    path: Path,
) -> None:
    with Transcript.create(path, HEADER) as transcript:
        before = path.read_bytes()
        bad = {"type": "meta", "title": "ok", "tags": ["fine", "lone \ud800 surrogate"]}
        with pytest.raises(InvalidParams, match=r"at \[1\]\.tags\[1\]"):
            transcript.append_many([event(1), bad])
        assert path.read_bytes() == before
        transcript.append(event(2))
    with Transcript.open(path) as reopened:
        assert list(reopened.events()) == [HEADER, event(2)]


def test_an_append_is_fsynced_before_it_returns(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = Transcript.create(path, HEADER)
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.fstat(fd).st_size)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    transcript.append_many([event(1), event(2)])

    # one fsync for the batch, after the whole batch reached the file
    assert synced == [path.stat().st_size]
    assert path.read_bytes().count(b"\n") == 3
    transcript.close()


def test_files_are_private(path: Path) -> None:
    Transcript.create(path, HEADER).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_create_refuses_an_existing_file(path: Path) -> None:
    Transcript.create(path, HEADER).close()
    before = path.read_bytes()
    with pytest.raises(FileExistsError):
        Transcript.create(path, {**HEADER, "title": "other"})
    assert path.read_bytes() == before


def test_opening_a_missing_transcript_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError):
        Transcript.open(tmp_path / "nope.jsonl")


def write_torn(path: Path) -> bytes:
    with Transcript.create(path, HEADER) as transcript:
        transcript.append(event(1))
    torn = b'{"type": "meta", "title": "half'
    with path.open("ab") as handle:
        handle.write(torn)
    return torn


def test_a_torn_last_line_is_skipped_reported_and_moved_aside(path: Path) -> None:
    torn = write_torn(path)

    with Transcript.open(path) as transcript:
        assert list(transcript.events()) == [HEADER, event(1)]
        assert transcript.report.torn_bytes == len(torn)
        assert any("torn last line" in p for p in transcript.report.problems)
        transcript.append(event(2))

    assert path.with_suffix(".jsonl.torn").read_bytes() == torn + b"\n"
    events, report = read_events(path)
    assert events == [HEADER, event(1), event(2)]
    assert report.problems == []


def test_a_read_only_open_leaves_a_torn_bytes_in_place(path: Path) -> None:
    write_torn(path)
    before = path.read_bytes()

    with Transcript.open(path, writable=False) as transcript:
        assert transcript.report.torn_bytes is not None

    assert path.read_bytes() == before
    assert not path.with_suffix(".jsonl.torn").exists()


def test_a_complete_last_line_without_newline_gets_one(path: Path) -> None:
    Transcript.create(path, HEADER).close()
    with path.open("ab") as handle:
        handle.write(json.dumps(event(1)).encode())

    with Transcript.open(path) as transcript:
        assert list(transcript.events()) == [HEADER, event(1)]
        assert transcript.report.problems == []
        transcript.append(event(2))

    assert read_events(path)[0] == [HEADER, event(1), event(2)]
    assert not path.with_suffix(".jsonl.torn").exists()


def test_an_unreadable_middle_line_is_skipped_and_reported(path: Path) -> None:
    path.parent.mkdir(parents=True)
    lines = [json.dumps(HEADER), "{garbage", json.dumps(event(1)), "[1, 2]"]
    path.write_text("\n".join(lines) + "\n")

    events, report = read_events(path)

    assert events == [HEADER, event(1)]
    assert report.bad_lines == [2, 4]
    assert report.torn_bytes is None


def test_a_read_only_transcript_refuses_appends(path: Path) -> None:
    Transcript.create(path, HEADER).close()
    before = path.read_bytes()
    with Transcript.open(path, writable=False) as transcript:
        assert transcript.read_only
        with pytest.raises(SessionLocked) as caught:
            transcript.append(event(1))
    assert caught.value.code == "session_locked"
    assert path.read_bytes() == before


SECOND_PROCESS = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from baton.core.errors import SessionLocked
    from baton.core.conversation.transcript import Transcript

    transcript = Transcript.open(Path(sys.argv[1]))
    outcome = {"read_only": transcript.read_only, "events": len(list(transcript.events()))}
    try:
        transcript.append({"type": "meta", "title": "from the second process"})
        outcome["appended"] = True
    except SessionLocked as exc:
        outcome["error"] = exc.code
    transcript.close()
    print(json.dumps(outcome))
    """
)


def run_second_process(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", SECOND_PROCESS, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_second_process_gets_a_read_only_view_and_session_locked(path: Path) -> None:
    writer = Transcript.create(path, HEADER)
    writer.append(event(1))
    before = path.read_bytes()

    outcome = run_second_process(path)

    assert outcome == {"read_only": True, "events": 2, "error": "session_locked"}
    assert path.read_bytes() == before
    writer.append(event(2))  # the first process still writes
    writer.close()
    assert read_events(path)[0] == [HEADER, event(1), event(2)]


def test_the_lock_is_free_once_the_writer_closes(path: Path) -> None:
    Transcript.create(path, HEADER).close()

    outcome = run_second_process(path)

    assert outcome == {"read_only": False, "events": 1, "appended": True}
    assert len(read_events(path)[0]) == 2


def test_a_failed_write_leaves_no_half_line_for_the_next_append(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = Transcript.create(path, HEADER)
    real_write = os.write
    calls = {"n": 0}

    def half_then_fail(fd: int, parts: list[memoryview]) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            data = b"".join(parts)
            return real_write(fd, data[: len(data) // 2])  # a short write ...
        raise OSError(28, "No space left on device")  # ... then the disk is full

    monkeypatch.setattr(os, "writev", half_then_fail)
    with pytest.raises(StorageError, match="No space left on device"):
        transcript.append(event(1))
    monkeypatch.undo()
    transcript.append(event(2))  # acknowledged: it must survive a reload
    transcript.close()

    events, report = read_events(path)
    assert events == [HEADER, event(2)]
    assert report.problems == []


def test_a_write_the_disk_takes_a_few_bytes_at_a_time_lands_whole_and_in_order(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = Transcript.create(path, HEADER)
    real_write = os.write
    given: list[int] = []

    def a_few_bytes(fd: int, parts: list[memoryview]) -> int:
        given.append(len(parts))
        return real_write(fd, b"".join(parts)[:7])

    monkeypatch.setattr(files, "IOV_MAX", 3)
    monkeypatch.setattr(os, "writev", a_few_bytes)
    big = {"type": "boundary", "boundary": {"id": "cmp_1", "viewBefore": ["m"] * 50}}
    transcript.append_many([event(1), big, event(2), event(3)])
    monkeypatch.undo()
    transcript.append(event(4))
    transcript.close()

    events, report = read_events(path)
    assert events == [HEADER, event(1), big, event(2), event(3), event(4)]
    assert report.problems == []
    assert max(given) == 3  # never more parts than a call may take


def test_every_line_reads_as_json_reads_it_whichever_parser_took_it(path: Path) -> None:
    lines = [
        b'{"type": "session", "sessionId": "s"}',
        b'{"type": "meta", "title": "lone \\ud800 surrogate"}',  # only json reads this
        b"\xef\xbb\xbf" + b'{"type": "meta", "title": "after a BOM"}',  # and this
        b'{"type": "meta", "title": "x", "title": "last wins", "n": 1e400, '
        b'"big": 12345678901234567890123}',
        b'{"type": "meta", "title": "\xff"}',  # not UTF-8
        b'{"type": "meta"} trailing',
        b'{"type": "meta", "title": "crlf"}\r',
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")

    events, report = read_events(path)

    expected: list[Any] = []
    for line in lines:
        try:
            expected.append(json.loads(line))
        except ValueError:
            continue
    assert events == expected
    assert report.bad_lines == [5, 6]
