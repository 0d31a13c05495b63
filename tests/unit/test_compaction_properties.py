"""Properties of compaction over generated conversations: valid views, exact undo, crash safety.

Conversations mix parallel tool calls split into records that share an API message id
(results interleaved or after), thinking records, images in prompts and tool results,
error results, pins, a tool call still waiting for its result, and earlier compactions.
"""

from __future__ import annotations

import asyncio
import functools
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from conversations import Convo
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from baton.core.compaction.engine import CompactContext, compact, layout_view
from baton.core.compaction.plan import DIRECTIONS, Plan, plan_compaction
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message, text_message
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import Transcript
from baton.core.errors import NothingToCompact
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator, load_cl100k
from baton.core.workspace.editor_files import EditorFiles, path_to_uri

PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TOOLS = ["Read", "Bash", "Grep", "Edit", "WebFetch"]


@functools.cache
def shared_estimator() -> Estimator:
    return Estimator(encoder=load_cl100k())


@st.composite
def conversations(draw: st.DrawFn) -> Convo:
    c = Convo(tokens=0)
    turns = draw(st.integers(1, 5))
    for turn in range(turns):
        c.user(f"prompt {turn}: fix src/mod{turn}.py", image=draw(st.booleans()))
        for _ in range(draw(st.integers(0, 3))):
            names = draw(st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3))
            c.tools(
                *names,
                interleaved=draw(st.booleans()),
                errors=tuple(draw(st.sets(st.integers(0, len(names) - 1), max_size=2))),
                text=draw(st.sampled_from([None, "let me look"])),
                thinking=draw(st.sampled_from([None, "hmm, thinking"])),
                image_results=draw(st.booleans()),
                inputs=[{"file_path": f"/src/f{turn}_{i}.py"} for i in range(len(names))],
            )
        if turn == turns - 1 and draw(st.booleans()):
            c.tools(draw(st.sampled_from(TOOLS)), results=False)  # still waiting
        else:
            c.reply(f"answer {turn}", thinking=draw(st.sampled_from([None, "reasoning"])))
    for index in draw(st.sets(st.integers(0, len(c.messages) - 1), max_size=2)):
        c.messages[index].pinned = True
    return c


# An action picks a direction and two positions; positions wrap around the view's length.
actions = st.tuples(st.sampled_from(DIRECTIONS), st.integers(0, 10_000), st.integers(0, 10_000))


def request_for(view: list[str], action: tuple[str, int, int]) -> CompactRequest:
    direction, a, b = action
    if direction == "all":
        return CompactRequest(direction="all")
    first, second = sorted((a % len(view), b % len(view)))
    if direction == "range":
        return CompactRequest("range", pivot_message_id=view[first], end_message_id=view[second])
    return CompactRequest(direction, pivot_message_id=view[a % len(view)])


def small_window() -> Settings:
    chosen = Settings()
    chosen.keep_window = KeepWindowSettings(min_tokens=60, min_text_messages=2, max_tokens=400)
    return chosen


@contextmanager
def session_with(convo: Convo) -> Iterator[tuple[Session, CompactContext]]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / "open.py").write_text("x = 1\n")
        files = EditorFiles()
        files.opened(path_to_uri(workspace / "open.py"), "x = 1\n")
        estimator = shared_estimator()
        store = SessionStore(root / "data", estimator.count_message)
        try:
            session = store.create(title="property")
            session.append(convo.messages)
            ctx = CompactContext(
                settings=small_window(),
                estimator=estimator,
                summarizer=ExtractiveSummarizer(estimator.count_text),
                editor_files=files,
                workspace_folders=[workspace],
            )
            yield session, ctx
        finally:
            store.close()


def run(session: Session, request: CompactRequest, ctx: CompactContext) -> CompactResult | None:
    try:
        return asyncio.run(compact(session, request, ctx))
    except NothingToCompact:
        return None


def load(path: Path, count: Any) -> Session:
    transcript = Transcript.open(path, writable=False)
    try:
        return Session(transcript, count)
    finally:
        transcript.close()


def dumps(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.wire() for m in messages]


def in_order(ids: list[str], order: list[str]) -> bool:
    return ids == sorted(ids, key=order.index)


def apply_history(session: Session, ctx: CompactContext, convo: Convo, history: list[Any]) -> None:
    """Earlier compactions, each followed by one more exchange."""
    for number, action in enumerate(history):
        run(session, request_for(session.view, action), ctx)
        if not invariant_violations(session.view_messages()):
            extra = [convo.user(f"later prompt {number}"), convo.reply(f"later answer {number}")]
            session.append(extra)


# ---- the planner, exhaustively ----------------------------------------------------------------


def check_plan(plan: Plan, view: list[Message]) -> None:
    ids = [m.id for m in view]
    assert not set(plan.summarize) & set(plan.kept)
    assert set(plan.summarize) | set(plan.kept) == set(ids)
    assert in_order(plan.summarize, ids) and in_order(plan.kept, ids)
    assert plan.span == [i for i in ids if i in {*plan.summarize, *plan.pinned}]
    summary = text_message("user", "summary", kind="summary")
    attachment = text_message("user", "Restored file: a.py", kind="attachment")
    laid = layout_view(plan, summary, [attachment], {m.id: m for m in view})
    assert invariant_violations(laid) == []
    assert [m.id for m in laid if m.id in set(ids)] == plan.kept


@PROPERTY_SETTINGS
@given(convo=conversations())
def test_every_direction_and_every_pivot_plans_a_valid_view(convo: Convo) -> None:
    view = convo.messages
    assert invariant_violations(view) == []
    window = small_window().keep_window
    count = shared_estimator().count_message
    ids = [m.id for m in view]
    requests: list[tuple[str, str | None, str | None]] = [("all", None, None)]
    for index, pivot in enumerate(ids):
        requests += [("up_to", pivot, None), ("from", pivot, None)]
        requests += [("range", pivot, end) for end in ids[index : index + 4]]
    for direction, pivot, end in requests:
        try:
            plan = plan_compaction(view, direction, pivot, end, keep_window=window, count=count)
        except NothingToCompact:
            continue
        check_plan(plan, view)
        for pinned in (m for m in view if m.pinned):
            assert pinned.id not in plan.summarize


# ---- the engine -------------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(convo=conversations(), history=st.lists(actions, max_size=2), action=actions)
def test_compaction_keeps_the_view_valid_partitions_it_and_undoes_exactly(
    convo: Convo, history: list[Any], action: tuple[str, int, int]
) -> None:
    with session_with(convo) as (session, ctx):
        apply_history(session, ctx, convo, history)
        before = session.view_messages()
        assert invariant_violations(before) == []
        old_ids = list(session.view)
        old_bytes = session.transcript.path.read_bytes()
        result = run(session, request_for(old_ids, action), ctx)
        event(f"{action[0]}: {'nothing to compact' if result is None else 'compacted'}")
        if result is None:
            assert session.transcript.path.read_bytes() == old_bytes
            assert session.view == old_ids
            return
        after = session.view_messages()
        assert invariant_violations(after) == []
        summarized, kept = result.summarized_message_ids, result.kept_message_ids
        assert not set(summarized) & set(kept) and set(summarized) | set(kept) == set(old_ids)
        assert in_order(summarized, old_ids) and in_order(kept, old_ids)
        assert [mid for mid in session.view if mid in set(old_ids)] == kept
        assert all(not session.messages[mid].pinned for mid in summarized)
        assert dumps(load(session.transcript.path, session.count).view_messages()) == dumps(after)
        session.uncompact(result.boundary_id)
        assert dumps(session.view_messages()) == dumps(before)


@pytest.mark.parametrize(
    ("first", "later"),
    [
        (CompactRequest("from", pivot_message_id="m2"), CompactRequest("all")),
        (
            CompactRequest("range", pivot_message_id="m2", end_message_id="m3"),
            CompactRequest("from", pivot_message_id="m2"),
        ),
    ],
    ids=["from-then-all", "range-then-from"],
)
def test_undoing_a_summary_keeps_a_message_pinned_beside_an_older_one_after_it(
    first: CompactRequest, later: CompactRequest
) -> None:
    """A compaction from a pinned reply lays the reply out after its summary. Undoing a
    later compaction of both, the reply pinned beside it too, puts it back there: not
    before the older summary because it came before the turns that one summarized (two
    crash examples that showed it, reduced)."""
    convo = Convo(tokens=0)
    convo.user("prompt 0")
    convo.reply("answer 0").pinned = True
    convo.user("prompt 1")
    convo.reply("answer 1")
    with session_with(convo) as (session, ctx):
        run(session, first, ctx)
        session.append([convo.user("later prompt"), convo.reply("later answer")])
        before = dumps(session.view_messages())
        assert [(m["id"], m["kind"]) for m in before][:3] == [
            ("m1", "message"),
            (before[1]["id"], "summary"),
            ("m2", "message"),
        ]
        assert run(session, later, ctx) is not None
        session.uncompact()
        assert dumps(session.view_messages()) == before
        assert dumps(load(session.transcript.path, session.count).view_messages()) == before


class Crash(BaseException):
    """Stands for the process dying at some point of a compaction."""


@PROPERTY_SETTINGS
@given(
    convo=conversations(),
    history=st.lists(actions, max_size=1),
    action=actions,
    crash_step=st.integers(1, 24),  # past the last progress step too
    cut=st.floats(0, 1),
)
def test_a_crash_at_any_point_leaves_the_old_or_the_new_state(
    convo: Convo, history: list[Any], action: tuple[str, int, int], crash_step: int, cut: float
) -> None:
    with session_with(convo) as (session, ctx):
        apply_history(session, ctx, convo, history)
        path = session.transcript.path
        old = dumps(session.view_messages())
        old_bytes = path.read_bytes()
        request = request_for(list(session.view), action)

        # the process dies at some progress step (before, during or after the commit)
        calls = 0

        def die(text: str, fraction: float | None) -> None:
            nonlocal calls
            calls += 1
            if calls == crash_step:
                raise Crash(text)

        ctx.progress = die
        committed = len(session.active)
        with suppress(Crash):
            run(session, request, ctx)
        event("died after the commit" if len(session.active) > committed else "died before it")
        ctx.progress = None
        state = dumps(load(path, session.count).view_messages())
        assert state == dumps(session.view_messages())
        if state != old:  # it died after committing: undo, to try again from the old state
            assert path.read_bytes()[: len(old_bytes)] == old_bytes
            session.uncompact()
            assert dumps(session.view_messages()) == old
        old_bytes = path.read_bytes()

        # the transcript write itself fails: nothing changes, in memory or on disk
        real_append = session.transcript.append_many

        def failing(events: Any) -> None:
            raise OSError("disk full")

        session.transcript.append_many = failing  # type: ignore[method-assign]
        with suppress(OSError):
            run(session, request, ctx)
        session.transcript.append_many = real_append  # type: ignore[method-assign]
        assert dumps(session.view_messages()) == old and not session.compacting
        assert path.read_bytes() == old_bytes

        # the boundary line is cut short at any byte: a reload sees all of it or none of it
        result = run(session, request, ctx)
        if result is None:
            return
        new = dumps(session.view_messages())
        full = path.read_bytes()
        assert full.startswith(old_bytes) and full.count(b"\n") == old_bytes.count(b"\n") + 1
        offset = len(old_bytes) + round(cut * (len(full) - len(old_bytes)))
        torn = path.with_name("torn.jsonl")
        torn.write_bytes(full[:offset])
        reloaded = dumps(load(torn, session.count).view_messages())
        assert reloaded in (old, new)
        assert (reloaded == new) == (offset >= len(full) - 1)
