"""Imports that stay bounded: read and written one batch at a time (the result the same as
in one go), linear in the records, off the event loop with progress and cancellation, and
lines nested too deeply or holding NaN skipped like any other bad line."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conversations import char_count
from imports_cancelled import cancelled_midway, cancelled_once_written, left_in

from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers import claude_code, claude_code_array, claude_code_read
from baton.core.importers.claude_code import import_off_loop, import_with_report
from baton.core.importers.claude_code_json import MAX_DEPTH
from baton.core.importers.claude_code_write import StagedTranscript
from baton.core.importers.read_fingerprint import file_fingerprint
from baton_testkit.claude_code_gen import case, generate


def snapshot(session: Session) -> dict[str, Any]:
    """The session as it reads, but for the ids of its compactions (new each time)."""
    return {
        "view": [m.wire() | {"boundaryId": None} for m in session.view_messages()],
        "messages": sorted(session.messages),
        "boundaries": [b.view_after for b in session.boundaries.values()],
        "opaque": session.opaque,
        "title": session.title,
        "model": session.model,
        "created": session.created_at,
    }


# ---- batches -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [3, 14, 41])
def test_writing_in_batches_gives_the_session_one_write_gives(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    generated = generate(seed, turns=20, repairs=True)
    path = generated.write(tmp_path / "file.jsonl")
    whole, whole_report = import_with_report(path, plain_store)

    monkeypatch.setattr(claude_code, "FLUSH_RECORDS", 1)  # a write after every record
    batched, batched_report = import_with_report(path, plain_store)

    assert snapshot(batched) == snapshot(whole)
    assert batched_report.wire() == whole_report.wire()
    assert batched.transcript.path.stat().st_size > whole.transcript.path.stat().st_size * 0.9


def test_a_title_and_model_known_only_at_the_end_follow_as_a_meta_event(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    generated = case("newest-several-compactions")
    records = [r for r in generated.records if r.get("type") != "summary"]
    leaf = next(r["uuid"] for r in reversed(records) if "uuid" in r)
    records.append({"type": "summary", "summary": "Named At The End", "leafUuid": leaf})
    path = tmp_path / "late.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    monkeypatch.setattr(claude_code, "FLUSH_RECORDS", 5)

    session, _ = import_with_report(path, plain_store)

    assert session.title == "Named At The End" and session.model == "claude-opus-4-7"
    lines = [json.loads(line) for line in session.transcript.path.read_text().splitlines()]
    assert lines[0]["type"] == "session"  # written before the first response was read
    assert (lines[0]["title"], lines[0]["model"]) != ("Named At The End", "claude-opus-4-7")
    size = path.stat().st_size  # the header's was that of the first batch read
    assert lines[0]["importedSize"] < size
    assert lines[-1] == {
        "type": "meta",
        "title": "Named At The End",
        "model": "claude-opus-4-7",
        "importedSize": size,
        "importedFingerprint": file_fingerprint(path, size),
    }


def test_a_failure_after_the_first_write_leaves_nothing_behind(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = generate(5, turns=10).records
    text = "".join(json.dumps(r) + "\n" for r in lines)
    text += json.dumps({"type": "user", "message": {"role": "user", "content": "\ud800"}}) + "\n"
    path = tmp_path / "late-surrogate.jsonl"
    path.write_text(text)
    monkeypatch.setattr(claude_code, "FLUSH_RECORDS", 3)

    with pytest.raises(InvalidParams, match="lone surrogate"):
        import_with_report(path, plain_store)

    assert left_in(plain_store) == []


# ---- linear ------------------------------------------------------------------------------


class CountedId(str):
    """A session id that counts how often it is compared (a list scan compares each)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        CountedId.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def records_with_their_own_session_ids(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k in range(n // 2):
        out.append({"type": "user", "uuid": f"u{k}", "sessionId": f"s{k}-a",
                    "message": {"role": "user", "content": f"question {k}"}})  # fmt: skip
        reply = {"id": f"msg_{k}", "role": "assistant", "content": [{"type": "text", "text": "ok"}]}
        out.append({"type": "assistant", "uuid": f"a{k}", "sessionId": f"s{k}-b", "message": reply})
    return out


def operations(n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(function calls, session id comparisons) of importing n records, each record with
    a session id of its own."""
    path = tmp_path / f"ids-{n}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records_with_their_own_session_ids(n)))
    reading = claude_code_read.records

    def counted(*args: Any, **kwargs: Any) -> Iterator[tuple[dict[str, Any], int]]:
        for record, at in reading(*args, **kwargs):
            record["sessionId"] = CountedId(record["sessionId"])
            yield record, at

    monkeypatch.setattr(claude_code_read, "records", counted)
    calls = Counter[str]()

    def profile(frame: Any, event: str, arg: Any) -> None:
        calls[event] += 1

    store = SessionStore(tmp_path / f"data-{n}", char_count)
    CountedId.compared = 0
    sys.setprofile(profile)
    try:
        import_with_report(path, store)
    finally:
        sys.setprofile(None)
        store.close()
    return calls["call"] + calls["c_call"], CountedId.compared


def test_the_import_is_linear_in_records_and_in_distinct_session_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_calls, small_compared = operations(500, tmp_path, monkeypatch)
    big_calls, big_compared = operations(2000, tmp_path, monkeypatch)

    # four times the records: four times the work (a scan per record would be sixteen)
    assert big_calls / small_calls < 4.5
    assert big_compared <= 2000 and small_compared <= 500


# ---- off the event loop ------------------------------------------------------------------


async def test_the_import_runs_off_the_loop_and_reports_the_share_read(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = generate(9, turns=40).write(tmp_path / "file.jsonl")
    reported: list[tuple[str, float | None]] = []
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    other = asyncio.ensure_future(ticker())
    try:
        session, _ = await import_off_loop(
            path, plain_store, progress=lambda m, f: reported.append((m, f))
        )
    finally:
        other.cancel()

    assert ticks > len(reported) > 2  # the loop went on running while the file was read
    fractions = [f for _, f in reported]
    assert fractions == sorted(fractions) and fractions[-2:] == [1.0, 1.0]
    assert {m for m, _ in reported[:-1]} == {"Reading file.jsonl"}
    assert reported[-1][0] == "Opening the imported session"
    assert plain_store.get(session.session_id) is session


async def test_the_imported_session_is_read_off_the_loop_and_kept_by_the_store(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big import's new session took a second to read, and that was on the loop: it is
    made (replayed from what the import wrote) in the import's thread, and the store keeps
    that same object."""
    path = generate(9, turns=40).write(tmp_path / "file.jsonl")
    loop_thread = threading.get_ident()
    read_on: list[int] = []
    opened = StagedTranscript.opened

    def noted(staged: StagedTranscript) -> Session:
        read_on.append(threading.get_ident())
        return opened(staged)

    monkeypatch.setattr(StagedTranscript, "opened", noted)
    session, _ = await import_off_loop(path, plain_store)

    assert read_on and loop_thread not in read_on
    assert plain_store.get(session.session_id) is session  # kept: not read again
    assert session.view_messages() and not session.read_only


def test_the_import_runs_without_the_cyclic_collector_and_leaves_it_on(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each full collection walks the whole process (a second of a 100 MB import, and the
    other sessions waited through each): the collector is off while records are converted."""
    import gc

    from baton.core.importers.claude_code_records import RecordConverter

    path = generate(9, turns=20).write(tmp_path / "file.jsonl")
    seen: set[bool] = set()
    add = RecordConverter.add

    def noted(self: RecordConverter, record: Any) -> None:
        seen.add(gc.isenabled())
        add(self, record)

    monkeypatch.setattr(RecordConverter, "add", noted)
    assert gc.isenabled()
    import_with_report(path, plain_store)
    assert seen == {False}
    assert gc.isenabled()


async def test_a_cancelled_import_stops_and_leaves_nothing_behind(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = generate(9, turns=60).write(tmp_path / "file.jsonl")
    seen = await cancelled_midway(path, plain_store, monkeypatch, 2)

    assert seen[-1] is not None and seen[-1] < 1.0  # it stopped before the end
    assert left_in(plain_store) == []
    assert plain_store.list() == []


# ---- lines past the limits ---------------------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def conversation_lines() -> list[str]:
    prompt = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}
    reply = {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": "yes"}]}
    return [json.dumps(prompt), json.dumps({"type": "assistant", "uuid": "a1", "message": reply})]


def with_input(depth: int, uid: str = "x1") -> str:
    """An assistant record whose tool input nests `depth` arrays (the record adds 6)."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "T", "input": {"v": "@"}}
    message = {"id": "msg_2", "role": "assistant", "content": [call]}
    record = {"type": "assistant", "uuid": uid, "message": message}
    return json.dumps(record).replace('"@"', nested(depth))


@pytest.mark.parametrize("depth", [MAX_DEPTH, 400, 1000, 100_000])
def test_a_line_nested_too_deeply_is_skipped_and_reported(
    tmp_path: Path, plain_store: SessionStore, depth: int
) -> None:
    first, second = conversation_lines()
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join([first, with_input(depth), second]) + "\n")

    session, report = import_with_report(path, plain_store)

    assert report.broken_lines == [2]
    assert session.view == ["u1", "a1"]
    assert "skipped 1 unreadable line(s): line 2" in report.notes()


def test_a_line_within_the_nesting_limit_is_imported(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    first, _ = conversation_lines()
    path = tmp_path / "deep-enough.jsonl"
    path.write_text("\n".join([first, with_input(MAX_DEPTH - 6)]) + "\n")

    session, report = import_with_report(path, plain_store)

    assert report.broken_lines == []
    assert session.view[:2] == ["u1", "x1"]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_line_with_nan_or_infinity_is_skipped_and_reported(
    tmp_path: Path, plain_store: SessionStore, constant: str
) -> None:
    first, second = conversation_lines()
    bad = with_input(1).replace("[]", constant)
    path = tmp_path / "nan.jsonl"
    path.write_text("\n".join([first, bad, second]) + "\n")

    session, report = import_with_report(path, plain_store)

    assert report.broken_lines == [2]
    assert constant not in session.transcript.path.read_text()


@pytest.mark.parametrize("depth", [400, 1000, 100_000])
def test_an_array_item_past_the_limit_is_skipped_and_reported(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch, depth: int
) -> None:
    """Like a line of a JSONL file, also one nested deeper than the parser goes (1,000
    levels and more), whose end is found without parsing it: strings holding brackets and
    quotes passed over, the item running past the window the array is read in."""
    monkeypatch.setattr(claude_code_array, "ARRAY_CHUNK", 4096)
    first, second = conversation_lines()
    strings = json.dumps({"type": "note", "text": 'a "]]" and {{ and \\'})
    path = tmp_path / "deep.json"
    path.write_text(f"[{first},\n{with_input(depth)},\n{strings},\n{second}]")

    session, report = import_with_report(path, plain_store)

    assert report.broken_lines == [2] and session.view == ["u1", "a1"]
    # numbered as the array's items: an item written indented spans many lines
    assert "skipped 1 unreadable item(s): item 2" in report.notes()


def test_an_array_whose_too_deep_item_never_ends_is_refused(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    first, _ = conversation_lines()
    path = tmp_path / "deep.json"
    path.write_text(f"[{first},\n" + "[" * 5000 + ' "]" ')
    with pytest.raises(InvalidParams, match="the array does not end"):
        import_with_report(path, plain_store)
    assert left_in(plain_store) == []


async def test_a_cancel_that_comes_once_the_file_is_written_removes_it(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = generate(2).write(tmp_path / "file.jsonl")
    await cancelled_once_written(path, plain_store, monkeypatch)

    assert left_in(plain_store) == []


def test_an_import_removes_what_an_import_killed_midway_left(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """A server killed while it imported (the editor closed) never removed its staged
    file, which can be as large as the transcript. The next import removes such a file:
    one no writer holds locked and none wrote to for a minute."""
    folder = plain_store.sessions_dir
    folder.mkdir(parents=True)
    left, fresh, held = (folder / f".s_{n:016x}.importing" for n in (1, 2, 3))
    for staged in (left, fresh, held):
        staged.write_text('{"type":"session"}\n')
    hour_ago = time.time() - 3600
    for staged in (left, held):
        os.utime(staged, (hour_ago, hour_ago))
    writer = os.open(held, os.O_RDONLY)  # another import, still writing it
    fcntl.flock(writer, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        session, _ = import_with_report(generate(2).write(tmp_path / "f.jsonl"), plain_store)
    finally:
        os.close(writer)

    assert not left.exists()
    assert fresh.exists() and held.exists()  # being written: just made, or locked
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [fresh.name, held.name, f"{session.session_id}.jsonl"]
    )


def test_a_json_array_cut_short_is_refused_naming_where_the_file_breaks(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The array is read a window at a time: its parser's error named the line and
    character in the window (the text not yet decoded), not in the file, so a Stop hook's
    chat.json cut at line 8,417 was said to break at "line 4 column 17 (char 102)"."""
    monkeypatch.setattr(claude_code_array, "ARRAY_CHUNK", 4096)  # the window moves on
    whole = generate(11, era="old", array=True).write(tmp_path / "whole.json").read_text()
    cut_at = len(whole) * 2 // 3
    text = whole[:cut_at]
    path = tmp_path / "chat.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as parsed:
        json.loads(text)
    exc = parsed.value
    where = f"line {exc.lineno} column {exc.colno} (char {exc.pos})"
    assert exc.lineno > 100  # far past the first window

    with pytest.raises(InvalidParams) as refused:
        import_with_report(path, plain_store)

    assert str(refused.value) == f"chat.json is not valid JSON: {exc.msg}: {where}"
    assert left_in(plain_store) == []
