"""An import's new session is replayed from the events it wrote, not read from its file
again, and holds exactly what a fresh read of that file gives."""

from __future__ import annotations

import errno
import gc
import hashlib
import json
import os
import sys
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest
from conversations import char_count
from pydantic import BaseModel

from baton.core.conversation import transcript
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import Transcript
from baton.core.errors import StorageError
from baton.core.importers.claude_code import import_session, import_with_report
from baton_testkit.claude_code_gen import CASES, case, generate
from corpus_names import CORPUS_FILES

# what is not the session's state: its file's handle, its counter, a cache key
NOT_STATE = {"transcript", "count", "revision"}
HASH = type(hashlib.blake2b())


def plain(value: Any) -> Any:
    """`value` as plain data, every object's fields (a model's extras too) and every dict's
    order kept. Not which of a model's fields were given when it was made (a read gives
    those its line names, every field but the None ones): pydantic's equality leaves them
    out, and nothing reads them (no dump leaves out the fields not given)."""
    if isinstance(value, BaseModel):
        fields_of = [(name, plain(item)) for name, item in value.__dict__.items()]
        return (type(value).__name__, fields_of, plain(value.__pydantic_extra__))
    if isinstance(value, dict):
        return [(key, plain(item)) for key, item in value.items()]
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, HASH):
        return value.digest()
    if is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            [(f.name, plain(getattr(value, f.name))) for f in fields(value)],
        )
    if hasattr(value, "__dict__") and not callable(value):
        state = {k: v for k, v in vars(value).items() if k not in NOT_STATE}
        return (type(value).__name__, plain(state))
    if hasattr(value, "__slots__"):
        slots = [(name, plain(getattr(value, name))) for name in value.__slots__]
        return (type(value).__name__, slots)
    return value


def state(session: Session) -> Any:
    """Everything the session holds, its newest usage's estimate and the view's API rules
    and tool pairs worked out (built on first need)."""
    _ = session.last_usage
    session.unpaired_tool_calls()
    return plain(session)


def fresh_read(session: Session) -> Session:
    session.transcript.close()
    return Session(
        Transcript.open(session.transcript.path), char_count, session_id=session.session_id
    )


def bench_like(path: Path) -> Path:
    """Generated sessions one after another, every record with a session id of its own
    (bench/bench_import.py's file)."""
    with path.open("w", encoding="utf-8") as out:
        for n in range(6):
            era = ("old", "recent", "newest")[n % 3]
            for k, record in enumerate(generate(70 + n, era=era, turns=20).records):
                record["sessionId"] = f"{n:06d}-{k:06d}"
                out.write(json.dumps(record, separators=(",", ":")) + "\n")
    return path


FILES = {name: (lambda p, name=name: case(name).write(p)) for name in CASES}
FILES["several-sessions-one-file"] = bench_like


@pytest.mark.parametrize("name", sorted(FILES))
def test_an_imported_session_holds_what_a_fresh_read_of_its_file_gives(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported_then_read(FILES[name](tmp_path / "file.jsonl"), tmp_path, monkeypatch)


@pytest.mark.parametrize("name", CORPUS_FILES)
def test_an_imported_corpus_file_holds_what_a_fresh_read_of_its_file_gives(
    corpus_dir: Path, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported_then_read(corpus_dir / name, tmp_path, monkeypatch)


@pytest.mark.parametrize("name", ["broken-pairs", "newest-several-compactions"])
def test_an_imported_sessions_messages_hold_their_fields_as_a_read_ones_do(
    tmp_path: Path, name: str
) -> None:
    """Each in a dict sharing its keys, its usage too (`share_bookkeeping`): the import makes
    its messages and usages so, repairs too, and writes them without copying their dicts
    into such ones."""
    store = SessionStore(tmp_path / "data", char_count)
    session, report = import_with_report(FILES[name](tmp_path / "file.jsonl"), store)
    assert report.repairs or name != "broken-pairs"

    def sizes(session: Session) -> dict[str, tuple[int, int]]:
        return {
            m.id: (sys.getsizeof(m.__dict__), sys.getsizeof(m.usage and m.usage.__dict__))
            for m in session.messages.values()
        }

    imported = sizes(session)
    assert any(m.usage for m in session.messages.values())
    assert imported == sizes(fresh_read(session))
    store.close()


def imported_then_read(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SessionStore(tmp_path / "data", char_count)
    read: list[Path] = []
    real = transcript.LinePass

    def reading(file: Path, *args: Any) -> Any:
        read.append(file)
        return real(file, *args)

    monkeypatch.setattr(transcript, "LinePass", reading)
    session, report = import_with_report(path, store)
    assert read == []  # the new session's file is not read again
    assert report.messages and not session.damage.any and not session.read_only
    assert session.transcript.path == store.path_for(session.session_id)
    imported = state(session)
    assert imported == state(fresh_read(session))
    store.close()


def test_an_imported_session_is_written_to_as_one_read_from_its_file(tmp_path: Path) -> None:
    path = case("newest-several-compactions").write(tmp_path / "file.jsonl")
    store = SessionStore(tmp_path / "data", char_count)
    session, _ = import_with_report(path, store)
    assert store.get(session.session_id) is session
    session.append([MessageInput(role="user", content="and then?")])
    after = state(session)
    assert after == state(fresh_read(session))
    store.close()


def test_no_collection_walks_what_an_import_made_before_it_is_frozen(tmp_path: Path) -> None:
    """What the import made and the session keeps is frozen out of the collector's walks
    (`loading`) before the collector is back on: else the first allocation after would
    run a collection over all of it (0.26 s for a 100 MB file)."""
    path = case("newest-several-compactions").write(tmp_path / "file.jsonl")
    store = SessionStore(tmp_path / "data", char_count)
    started: list[int] = []

    def noted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    assert gc.isenabled()
    gc.collect()
    gc.callbacks.append(noted)
    try:
        session, _ = import_session(path, store)
    finally:
        gc.callbacks.remove(noted)
    assert started == []
    assert gc.isenabled()
    walked = {id(o) for o in gc.get_objects()}
    assert not any(id(m) in walked for m in session.messages.values())
    session.transcript.close()


def test_an_imported_session_is_in_place_on_disk_once_the_import_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file gets its session name by a rename: the sessions folder is synced after it,
    as after a session's creation, before the import answers; else a crash of the machine
    could bring back the file under its staged name, which a later import removes as one a
    killed import left."""
    path = case("newest-several-compactions").write(tmp_path / "file.jsonl")
    store = SessionStore(tmp_path / "data", char_count)
    done: list[str] = []
    real_rename, real_fsync = os.rename, os.fsync

    def rename(source: Any, target: Any) -> None:
        real_rename(source, target)
        done.append(f"rename to {Path(target).name}")

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if Path(os.readlink(f"/proc/self/fd/{fd}")) == store.sessions_dir:
            done.append("sessions folder synced")

    monkeypatch.setattr(os, "rename", rename)
    monkeypatch.setattr(os, "fsync", fsync)
    session, _ = import_with_report(path, store)
    named = f"rename to {session.session_id}.jsonl"
    assert named in done and "sessions folder synced" in done[done.index(named) :]
    store.close()


def test_an_import_whose_file_cannot_be_synced_in_place_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = case("newest-several-compactions").write(tmp_path / "file.jsonl")
    store = SessionStore(tmp_path / "data", char_count)
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if Path(os.readlink(f"/proc/self/fd/{fd}")) == store.sessions_dir and any(
            store.sessions_dir.glob("s_*.jsonl")
        ):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(StorageError, match=r"could not put in place .*: Input/output error"):
        import_with_report(path, store)
    assert list(store.sessions_dir.iterdir()) == []
    store.close()
