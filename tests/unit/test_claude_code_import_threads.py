"""The import counts a batch on threads while it reads the next: the session it makes is
the one counting each message in turn, in one batch, makes (the same events, the same
counts, the same usage), on every generated shape and on a file of many session ids; and
a failure on the writer's thread fails the import and leaves nothing behind."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.messages import Message
from baton.core.conversation.store import SessionStore
from baton.core.importers import claude_code, claude_code_write
from baton.core.importers.claude_code import import_with_report
from baton.core.settings import Settings
from baton.core.usage.budget import compute_usage
from baton.core.usage.estimator import Encoder, Estimator
from baton_testkit.claude_code_gen import CASES, case, generate


def many_sessions_file(path: Path) -> Path:
    """Generated sessions of every era one after the other, every record with a session id
    of its own (as the bench's import file)."""
    with path.open("w", encoding="utf-8") as out:
        for n in range(6):
            era = ("old", "recent", "newest")[n % 3]
            for k, record in enumerate(generate(500 + n, era=era, turns=12).records):
                record["sessionId"] = f"{n:06d}-{k:06d}"
                out.write(json.dumps(record) + "\n")
    return path


def files(folder: Path) -> list[Path]:
    folder.mkdir()
    made = [case(name).write(folder / f"{name}.jsonl") for name in CASES]
    made += [generate(seed, repairs=True).write(folder / f"seed-{seed}.jsonl") for seed in (3, 7)]
    return [*made, many_sessions_file(folder / "many.jsonl")]


def imported(path: Path, data: Path, cl100k: Encoder) -> dict[str, Any]:
    """The transcript's events (the ids made at random, session's and compactions', in the
    order they first appear), the loaded messages, the usage and the report."""
    estimator = Estimator(encoder=cl100k)
    store = SessionStore(data, estimator.count_message)
    try:
        session, report = import_with_report(path, store)
        text = session.transcript.path.read_text(encoding="utf-8")
        usage = compute_usage(session, Settings(), estimator).model_dump(mode="json")
        recount = Estimator(encoder=cl100k)  # a fresh cache: every message counted again
        fresh = {m.id: recount.count_message(m) for m in session.messages.values()}
        stored = {m.id: m.tokens for m in session.messages.values()}
        messages = [m.wire() for m in session.messages.values()]
    finally:
        store.close()
    assert stored == fresh  # each message carries its own count
    usage.pop("session_id")
    events = [json.loads(line) for line in text.splitlines()]
    found = json.dumps([events, messages, usage, report.wire()])
    seen: dict[str, str] = {}
    found = re.sub(r"\bs_[0-9a-f]{16}\b", "s_", found)
    found = re.sub(r"\bcmp_[0-9a-f]{16}\b", lambda m: seen.setdefault(m[0], f"c{len(seen)}"), found)
    return dict(zip(("events", "messages", "usage", "report"), json.loads(found), strict=True))


@pytest.mark.parametrize("flush", [10**9, 7], ids=["one-batch", "batches-of-7"])
def test_counting_on_threads_gives_the_session_counting_in_turn_gives(
    tmp_path: Path, cl100k: Encoder, monkeypatch: pytest.MonkeyPatch, flush: int
) -> None:
    made = files(tmp_path / "files")
    monkeypatch.setattr(claude_code, "FLUSH_RECORDS", flush)
    with monkeypatch.context() as in_turn:
        in_turn.setattr(claude_code_write, "COUNT_THREADS", 1)
        expected = {p.name: imported(p, tmp_path / "in-turn", cl100k) for p in made}
    monkeypatch.setattr(claude_code_write, "COUNT_SLICE", 2)  # many slices on the threads
    for path in made:
        got, want = imported(path, tmp_path / "threads", cl100k), expected[path.name]
        for part in ("events", "messages", "usage", "report"):
            assert got[part] == want[part], (path.name, part)
    assert len(made) == len(CASES) + 3


def test_a_failure_on_the_writers_thread_fails_the_import_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = generate(5, turns=20).write(tmp_path / "file.jsonl")
    counted = 0

    def count(message: Message) -> int:
        nonlocal counted
        counted += 1
        if counted == 40:
            raise OSError(28, "No space left on device")
        return 1

    store = SessionStore(tmp_path / "data", count)
    monkeypatch.setattr(claude_code, "FLUSH_RECORDS", 5)
    monkeypatch.setattr(claude_code_write, "COUNT_SLICE", 2)
    with pytest.raises(OSError, match="No space left"):
        import_with_report(path, store)
    assert counted >= 40
    assert sorted(p.name for p in store.sessions_dir.iterdir()) == []
    store.close()
