"""Sequences of sends, compactions (every direction), rewinds, pins and undos on one session,
drawn at random: after every step the view keeps the API's rules, a fresh read of the
transcript gives the same view and the same compactions in force, and nothing but a
domain error escapes; undoing everything in the order the refusals ask gives back every
message, unless the turns sent since cannot follow the ones a rewind took out (a documented
refusal)."""

from __future__ import annotations

import asyncio
import tempfile
from contextlib import suppress
from pathlib import Path

from conversations import Convo, reload
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compaction_properties import request_for, shared_estimator, small_window

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.store import SessionStore
from baton.core.errors import BatonError

STEPS = st.lists(
    st.tuples(
        st.sampled_from(["send", "send", "compact", "rewind", "pin", "undo", "reopen"]),
        st.sampled_from(["all", "up_to", "from", "range"]),
        st.integers(0, 10_000),
        st.integers(0, 10_000),
    ),
    min_size=4,
    max_size=22,
)
CANNOT_FOLLOW = "cannot follow the ones it took out"  # the documented dead end of an undo


class Run:
    def __init__(self, root: Path) -> None:
        estimator = shared_estimator()
        self.store = SessionStore(root, estimator.count_message)
        self.session = self.store.create(title="sequences")
        self.ctx = CompactContext(
            small_window(), estimator, ExtractiveSummarizer(estimator.count_text)
        )
        self.turns = 0
        self.convo = Convo(tokens=0)

    def send(self, tools: bool) -> None:
        c, before = self.convo, len(self.convo.messages)  # one Convo: ids never repeat
        c.user(f"prompt {self.turns}: fix src/mod{self.turns}.py " + "detail " * 30)
        if tools:
            c.tools("Read", inputs=[{"file_path": f"/src/f{self.turns}.py"}])
        c.reply(f"answer {self.turns} " + "words " * 40)
        self.turns += 1
        self.session.append(c.messages[before:])

    async def step(self, kind: str, direction: str, a: int, b: int) -> None:
        session, view = self.session, list(self.session.view)
        if kind == "send" or not view:
            self.send(tools=a % 2 == 0)
        elif kind == "compact":
            await compact(session, request_for(view, (direction, a, b)), self.ctx)
        elif kind == "rewind":
            session.rewind(view[a % len(view)])
        elif kind == "pin":
            session.set_pinned(view[a % len(view)], b % 3 != 0)
        elif kind == "undo" and session.active:
            session.uncompact(session.active[a % len(session.active)])
        elif kind == "reopen":
            self.reopen()

    def reopen(self) -> None:
        sid = self.session.session_id
        self.store.close()
        self.session = self.store.get(sid)

    def check(self) -> None:
        session = self.session
        assert invariant_violations(session.view_messages()) == []
        fresh = reload(session)
        assert fresh.view == session.view and fresh.active == session.active

    def undo_all(self) -> bool:
        """Undo until nothing is in force, each time the first undo not refused; False when
        every one left is refused."""
        while self.session.active:
            for boundary_id in reversed(self.session.active):
                try:
                    self.session.uncompact(boundary_id)
                    break
                except BatonError:
                    continue
            else:
                return False
            self.check()
        return True


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_any_sequence_keeps_the_view_valid_and_read_back_alike(
    steps: list[tuple[str, str, int, int]],
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        run = Run(Path(scratch))
        try:
            for step in steps:
                with suppress(BatonError):  # refused, and said why: nothing changed
                    asyncio.run(run.step(*step))
                run.check()
            every = [mid for mid, m in run.session.messages.items() if m.kind == "message"]
            if run.undo_all():
                assert set(run.session.view) == set(every)
            else:
                last = run.session.active[-1]
                try:
                    run.session.uncompact(last)
                except BatonError as refusal:
                    assert CANNOT_FOLLOW in refusal.message or "first" in refusal.message
        finally:
            run.store.close()
