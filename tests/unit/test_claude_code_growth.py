"""A Claude Code file that changes while or after it is imported: Claude Code appends to it
as the session goes on, so an import notes how much of it it read (`importedSize`, the
bytes up to the end of the last whole line), and a later import of the file says whether
the file went on since."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conversations import char_count
from test_claude_code_formats import record, write

from baton.core.conversation.listing import Summary
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers import claude_code
from baton.core.importers.claude_code import changed_since, import_with_report, imports_of


def lines(records: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


TURNS = [
    record("user", "u1", "read a.py", None),
    record("assistant", "a1", [{"type": "text", "text": "It sets x."}], "u1"),
]
MORE = [
    record("user", "u2", "now make x two", "a1"),
    record("assistant", "a2", [{"type": "text", "text": "Done: x is 2."}], "u2"),
]


@pytest.mark.parametrize("batch", [None, 1])
def test_a_file_appended_to_during_its_import_is_not_changed_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int | None
) -> None:
    """The size was taken as the import began: the turns Claude Code appended while it read
    were imported, yet the file read as 'changed since' the import. A file written in
    batches has its header written before the end is known: the size read follows as a
    `meta` event, which the session read again and the list both take."""
    if batch is not None:
        monkeypatch.setattr(claude_code, "FLUSH_RECORDS", batch)
    path = write(tmp_path / "live.jsonl", TURNS)

    def append_once(done: int, total: int) -> None:
        if path.stat().st_size == total:  # the first record read: Claude Code goes on
            with path.open("ab") as more:
                more.write(lines(MORE))

    store = SessionStore(tmp_path / "data", char_count)
    try:
        session, _ = import_with_report(path, store, progress=append_once)
        assert [m.text() for m in session.view_messages()][-1] == "Done: x is 2."
        assert changed_since(path, imports_of(path, store)) is None
        assert session.imported_size == path.stat().st_size
    finally:
        store.close()
    listed = SessionStore(tmp_path / "data", char_count)  # nothing open: the list's summary
    try:
        (summary,) = imports_of(path, listed)
        assert isinstance(summary, Summary)
        assert changed_since(path, [summary]) is None
        assert listed.get(summary.session_id).imported_size == path.stat().st_size
    finally:
        listed.close()


def test_a_line_cut_short_is_not_counted_as_imported(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """A line Claude Code was still writing is skipped: the size noted ends before it, so
    once the line is whole the file reads as changed since, and another import takes it."""
    path = tmp_path / "torn.jsonl"
    whole = lines(TURNS + MORE[:1])
    last = lines(MORE[1:])
    path.write_bytes(whole + last[:20])

    session, report = import_with_report(path, plain_store)

    assert report.broken_lines == [4]
    with path.open("ab") as rest:
        rest.write(last[20:])
    changed = changed_since(path, imports_of(path, plain_store))
    assert (
        changed == f"the file changed since ({len(whole):,} bytes then, {len(whole + last):,} now)"
    )
    assert session.imported_size == len(whole)
    again, _ = import_with_report(path, plain_store)
    assert [m.text() for m in again.view_messages()][-1] == "Done: x is 2."
    assert changed_since(path, imports_of(path, plain_store)) is None


def test_a_file_ending_in_a_line_cut_short_is_unchanged_until_the_line_is(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """Imported while Claude Code was writing its last line (or left so when it stopped),
    the file read as changed since at once, nothing changed: `baton import` said "the file
    changed since (N bytes then, N+20 now); --again imports it as it is now", and --again
    made another copy of the same turns, which read as changed in the same words. The bytes
    past the size noted are a line the import leaves out as it is now; once Claude Code
    writes more of the file (the line's end, or a line of its own), it has changed."""
    path = tmp_path / "torn.jsonl"
    whole = lines(TURNS + MORE[:1])
    last = lines(MORE[1:])
    path.write_bytes(whole + last[:20])
    import_with_report(path, plain_store)

    assert changed_since(path, imports_of(path, plain_store)) is None
    with path.open("ab") as more:
        more.write(last[20:-10])  # more of it, still without its end: still left out
    assert changed_since(path, imports_of(path, plain_store)) is None
    with path.open("ab") as rest:
        rest.write(last[-10:])
    assert changed_since(path, imports_of(path, plain_store)) == (
        f"the file changed since ({len(whole):,} bytes then, {len(whole + last):,} now)"
    )


def test_a_file_ending_in_a_line_cut_short_changed_before_it_is_said_changed(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """The same file, its bytes before the cut line changed, or the cut line now a whole
    record without its line end (an import reads it): changed since."""
    path = tmp_path / "torn.jsonl"
    whole = lines(TURNS + MORE[:1])
    last = lines(MORE[1:])
    path.write_bytes(whole + last[:20])
    import_with_report(path, plain_store)
    path.write_bytes(whole.replace(b"read a.py", b"read b.py") + last[:20])
    grown = f"the file changed since ({len(whole):,} bytes then, {len(whole) + 20:,} now)"
    assert changed_since(path, imports_of(path, plain_store)) == grown
    path.write_bytes(whole + last.rstrip(b"\n"))
    grown = f"the file changed since ({len(whole):,} bytes then, {len(whole + last) - 1:,} now)"
    assert changed_since(path, imports_of(path, plain_store)) == grown


def test_a_last_line_without_its_line_end_is_read_whole(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """A file whose last record has no line end (a copy saved by hand) is the file as it is,
    not one still being written."""
    path = tmp_path / "no-end.jsonl"
    path.write_bytes(lines(TURNS).rstrip(b"\n"))

    session, report = import_with_report(path, plain_store)

    assert report.broken_lines == []
    assert changed_since(path, imports_of(path, plain_store)) is None
    assert session.imported_size == path.stat().st_size


def test_a_file_cut_short_while_it_is_imported_is_refused(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """A file truncated under the import (replaced by a shorter copy, written again from the
    start) was imported as far as the read had gone, its last piece skipped as a line cut
    short: a session of what the file no longer holds, told as an unreadable line. It is
    refused, saying so, and nothing is written."""
    path = write(tmp_path / "cut.jsonl", TURNS + MORE)
    whole = path.stat().st_size

    def cut_once(done: int, total: int) -> None:
        if path.stat().st_size == whole:
            with path.open("r+b") as cut:
                cut.truncate(whole // 3)

    with pytest.raises(InvalidParams) as refused:
        import_with_report(path, plain_store, progress=cut_once)

    assert str(refused.value) == (
        f"cut.jsonl was cut short while it was imported ({whole:,} bytes read, {whole // 3:,} "
        "now): nothing was imported; import it again"
    )
    assert not plain_store.sessions_dir.exists() or list(plain_store.sessions_dir.iterdir()) == []


def test_a_line_finished_while_it_is_read_is_left_whole_for_the_next_import(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """The read reached the end of the file in the middle of a line Claude Code was writing,
    and went on reading as Claude Code finished it: the line's end read as a line of its
    own, both pieces skipped as unreadable, and the size noted took the line as read, so
    the record was never imported and the file never read as changed since. The read now
    stops at a line cut short, which the next import reads whole."""
    path = tmp_path / "writing.jsonl"
    whole = lines(TURNS + MORE[:1])
    last = lines(MORE[1:])
    path.write_bytes(whole + last[:20])

    def finish_the_line(done: int, total: int) -> None:
        if done == len(whole) + 20:  # the piece read: Claude Code writes the rest
            with path.open("ab") as rest:
                rest.write(last[20:])

    session, report = import_with_report(path, plain_store, progress=finish_the_line)

    assert report.broken_lines == [4]
    changed = changed_since(path, imports_of(path, plain_store))
    assert (
        changed == f"the file changed since ({len(whole):,} bytes then, {len(whole + last):,} now)"
    )
    assert session.imported_size == len(whole)
    again, report = import_with_report(path, plain_store)
    assert [m.text() for m in again.view_messages()][-1] == "Done: x is 2."
    assert report.broken_lines == []


def same_length(records: list[dict[str, Any]]) -> bytes:
    """`records` with their texts changed, not their length: another file of the same size."""
    return other_text(lines(records))


def other_text(data: bytes) -> bytes:
    changed = data.replace(b"It sets x.", b"It sets y.")
    assert changed != data and len(changed) == len(data)
    return changed


@pytest.mark.parametrize(("array", "batch"), [(False, None), (False, 1), (True, None)])
def test_a_file_replaced_by_another_of_the_same_size_changed_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, array: bool, batch: int | None
) -> None:
    """Only the sizes were compared: a file replaced by a different one of exactly the same
    byte length was 'nothing changed'. The import notes a fingerprint of what it read (its
    first and last 64 KB, hashed as it reads), which is compared too: for the session open,
    for the list's summary, in JSONL (whole, or written in batches) or a JSON array."""
    if batch is not None:
        monkeypatch.setattr(claude_code, "FLUSH_RECORDS", batch)
    path = tmp_path / ("replaced.json" if array else "replaced.jsonl")
    first = json.dumps(TURNS + MORE).encode() if array else lines(TURNS + MORE)
    path.write_bytes(first)
    store = SessionStore(tmp_path / "data", char_count)
    try:
        import_with_report(path, store)
        assert changed_since(path, imports_of(path, store)) is None
        path.write_bytes(other_text(first))
        changed = changed_since(path, imports_of(path, store))
    finally:
        store.close()
    size = len(first)
    assert changed == f"the file changed since (other content of the same {size:,} bytes)"
    listed = SessionStore(tmp_path / "data", char_count)  # nothing open: the list's summary
    try:
        assert changed_since(path, imports_of(path, listed)) == changed
        path.write_bytes(first)  # put back: what was imported
        assert changed_since(path, imports_of(path, listed)) is None
    finally:
        listed.close()


def test_a_change_past_the_first_64_kb_is_seen_and_an_unchanged_big_file_is_not(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """A file larger than the two ends the fingerprint reads, its long lines across them:
    the fingerprint taken while reading is that of the file's ends, and a change near the
    end of a file of the same size is seen."""
    words = "x" * 50_000
    many = [record("user", f"u{n}", f"{words} {n}", f"u{n - 1}" if n else None) for n in range(9)]
    path = write(tmp_path / "big.jsonl", many)
    assert path.stat().st_size > 4 * 64 * 1024

    import_with_report(path, plain_store)
    assert changed_since(path, imports_of(path, plain_store)) is None
    data = path.read_bytes()
    end = data[-1000:].replace(b'x 8"', b'x 9"')
    assert end != data[-1000:]
    path.write_bytes(data[:-1000] + end)  # the last prompt's text, near the end
    assert changed_since(path, imports_of(path, plain_store)) is not None


def test_an_import_noted_without_a_fingerprint_is_compared_by_size(tmp_path: Path) -> None:
    """A transcript an earlier version imported notes the size alone: the same size is
    still 'nothing changed', another size still changed."""
    path = write(tmp_path / "old.jsonl", TURNS + MORE)
    store = SessionStore(tmp_path / "data", char_count)
    try:
        session, _ = import_with_report(path, store)
        transcript = session.transcript.path
    finally:
        store.close()
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert "importedFingerprint" in events[0]
    for event in events:
        event.pop("importedFingerprint", None)
    transcript.write_text("".join(json.dumps(e) + "\n" for e in events))
    older = SessionStore(tmp_path / "data", char_count)
    try:
        path.write_bytes(same_length(TURNS + MORE))
        assert changed_since(path, imports_of(path, older)) is None
        write(path, TURNS)
        assert changed_since(path, imports_of(path, older)) is not None
    finally:
        older.close()


def test_a_file_of_the_same_size_that_cannot_be_read_now_is_not_said_changed(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its size known but its bytes unreadable (permissions changed since), nothing is
    known of its content: no "changed since", as when its size cannot be read either."""
    path = write(tmp_path / "locked.jsonl", TURNS + MORE)
    import_with_report(path, plain_store)
    real_open = Path.open

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    assert changed_since(path, imports_of(path, plain_store)) is None
