"""Seeded walks over a session: turns with tool calls, compactions of every direction on
any messages, microcompactions, pins and unpins, rewinds (to a prompt, pinned beside a
summary or not) and undos in any order. After every step the view keeps the API's rules,
no message stands beside a summary that summarized it, and a fresh read of the transcript
gives the same view; at the end, undoing what is in force, latest first, is never refused
and gives back every message in the order it came."""

from __future__ import annotations

import asyncio
import contextlib
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conversations import reload
from test_compaction_properties import shared_estimator, small_window

from baton.core.compaction.automatic.microcompact import microcompact
from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import (
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import BatonError
from baton.core.settings import MicrocompactSettings

STEPS = 80
KINDS = ["turn", "turn", "compact", "compact", "microcompact", "pin", "rewind", "undo", "undo"]
SEEDS = 32


class Walk:
    def __init__(self, session: Session, seed: int) -> None:
        self.session = session
        self.rng = random.Random(seed)
        self.turns = 0
        self.clock = datetime.now(UTC)

    def turn(self) -> None:
        k, rng = self.turns, self.rng
        self.turns += 1
        words = rng.randint(5, 40)
        batch: list[MessageInput | Message] = [
            MessageInput(id=f"p{k}", role="user", content=f"prompt {k} " * words)
        ]
        for t in range(rng.choice([0, 0, 1, 2])):
            call = ToolUseBlock(id=f"t{k}_{t}", name="Read", input={"file_path": f"/f{k}.py"})
            batch.append(Message(id=f"u{k}_{t}", role="assistant", content=[call]))
            done = ToolResultBlock(tool_use_id=call.id, content="x = 1\n" * words)
            batch.append(MessageInput(id=f"r{k}_{t}", role="user", content=[done]))
        batch.append(Message(id=f"a{k}", role="assistant", content=[TextBlock(text="ok " * words)]))
        self.session.append(batch)

    def compact(self) -> None:
        view, rng = self.session.view, self.rng
        first, last = sorted(rng.sample(range(len(view)), 2)) if len(view) > 2 else (0, 0)
        request = rng.choice(
            [
                CompactRequest("all"),
                CompactRequest("up_to", pivot_message_id=view[last]),
                CompactRequest("from", pivot_message_id=view[first]),
                CompactRequest("range", pivot_message_id=view[first], end_message_id=view[last]),
            ]
        )
        summarizer = ExtractiveSummarizer(shared_estimator().count_text)
        asyncio.run(
            compact(
                self.session,
                request,
                CompactContext(small_window(), shared_estimator(), summarizer),
            )
        )

    def step(self, kind: str) -> None:
        session, rng = self.session, self.rng
        if kind == "turn":
            self.turn()
        elif kind == "compact":
            self.compact()
        elif kind == "microcompact":
            self.clock += timedelta(hours=2)
            microcompact(
                session, MicrocompactSettings(keep_recent=rng.choice([0, 1])), now=self.clock
            )
        elif kind == "pin":  # as often an unpin of a pinned one: a summary then takes it
            pinned = [m for m in session.view if session.messages[m].pinned]
            if pinned and rng.random() < 0.5:
                session.set_pinned(rng.choice(pinned), False)
            else:
                session.set_pinned(rng.choice(session.view), True)
        elif kind == "rewind":
            prompts = [m for m in session.view[1:] if m.startswith("p")]
            if prompts:
                session.rewind(rng.choice(prompts))
                self.turn()
        elif kind == "undo" and session.active:
            session.uncompact(rng.choice(session.active))


def _sent_twice(session: Session) -> set[str]:
    """The messages of the view that a summary (or a microcompacted copy) of the view covers
    in its text: a summary covers what it summarized, through the summaries among them,
    whether or not their compaction still stands; a copy covers its original."""
    owner = {m.id: b for b in session.boundaries.values() for m in b.new_messages}
    memo: dict[str, set[str]] = {}

    def covered(mid: str, seen: frozenset[str] = frozenset()) -> set[str]:
        boundary = owner.get(mid)
        if boundary is None:
            return {mid}
        if mid in seen:
            return set()
        if mid not in memo:
            base = boundary.summarized_ids if mid == boundary.summary_id else []
            base = base or boundary.stands_for.get(mid, [])
            memo[mid] = set().union(*(covered(one, seen | {mid}) for one in base))
        return memo[mid]

    view = set(session.view)
    return {one for mid in view if mid in owner for one in covered(mid) - {mid}} & view


@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_walk_of_compactions_and_undos_keeps_every_promise(tmp_path: Path, seed: int) -> None:
    store = SessionStore(tmp_path, shared_estimator().count_message)
    session = store.create()
    walk = Walk(session, seed)
    for _ in range(4):
        walk.turn()
    for n in range(STEPS):
        kind = walk.rng.choice(KINDS)
        with contextlib.suppress(BatonError):  # a refusal changes nothing: checked below
            walk.step(kind)
        where = f"step {n} ({kind}): {session.view}"
        assert invariant_violations(session.view_messages()) == [], where
        assert _sent_twice(session) == set(), where
        assert len(set(session.view)) == len(session.view), where
        assert reload(session).view == session.view, where
    while session.active:
        session.uncompact(session.active[-1])
    came = [mid for mid in session.messages if session.messages[mid].kind == "message"]
    shown = set(session.view)
    assert session.view == [mid for mid in came if mid in shown]
    assert reload(session).view == session.view
    store.close()
