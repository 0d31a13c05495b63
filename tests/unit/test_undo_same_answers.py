"""An undo's check and commit give the answers the walk of every summary in force gave
before it was made near-linear, and the bookkeeping of an undo before it skipped the work
that finds nothing (`undo_reference`, kept for this comparison only): the same
view, the same refusals in the same words, the same placements and the same bookkeeping of
the boundaries left in force, for every boundary in force as the target: on walks of
compactions of every direction, microcompactions, pins, rewinds and undos; on imported
Claude Code files; on a long chain of summaries; and on malformed files whose summaries
name each other, or messages that are not there."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conversations import char_count, reload
from test_compaction_properties import shared_estimator
from test_compaction_walk import KINDS, Walk
from undo_reference import (
    ReferenceSummarized,
    reference_broken_ahead,
    reference_put_back,
    reference_put_back_in,
    reference_reached,
    reference_rewinding,
    reference_shared_texts,
)

from baton.core.conversation import (
    undo,
    undo_ahead,
    undo_check,
    undo_held,
    undo_order,
    undo_summarized,
    unrewind,
)
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message, MessageInput, TextBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.summary_text import shared_texts
from baton.core.conversation.undo import undo_compaction
from baton.core.conversation.undo_check import check_placed
from baton.core.errors import BatonError
from baton.core.importers.claude_code import import_claude_code
from baton_testkit.claude_code_gen import generate

Answer = Any


@contextlib.contextmanager
def _reference(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with monkeypatch.context() as patched:
        patched.setattr(undo, "Summarized", ReferenceSummarized)
        patched.setattr(unrewind, "Summarized", ReferenceSummarized)
        patched.setattr(undo, "_put_back_in", reference_put_back_in)
        patched.setattr(undo, "_rewinding", reference_rewinding)
        patched.setattr(undo_ahead, "shared_texts", reference_shared_texts)
        for module in (undo_summarized, undo_held, unrewind, undo_ahead, undo_order):
            patched.setattr(module, "reached", reference_reached)
        for module in (undo, undo_order):
            patched.setattr(module, "put_back", reference_put_back)
        patched.setattr(undo_check, "broken_ahead", reference_broken_ahead)
        yield


def _raised(exc: Exception) -> Answer:
    return ("raised", type(exc).__name__, str(exc))


def _commit(session: Session, target: str, after: Any = None, placed: Any = None) -> Answer:
    """What the undo's record does to a fresh reading of `session` (as the commit does to
    the session: its own boundaries brought up to date), given the check's work or not."""
    fresh = reload(session)
    others = [fresh.boundaries[b] for b in fresh.active if b != target]
    boundary, every = fresh.boundaries[target], fresh.boundaries.values()
    try:
        view = undo_compaction(fresh.view, boundary, others, fresh.arrival(), every, after, placed)
    except Exception as exc:  # a malformed file's: the same either way
        return _raised(exc)
    return view, [(o.id, o.stands_for, o.summarized_ids, o.view_after) for o in others]


def _answers(session: Session, target: str) -> Answer:
    """The check of undoing `target` (refused: why) and, for a compaction, its commit."""
    fresh = reload(session)
    try:
        after, placed = check_placed(fresh, target)
    except BatonError as exc:
        return ("refused", exc.code, exc.message)
    except Exception as exc:
        return _raised(exc)
    if placed is None:
        return after
    others = [fresh.boundaries[b] for b in fresh.active if b != target]
    boundary, every = fresh.boundaries[target], fresh.boundaries.values()
    try:  # the commit with the check's work, on the session it checked
        view = undo_compaction(fresh.view, boundary, others, fresh.arrival(), every, after, placed)
        kept: Answer = view, [(o.id, o.stands_for, o.summarized_ids, o.view_after) for o in others]
    except Exception as exc:
        kept = _raised(exc)
    return after, placed[1:], kept, _commit(session, target)


def _same_for_every_target(session: Session, monkeypatch: pytest.MonkeyPatch) -> int:
    """Compare every boundary in force as the target; how many were compared."""
    for target in session.active:
        now = _answers(session, target)
        with _reference(monkeypatch):
            before = _answers(session, target)
        assert now == before, (target, session.active)
    return len(session.active)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path / "data", shared_estimator().count_message)
    yield sessions
    sessions.close()


@pytest.mark.parametrize("seed", range(10))
def test_walks_of_compactions_rewinds_and_undos_give_the_same_answers(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    session = store.create()
    walk = Walk(session, 1000 + seed)
    for _ in range(4):
        walk.turn()
    compared = 0
    for n in range(50):
        with contextlib.suppress(BatonError):
            walk.step(walk.rng.choice(KINDS))
        if n % 5 == 4:
            compared += _same_for_every_target(session, monkeypatch)
    assert compared > 0


def test_a_long_chain_of_summaries_with_pins_gives_the_same_answers(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each summary summarizes the one before (some messages pinned beside it, unpinned
    later), as a long imported session's do."""
    session = store.create()
    walk = Walk(session, 7)
    for _ in range(4):
        walk.turn()
    for _ in range(30):
        for kind in ("turn", "turn", "pin", "compact"):
            with contextlib.suppress(BatonError):
                walk.step(kind)
    assert len(session.active) >= 20
    _same_for_every_target(session, monkeypatch)


CHAIN = ["turn", "turn", "pin", "compact", "compact", "microcompact", "rewind", "undo"]


def _random_chain(session: Session, seed: int) -> None:
    """Summaries holding each other, with pins, microcompactions, rewinds and undos."""
    walk = Walk(session, 500 + seed)
    for _ in range(4):
        walk.turn()
    for _ in range(90):
        with contextlib.suppress(BatonError):
            walk.step(walk.rng.choice(CHAIN))


@pytest.mark.parametrize("seed", range(8))
def test_long_random_chains_give_the_same_answers(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """The undos a check works out on a copy, one after another, read each text once
    (`shared_texts`) where the reference reads them afresh at each."""
    session = store.create()
    _random_chain(session, seed)
    assert len(session.active) >= 8
    _same_for_every_target(session, monkeypatch)


def test_random_chains_share_their_texts(store: SessionStore) -> None:
    """The chains above are read with shared texts (the comparison is not one of the
    reference with itself), and most malformed files are not (each undo reads theirs
    afresh)."""
    shared = []
    for seed in range(8):
        session = store.create()
        _random_chain(session, seed)
        shared.append(shared_texts(session.boundaries.values()) is not None)
    assert sum(shared) >= 6, shared
    looped = []
    for seed in range(40):
        session = store.create()
        _malformed(session, random.Random(seed))
        looped.append(shared_texts(session.boundaries.values()) is None)
    assert sum(looped) >= 20, looped


@pytest.mark.parametrize("seed", range(6))
def test_imported_claude_code_files_give_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    path = generate(seed, era="newest", compactions=3, turns=12).write(tmp_path / "cc.jsonl")
    sessions = SessionStore(tmp_path / "data", char_count)
    try:
        session = import_claude_code(path, sessions)
        assert session.active
        _same_for_every_target(session, monkeypatch)
    finally:
        sessions.close()


def _malformed(session: Session, rng: random.Random) -> None:
    """Turns, then boundaries whose summaries name messages at random: each other's
    summaries (one made later too, so some name each other), messages never written, pinned
    ones beside them; with rewinds and undos among them."""
    session.append(
        [
            MessageInput(id=f"{role[0]}{n}", role=role, content=f"{role} {n}")
            for n in range(6)
            for role in ("user", "assistant")
        ]
    )
    summaries = [f"S{n}" for n in range(6)]
    ghosts = ["gone0", "gone1"]
    for n, sid in enumerate(summaries):
        view = list(session.view)
        pool = [*view, *summaries, *ghosts]
        span = rng.sample(pool, rng.randint(1, 5))
        beside = [mid for mid in rng.sample(view, min(len(view), 2)) if rng.random() < 0.5]
        extra = Message(id=f"F{n}", role="user", kind="attachment", content=[TextBlock(text="f")])
        new = [Message(id=sid, role="user", kind="summary", content=[TextBlock(text=sid)])]
        stands_for = {sid: [*span, *beside]}
        if rng.random() < 0.4:
            new.append(extra)
            stands_for[extra.id] = rng.sample(pool, rng.randint(0, 2))
        kept = [mid for mid in view if mid not in span]
        session.commit_boundary(
            Boundary(
                direction=rng.choice(["all", "range", "up_to", "from", "microcompact"]),
                summary_id=sid,
                new_messages=new,
                stands_for=stands_for,
                summarized_ids=span if rng.random() < 0.8 else [],
                kept_ids=kept,
                view_before=view,
                view_after=[*[m.id for m in new], *kept],
            )
        )
        if rng.random() < 0.3 and len(session.view) > 2:
            with contextlib.suppress(BatonError):
                session.rewind(rng.choice(session.view[1:]))
        if rng.random() < 0.2 and session.active:
            with contextlib.suppress(BatonError):
                session.uncompact(rng.choice(session.active))


@pytest.mark.parametrize("seed", range(40))
def test_malformed_files_whose_summaries_name_each_other_give_the_same_answers(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    session = store.create()
    _malformed(session, random.Random(seed))
    assert _same_for_every_target(session, monkeypatch) > 0


def _walk_in(summarized: Any, ids: list[str], view: list[str]) -> list[Answer]:
    """Every question a check asks of the summaries in force, in one order."""
    out: list[Answer] = [sorted(summarized.elsewhere(view))] if view else []
    for mid in ids:
        out.append(
            (
                sorted(summarized.covered(mid)),
                sorted(summarized.of(mid)),
                summarized.came(mid),
                summarized.summary(mid),
                summarized.last_came(mid),
                summarized.stands_for_any(mid, ids[:3]),
            )
        )
    return out


@pytest.mark.parametrize("seed", range(200))
def test_summaries_that_name_each_other_are_read_the_same_in_any_order(seed: int) -> None:
    """Cycles through summaries, copies and attachments, undone compactions among them:
    what each covers depends on which was asked first, and so it does still."""
    rng = random.Random(seed)
    pool = [f"m{n}" for n in range(5)] + [f"x{n}" for n in range(8)]
    boundaries = []
    for _ in range(4):
        mine = rng.sample([f"x{k}" for k in range(8)], rng.randint(1, 3))
        stands_for = {mid: rng.sample(pool, rng.randint(0, 4)) for mid in mine}
        boundaries.append(
            Boundary(
                direction=rng.choice(["all", "range", "microcompact"]),
                summary_id=mine[0] if rng.random() < 0.8 else None,
                new_messages=[Message(id=mid, role="user", content=[]) for mid in mine],
                stands_for=stands_for,
                summarized_ids=rng.sample(pool, rng.randint(0, 4)),
            )
        )
    others = [b for b in boundaries if rng.random() < 0.7]
    order = {mid: rng.randint(0, 20) for mid in pool if rng.random() < 0.8}
    ids = rng.sample(pool, len(pool))
    view = rng.sample(pool, rng.randint(0, 6))
    now = undo_summarized.Summarized(boundaries, others, order)
    before = ReferenceSummarized(boundaries, others, order)
    assert _walk_in(now, ids, view) == _walk_in(before, ids, view)
