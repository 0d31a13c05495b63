"""Microcompact: clearing old bulky tool results after an idle gap, as one undoable boundary."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from conversations import Convo

from baton.core.compaction.automatic.microcompact import CLEARED, microcompact
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import ToolResultBlock, text_message
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import Transcript
from baton.core.settings import MicrocompactSettings

SETTINGS = MicrocompactSettings(gap_minutes=60, keep_recent=3, tools=["Read", "Bash"])
BULK = "a line of tool output\n" * 50


def results_by_tool(session: Session) -> dict[str, str | None]:
    """tool_use id -> the content of its result in the current view."""
    out: dict[str, str | None] = {}
    for message in session.view_messages():
        for block in message.tool_results():
            assert isinstance(block, ToolResultBlock)
            out[block.tool_use_id] = block.content if isinstance(block.content, str) else None
    return out


def build(store: SessionStore) -> tuple[Session, Convo]:
    c = Convo(tokens=0)
    c.user("start")
    c.tools("Read", "Bash", output=BULK)  # t1 t2: old, cleared
    c.tools("Grep", output=BULK)  # t3: not a bulky tool here
    c.tools("Bash", errors=(0,), output=BULK)  # t4: an error, kept
    c.tools("Read", output=BULK)  # t5: old, cleared
    c.tools("Read", "Bash", output=BULK)  # t6 t7: the two most recent, kept
    c.tools("Read")  # t8: recent, and too short to be worth clearing anyway
    c.reply("done")
    session = store.create()
    session.append(c.messages)
    return session, c


def later(minutes: int) -> datetime:
    return datetime.now(UTC) + timedelta(minutes=minutes)


def test_nothing_happens_before_the_idle_gap(store: SessionStore) -> None:
    session, c = build(store)
    assert microcompact(session, SETTINGS, now=later(59)) is None
    assert session.view == c.ids and not session.boundaries


def test_after_the_gap_old_bulky_results_are_cleared_and_recent_ones_kept(
    store: SessionStore,
) -> None:
    session, _ = build(store)
    before = results_by_tool(session)
    boundary = microcompact(session, SETTINGS, now=later(61))
    assert boundary is not None and boundary.direction == "microcompact"
    after = results_by_tool(session)
    assert {k for k in after if after[k] == CLEARED} == {"t1", "t2", "t5"}
    for kept in ("t3", "t4", "t6", "t7", "t8"):
        assert after[kept] == before[kept]
    assert invariant_violations(session.view_messages()) == []
    assert boundary.extra["clearedResults"] == 3
    assert boundary.post_tokens < boundary.pre_tokens


def test_cleared_messages_are_copies_that_stand_for_their_originals(store: SessionStore) -> None:
    session, c = build(store)
    boundary = microcompact(session, SETTINGS, now=later(61))
    assert boundary is not None
    originals = boundary.summarized_ids
    copies = [m.id for m in boundary.new_messages]
    assert boundary.stands_for == {
        copy: [orig] for copy, orig in zip(copies, originals, strict=True)
    }
    assert not set(copies) & set(c.ids)
    assert session.view == [_copy_of(boundary.stands_for, i) for i in c.ids]
    # the originals are still in the session, untouched
    for original in originals:
        assert CLEARED not in str(session.messages[original].content)


def _copy_of(stands_for: dict[str, list[str]], original: str) -> str:
    for copy, was in stands_for.items():
        if was == [original]:
            return copy
    return original


def test_undo_brings_back_the_original_results(store: SessionStore) -> None:
    session, _ = build(store)
    original = [m.wire() for m in session.view_messages()]
    boundary = microcompact(session, SETTINGS, now=later(61))
    assert boundary is not None
    session.uncompact(boundary.id)
    assert [m.wire() for m in session.view_messages()] == original


def test_results_an_undo_brought_back_stay_until_the_next_reply(store: SessionStore) -> None:
    """The undo is the user asking for the results back: the next send, still past the gap
    since the last reply, cleared them again before its request (the meter, counting them,
    stood above that request). A reply after it starts the gap again, and once it has passed
    they are cleared as any old results; the same holds after a reload."""
    session, _ = build(store)
    original = results_by_tool(session)
    boundary = microcompact(session, SETTINGS, now=later(61))
    assert boundary is not None
    session.uncompact(boundary.id)

    assert microcompact(session, SETTINGS, now=later(62)) is None
    assert microcompact(reloaded(session), SETTINGS, now=later(600)) is None
    assert results_by_tool(session) == original

    session.append([text_message("user", "and now?"), text_message("assistant", "Done.")])
    assert microcompact(session, SETTINGS, now=later(30)) is None  # a new gap, not passed yet
    assert microcompact(session, SETTINGS, now=later(61)) is not None


def reloaded(session: Session) -> Session:
    transcript = Transcript.open(session.transcript.path, writable=False)
    try:
        return Session(transcript, session.count)
    finally:
        transcript.close()


def test_a_second_run_with_nothing_new_does_nothing(store: SessionStore) -> None:
    session, _ = build(store)
    assert microcompact(session, SETTINGS, now=later(61)) is not None
    assert microcompact(session, SETTINGS, now=later(120)) is None


def test_the_boundary_survives_a_reload(store: SessionStore) -> None:
    session, _ = build(store)
    microcompact(session, SETTINGS, now=later(61))
    transcript = Transcript.open(session.transcript.path, writable=False)
    try:
        again = Session(transcript, session.count)
    finally:
        transcript.close()
    assert again.view == session.view
    assert results_by_tool(again) == results_by_tool(session)


def test_pinned_messages_and_conversations_without_replies_are_left_alone(
    store: SessionStore,
) -> None:
    session, c = build(store)
    for message in c.messages:
        if message.tool_results():
            session.set_pinned(message.id, True)
    assert microcompact(session, SETTINGS, now=later(61)) is None
    empty = store.create()
    empty.append([text_message("user", "hello")])
    assert microcompact(empty, SETTINGS, now=later(600)) is None


def test_a_running_compaction_blocks_microcompact(store: SessionStore) -> None:
    session, _ = build(store)
    session.compacting = True
    assert microcompact(session, SETTINGS, now=later(61)) is None
    session.compacting = False
    assert microcompact(session, SETTINGS, now=later(61)) is not None


def test_keep_recent_zero_clears_every_bulky_result_worth_clearing(store: SessionStore) -> None:
    session, _ = build(store)
    settings = SETTINGS.model_copy(update={"keep_recent": 0})
    microcompact(session, settings, now=later(61))
    after = results_by_tool(session)
    assert {k for k in after if after[k] == CLEARED} == {"t1", "t2", "t5", "t6", "t7"}
    assert after["t8"] == "Read output t8"


def test_the_old_results_of_every_tool_baton_offers_are_cleared_by_default() -> None:
    """Its own search, find and edit results were never cleared (only read_file was)."""
    from baton.core.settings import MicrocompactSettings
    from baton.core.tools.catalog import workspace_registry

    offered = {
        name for model in ("claude-sonnet-4-5", "claude-3-5-haiku")
        for name in workspace_registry(model).names()
    }  # fmt: skip
    assert offered <= set(MicrocompactSettings().tools)
