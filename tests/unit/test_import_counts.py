"""An import counts what may end up in the view; the turns a compaction in the file
summarized are stored without a count and counted when they are shown or brought back,
with every figure as an import that counted everything gives."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conversations import char_count

from baton.core.compaction.represented import (
    FACTS_SHARE,
    THRESHOLD_SHARE,
    span_summary_bound,
    stands_for_tokens,
    summary_bound,
)
from baton.core.compaction.summary.memory import due
from baton.core.compaction.summary.notes import NotesMark
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message, TextBlock
from baton.core.conversation.replaced import replaced_messages
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.turn_framing import TurnFraming
from baton.core.importers.claude_code import import_with_report
from baton.core.importers.claude_code_write import StagedTranscript
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.claude_code_gen import case, generate

SEVERAL = "newest-several-compactions"


class Tally:
    """`char_count`, remembering which messages it was asked to count."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, message: Message) -> int:
        self.asked.append(message.id)
        return char_count(message)


def imported(folder: Path, generated: Any, count: Any, *, eager: bool = False) -> SessionStore:
    """A store holding `generated` imported; `eager`: as an import that counted every
    message it wrote (the reference the figures must match)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = generated.write(folder / "file.jsonl")
    store = SessionStore(folder / "data", count)
    emit = StagedTranscript._emit

    def counting(self: StagedTranscript, entries: list[Any], **_: Any) -> None:
        emit(self, entries, counted=True)  # every message, in the view or not

    with pytest.MonkeyPatch.context() as patch:
        if eager:
            patch.setattr(StagedTranscript, "_emit", counting)
        import_with_report(path, store)
    return store


def both_imports(folder: Path, seed: int) -> tuple[Session, Session]:
    """A seeded file with three compactions imported as it is and as an import that counted
    every message would have it."""
    generated = generate(seed, era="newest", compactions=3, turns=14, repairs=False)
    lazy = only_session(imported(folder / "lazy", generated, char_count))
    return lazy, only_session(imported(folder / "eager", generated, char_count, eager=True))


def only_session(store: SessionStore) -> Session:
    (path,) = store.sessions_dir.glob("*.jsonl")
    return store.get(path.stem)


def message_lines(store: SessionStore) -> Iterator[tuple[int, dict[str, Any]]]:
    """(how many boundary lines come before it, message) for each message line."""
    (path,) = store.sessions_dir.glob("*.jsonl")
    boundaries = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["type"] == "boundary":
            boundaries += 1
        elif event["type"] == "message":
            yield boundaries, event["message"]


def test_an_import_counts_the_final_view_and_not_the_turns_a_compaction_summarized(
    tmp_path: Path,
) -> None:
    store = imported(tmp_path, case(SEVERAL), char_count)
    lines = list(message_lines(store))
    compactions = max(after for after, _ in lines)
    assert compactions == 3
    hidden = [m for after, m in lines if after < compactions]
    final = [m for after, m in lines if after == compactions]
    assert hidden and final
    assert all(m["tokens"] == 0 for m in hidden)
    session = only_session(store)
    for message in session.view_messages():
        assert message.tokens == char_count(message) > 0
    store.close()


def test_a_load_of_an_import_counts_nothing_it_summarized(tmp_path: Path) -> None:
    tally = Tally()
    store = imported(tmp_path, case(SEVERAL), tally)
    store.close()
    tally.asked.clear()
    reopened = SessionStore(tmp_path / "data", tally)
    session = only_session(reopened)
    assert session.last_usage is not None  # its estimate worked out, from the view's counts
    view = set(session.view)
    assert set(tally.asked) <= view
    reopened.close()


def test_an_import_and_its_load_frame_only_the_turns_left_in_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    framed: list[str] = []
    opens = TurnFraming.opens

    def seen(self: TurnFraming, message: Message) -> bool:
        framed.append(message.id)
        return opens(self, message)

    monkeypatch.setattr(TurnFraming, "opens", seen)
    store = imported(tmp_path, case(SEVERAL), char_count)
    session = only_session(store)
    summarized = [mid for mid in session.messages if mid not in session.view]
    assert len(summarized) > 20
    assert framed == session.view  # each turn of its view once, as its opening replays it
    store.close()
    framed.clear()
    reopened = SessionStore(tmp_path / "data", char_count)
    again = only_session(reopened)
    assert framed == again.view
    framed.clear()
    assert again.last_usage is not None and again.tokens_by_kind()
    assert framed == []  # framed before the session was read: nothing when it is
    reopened.close()


@pytest.mark.parametrize("seed", [3, 5, 8])
def test_every_figure_is_that_of_an_import_that_counted_everything(
    tmp_path: Path, seed: int
) -> None:
    lazy, eager = both_imports(tmp_path, seed)
    assert lazy.view == eager.view
    assert lazy.last_usage == eager.last_usage
    assert lazy.tokens_by_kind() == eager.tokens_by_kind()
    assert lazy.tokens_in_view(0, len(lazy.view)) == eager.tokens_in_view(0, len(eager.view))
    assert len(lazy.active) == len(eager.active) == 3
    for lazy_id, eager_id in zip(lazy.active, eager.active, strict=True):
        shown = lazy.with_counts(replaced_messages(lazy, lazy_id))
        assert [m.tokens for m in shown] == [m.tokens for m in replaced_messages(eager, eager_id)]


@pytest.mark.parametrize("seed", [3, 5, 8])
def test_undoing_an_imported_compaction_gives_the_figures_of_an_import_that_counted_everything(
    tmp_path: Path, seed: int
) -> None:
    lazy, eager = both_imports(tmp_path, seed)
    while lazy.active:  # every compaction undone: the summarized turns back in the view
        lazy.uncompact()
        eager.uncompact()
        assert [m.tokens for m in lazy.view_messages()] == [m.tokens for m in eager.view_messages()]
        assert all(m.tokens > 0 for m in lazy.view_messages())
        assert lazy.tokens_by_kind() == eager.tokens_by_kind()
        assert lazy.last_usage == eager.last_usage


def test_notes_fall_due_on_the_summarized_turns_of_an_import_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = only_session(imported(tmp_path, case(SEVERAL), char_count))
    conversation = [m for m in session.messages.values() if m.kind == "message"]
    every = sum(char_count(m) for m in conversation)
    assert every > sum(m.tokens for m in conversation)  # some are stored without a count
    monkeypatch.setattr("baton.core.compaction.summary.memory.FIRST_UPDATE_TOKENS", every)
    assert due(session, NotesMark(), has_notes=False)


def test_an_undone_compaction_of_an_import_is_counted_again_after_a_reload(
    tmp_path: Path,
) -> None:
    store = imported(tmp_path, case(SEVERAL), char_count)
    session = only_session(store)
    session.uncompact()
    back = session.view_messages()
    store.close()
    reopened = SessionStore(tmp_path / "data", char_count)
    again = only_session(reopened)
    assert [m.id for m in again.view_messages()] == [m.id for m in back]
    assert all(m.tokens == char_count(m) > 0 for m in again.view_messages())
    reopened.close()


def test_an_import_that_never_compacts_counts_every_message(tmp_path: Path) -> None:
    store = imported(tmp_path, generate(4, era="newest", compactions=0, turns=10), char_count)
    lines = list(message_lines(store))
    assert lines and all(m["tokens"] > 0 for _, m in lines)
    store.close()


# ---- the staged transcript: what it holds back, and when it counts ------------------------


def said(mid: str) -> Message:
    return Message(id=mid, role="user", content=[TextBlock(text=f"prompt {mid}")])


def compaction(view: list[str], summary_id: str) -> Boundary:
    summary = Message(
        id=summary_id, role="user", kind="summary", content=[TextBlock(text="the summary")]
    )
    summary.tokens = char_count(summary)
    return Boundary(
        trigger="auto",
        summarizer="claude-code",
        pre_tokens=100,
        post_tokens=summary.tokens,
        summary_id=summary_id,
        new_messages=[summary],
        stands_for={summary_id: view},
        summarized_ids=view,
        view_before=view,
        view_after=[summary_id],
    )


def written(staged: StagedTranscript) -> list[tuple[str, int]]:
    """(id, tokens) of the message lines written so far."""
    assert staged.transcript is not None
    lines = staged.staging.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    return [(e["message"]["id"], e["message"]["tokens"]) for e in events if e["type"] == "message"]


def test_held_entries_wait_one_write_and_are_counted_unless_a_compaction_follows(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "data", char_count)
    store.sessions_dir.mkdir(parents=True)
    staged = StagedTranscript(store, char_count)
    header = {"type": "session", "format": 1, "sessionId": staged.session_id, "model": "m"}
    first = [said("a"), said("b")]
    staged.write(first, header)
    assert written(staged) == []  # held: a compaction may follow
    staged.write([said("c"), compaction(["a", "b", "c"], "s1"), said("d")], header)
    assert written(staged) == [("a", 0), ("b", 0), ("c", 0)]  # summarized: no count
    staged.write([said("e")], header)  # no compaction: "d" waited a write, counted now
    assert written(staged)[3:] == [("d", char_count(said("d")))]
    staged.finish("title", "m", 0, "0" * 32)
    session = store.get(staged.session_id)
    assert session.view == ["s1", "d", "e"]
    assert all(m.tokens == char_count(m) for m in session.view_messages())
    store.close()


def test_what_is_held_is_the_tail_of_the_last_batch_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """So no more than two batches are held at once: the one being written and that tail."""
    held: list[int] = []
    write = StagedTranscript.write

    def watching(
        self: StagedTranscript, entries: list[Any], header: dict[str, Any], *view: Any
    ) -> None:
        write(self, entries, header, *view)
        tail = entries[len(entries) - len(self.held) :]
        assert all(a is b for a, b in zip(self.held, tail, strict=True))
        held.append(len(self.held))

    monkeypatch.setattr(StagedTranscript, "write", watching)
    monkeypatch.setattr("baton.core.importers.claude_code.FLUSH_RECORDS", 20)
    imported(tmp_path, generate(4, era="newest", compactions=2, turns=30), char_count)
    assert len(held) > 3 and max(held) > 0


@pytest.mark.parametrize("threshold", [0, 200, 1_000, 5_000, 160_000])
def test_the_summary_bound_counts_what_a_span_stands_for_only_as_far_as_it_can_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    monkeypatch.setattr("baton.core.compaction.represented.SUMMARY_MAX_TOKENS", 0)
    session = only_session(imported(tmp_path, case(SEVERAL), char_count))
    tally = Tally()

    def count(message: Message) -> int:
        return message.tokens or tally(message)

    whole = stands_for_tokens(session, session.view_messages(), count)
    everything = len(tally.asked)
    assert everything > 20  # the summary stands for every turn the file's compactions summarized
    tally.asked.clear()
    bound = span_summary_bound(session, session.view_messages(), count, threshold)
    assert bound == summary_bound(whole, threshold)
    if threshold > 0 and int(whole * FACTS_SHARE) > threshold // THRESHOLD_SHARE + 50:
        assert len(tally.asked) < everything  # stopped once the bound could not move
    else:
        assert len(tally.asked) == everything


async def test_an_undo_of_an_imported_compaction_counts_what_it_brings_back_off_the_loop(
    tmp_path: Path, estimator: Estimator
) -> None:
    service = BatonService(Settings(data_dir=str(tmp_path / "data")), estimator=estimator)
    source = case(SEVERAL).write(tmp_path / "file.jsonl")
    session = (await service.import_file(str(source))).session
    threads: list[str] = []
    count = session.count

    def watched(message: Message) -> int:
        threads.append(threading.current_thread().name)
        return count(message)

    session.count = watched
    boundary = session.boundaries[session.active[-1]]
    back = [session.messages[mid] for mid in boundary.summarized_ids]
    assert any(not m.tokens for m in back)
    await service.compaction.undo(session.session_id)
    assert threads and threading.main_thread().name not in threads
    assert all(m.tokens == estimator.count_message(m) for m in back)
    assert {m.id for m in back} <= set(session.view)
    await service.close()
