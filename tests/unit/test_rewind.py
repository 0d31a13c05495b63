"""A rewind (edit a prompt and send it again, retry a reply): the view cut before a message
as one boundary line, the messages kept in the transcript, undone like a compaction."""

from __future__ import annotations

import json

import pytest
from conversations import say, summary_boundary, ten_per_block

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import (
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.undo import undo_compaction
from baton.core.conversation.unrewind import sent_since, unrewind
from baton.core.errors import InvalidParams, NothingToCompact

COUNT = ten_per_block  # how the `store` fixture counts


def answer(mid: str, text: str = "sure") -> Message:
    return Message(id=mid, role="assistant", content=[TextBlock(text=text)])


def result(mid: str) -> MessageInput:
    return MessageInput(
        id=mid, role="user", content=[ToolResultBlock(tool_use_id="u1", content="ok")]
    )


def conversation(session: Session) -> None:
    session.append([say("p1"), answer("a1"), say("p2", "first try"), answer("a2")])


def reopen(store: SessionStore, session_id: str) -> Session:
    store.close()
    return store.get(session_id)


def test_a_rewind_cuts_the_view_before_the_message_and_keeps_the_transcript(
    store: SessionStore,
) -> None:
    session = store.create()
    conversation(session)
    lines = session.transcript.path.read_text().count("\n")

    boundary = session.rewind("p2")

    assert session.view == ["p1", "a1"]
    assert boundary.direction == "rewind" and boundary.summarized_ids == ["p2", "a2"]
    assert "p2" in session.messages and "a2" in session.messages  # kept, out of the view
    assert session.compactions == 0  # a rewind is not a compaction
    text = session.transcript.path.read_text()
    assert text.count("\n") == lines + 1  # one boundary line, nothing rewritten
    assert json.loads(text.splitlines()[-1])["boundary"]["direction"] == "rewind"
    reopened = reopen(store, session.session_id)
    assert reopened.view == ["p1", "a1"]
    assert reopened.active == [boundary.id]


def test_edit_and_resend_then_undo_brings_the_old_turns_back_before_the_new(
    store: SessionStore,
) -> None:
    session = store.create()
    conversation(session)
    boundary = session.rewind("p2")
    session.append([say("p2b", "second try"), answer("a2b")])  # the edited prompt, resent
    assert session.view == ["p1", "a1", "p2b", "a2b"]

    session.uncompact(boundary.id)

    assert session.view == ["p1", "a1", "p2", "a2", "p2b", "a2b"]
    assert reopen(store, session.session_id).view == ["p1", "a1", "p2", "a2", "p2b", "a2b"]


def test_retry_cuts_before_the_reply_and_undo_right_away_restores_it(
    store: SessionStore,
) -> None:
    session = store.create()
    conversation(session)
    session.rewind("a2")
    assert session.view == ["p1", "a1", "p2"]
    session.uncompact()
    assert session.view == ["p1", "a1", "p2", "a2"]


def test_undo_that_would_break_the_api_rules_is_refused_and_writes_nothing(
    store: SessionStore,
) -> None:
    session = store.create()
    call = Message(
        id="a1", role="assistant", content=[ToolUseBlock(id="u1", name="Bash", input={})]
    )
    session.append([say("p1"), call, result("r1"), answer("a2")])
    boundary = session.rewind("r1")  # the tool runs again: a new result for the same call
    session.append([result("r1b")])
    before = session.transcript.path.read_bytes()

    with pytest.raises(InvalidParams, match="would break the API's rules"):
        session.uncompact(boundary.id)

    assert session.transcript.path.read_bytes() == before
    assert session.view == ["p1", "a1", "r1b"]


def test_a_retried_reply_follows_the_old_one_once_its_rewind_is_undone(
    store: SessionStore,
) -> None:
    session = store.create()
    conversation(session)
    boundary = session.rewind("a2")
    session.append([answer("a2b", "another reply")])
    session.uncompact(boundary.id)
    assert session.view == ["p1", "a1", "p2", "a2", "a2b"]


def test_a_rewind_to_a_message_not_in_the_view_is_refused(store: SessionStore) -> None:
    session = store.create()
    conversation(session)
    session.commit_boundary(summary_boundary(session, ["p1", "a1"]))
    before = session.transcript.path.read_bytes()
    for missing in ("p1", "nope"):
        with pytest.raises(InvalidParams, match="not in this session's view"):
            session.rewind(missing)
    assert session.transcript.path.read_bytes() == before


def test_a_rewind_after_a_compaction_and_its_undo_in_either_order(store: SessionStore) -> None:
    session = store.create()
    conversation(session)
    compaction = summary_boundary(session, ["p1", "a1"])
    session.commit_boundary(compaction)
    rewind = session.rewind("p2")
    assert session.view == [compaction.summary_id]
    session.uncompact(compaction.id)
    assert session.view == ["p1", "a1"]
    session.uncompact(rewind.id)
    assert session.view == ["p1", "a1", "p2", "a2"]


def _rewound_then_compacted(store: SessionStore, summarized: list[str]) -> tuple[Session, str, str]:
    """p1 a1 p2 a2, rewound at p2, a new p2b a2b sent, then `summarized` compacted: the
    session, the rewind's id and the compaction's."""
    session = store.create()
    conversation(session)
    rewind = session.rewind("p2")
    session.append([say("p2b", "second try"), answer("a2b")])
    compaction = summary_boundary(session, summarized)
    session.commit_boundary(compaction)
    return session, rewind.id, compaction.id


def test_a_rewind_undone_under_a_summary_of_what_it_kept_puts_its_turns_after_the_summary(
    store: SessionStore,
) -> None:
    """The messages the rewind kept are summarized: its turns go back after that summary,
    not first in the conversation, so both undo orders end in the same conversation."""
    everything = ["p1", "a1", "p2", "a2", "p2b", "a2b"]
    session, rewind, compaction = _rewound_then_compacted(store, ["p1", "a1"])
    summary = session.view[0]
    session.uncompact(rewind)
    assert session.view == [summary, "p2", "a2", "p2b", "a2b"]
    assert reopen(store, session.session_id).view == [summary, "p2", "a2", "p2b", "a2b"]
    session = store.get(session.session_id)
    session.uncompact(compaction)
    assert session.view == everything

    other, rewind, compaction = _rewound_then_compacted(store, ["p1", "a1"])
    other.uncompact(compaction)
    other.uncompact(rewind)
    assert other.view == everything
    assert reopen(store, other.session_id).view == everything


def test_a_rewind_undo_is_refused_when_one_summary_holds_what_it_kept_and_what_came_since(
    store: SessionStore,
) -> None:
    """No place puts the rewound turns between the kept ones and the ones sent since when a
    summary stands for both: the undo names the compaction to undo first, writes nothing."""
    session, rewind, compaction = _rewound_then_compacted(store, ["p1", "a1", "p2b"])
    before = session.transcript.path.read_bytes()
    view = list(session.view)
    with pytest.raises(InvalidParams, match=f"compaction {compaction} summarized both"):
        session.uncompact(rewind)
    assert session.transcript.path.read_bytes() == before and session.view == view
    session.uncompact(compaction)
    session.uncompact(rewind)
    assert session.view == ["p1", "a1", "p2", "a2", "p2b", "a2b"]


def test_an_empty_compaction_id_names_none_and_undoes_nothing(store: SessionStore) -> None:
    session = store.create()
    conversation(session)
    session.commit_boundary(summary_boundary(session, ["p1", "a1"]))
    before = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match="no active compaction ''"):
        session.uncompact("")
    assert session.transcript.path.read_bytes() == before and session.compactions == 1


def test_two_rewinds_undone_oldest_first_put_every_turn_back(store: SessionStore) -> None:
    """The first rewind's turns, put back by its undo, are older than the second rewind: they
    neither stand in the way of its undo nor count as turns sent since it."""
    session = store.create()
    conversation(session)
    first = session.rewind("p2")
    session.append([say("p3"), answer("a3"), say("p4"), answer("a4")])
    second = session.rewind("p4")
    session.uncompact(first.id)
    assert session.view == ["p1", "a1", "p2", "a2", "p3", "a3"]

    session.uncompact(second.id)

    everything = ["p1", "a1", "p2", "a2", "p3", "a3", "p4", "a4"]
    assert session.view == everything
    assert reopen(store, session.session_id).view == everything


def test_a_compaction_undone_while_a_rewind_holds_its_summary_gives_the_turns_back_later(
    store: SessionStore,
) -> None:
    """A rewind took out a summary; the summary's compaction is undone meanwhile: undoing the
    rewind then puts back the turns the summary stood for, never the undone summary."""
    session = store.create()
    conversation(session)
    session.append([say("p3"), answer("a3")])
    compaction = summary_boundary(session, ["p2", "a2"])
    assert compaction.summary_id is not None
    compaction.view_after = ["p1", "a1", compaction.summary_id, "p3", "a3"]  # in place
    session.commit_boundary(compaction)
    rewind = session.rewind(compaction.summary_id)
    session.uncompact(compaction.id)
    assert session.view == ["p1", "a1"]

    session.uncompact(rewind.id)

    everything = ["p1", "a1", "p2", "a2", "p3", "a3"]
    assert session.view == everything
    assert reopen(store, session.session_id).view == everything


def test_a_compaction_undone_leaves_out_what_a_rewind_in_force_took(store: SessionStore) -> None:
    """p2 stayed verbatim after the summary standing for its span (a pin) and was rewound,
    then edited: undoing the compaction gives back its span up to p2 only, since the
    rewind took p2 and everything after it; undoing the rewind then gives back the rest,
    where it was."""
    session = store.create()
    conversation(session)
    session.append([say("p3"), answer("a3")])
    summary = Message(role="user", kind="summary", content=[TextBlock(text="summary")])
    span = ["p1", "a1", "p2", "a2"]
    view = [summary.id, "p2", "p3", "a3"]
    session.commit_boundary(
        Boundary(
            summary_id=summary.id,
            new_messages=[summary],
            stands_for={summary.id: span},
            summarized_ids=["p1", "a1", "a2"],
            kept_ids=["p2", "p3", "a3"],
            view_before=list(session.view),
            view_after=view,
        )
    )
    rewind = session.rewind("p2")
    session.append([say("p2b", "edited"), answer("a2b")])
    compaction = session.active[0]

    session.uncompact(compaction)

    assert session.view == ["p1", "a1", "p2b", "a2b"]
    assert reopen(store, session.session_id).view == ["p1", "a1", "p2b", "a2b"]
    session = store.get(session.session_id)
    session.uncompact(rewind.id)
    assert session.view == ["p1", "a1", "p2", "a2", "p3", "a3", "p2b", "a2b"]


def _summary_of_a_call_it_never_held(session: Session) -> Boundary:
    """A compaction of p1 p2 a2 whose summary stands for a call `a1` with no result, a
    message the session knows but never held in its view: its undo would leave that call
    unanswered before the next prompt."""
    call = Message(
        id="a1", role="assistant", content=[ToolUseBlock(id="u1", name="Read", input={})]
    )
    session.append([say("p1"), say("p2"), answer("a2")])
    session.messages["a1"] = call  # known to the session, as a message it once held
    summary = Message(role="user", kind="summary", content=[TextBlock(text="summary")])
    boundary = Boundary(
        summary_id=summary.id,
        new_messages=[summary],
        stands_for={summary.id: ["a1"]},
        summarized_ids=["a1"],
        kept_ids=["p1", "p2", "a2"],
        view_before=list(session.view),
        view_after=["p1", summary.id, "p2", "a2"],
    )
    session.commit_boundary(boundary)
    return boundary


def test_a_compaction_undo_that_would_break_the_api_rules_is_refused(store: SessionStore) -> None:
    """Whatever the summary stood for, its undo must leave a conversation the API takes: one
    that would not (here a call with no result before the next prompt) writes nothing, and
    says which rule it would break; being the latest, no other undo would help, and the
    refusal names none (nor a rewind, where none was made)."""
    session = store.create()
    _summary_of_a_call_it_never_held(session)
    before = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match="would break the API's rules") as refused:
        session.uncompact()
    assert "cannot come back as it was sent" in refused.value.message
    assert "rewind" not in refused.value.message
    assert session.transcript.path.read_bytes() == before and session.compactions == 1


def test_a_refused_compaction_undo_names_the_latest_boundary_whose_undo_works(
    store: SessionStore,
) -> None:
    """With a compaction made after it, the refusal names that one, the latest, as the undo
    to make first (undoing newest first always retraces the steps), and that undo works."""
    session = store.create()
    first = _summary_of_a_call_it_never_held(session)
    session.append([say("p3"), answer("a3")])
    second = summary_boundary(session, ["p3", "a3"])
    assert first.summary_id is not None and second.summary_id is not None
    second.view_after = ["p1", first.summary_id, "p2", "a2", second.summary_id]
    session.commit_boundary(second)
    before = session.transcript.path.read_bytes()

    with pytest.raises(InvalidParams, match="would break the API's rules") as refused:
        session.uncompact(first.id)

    assert f"undo compaction {second.id}, the latest, first" in refused.value.message
    assert "rewind" not in refused.value.message
    assert session.transcript.path.read_bytes() == before
    session.uncompact(second.id)
    assert session.view == ["p1", first.summary_id, "p2", "a2", "p3", "a3"]


def test_a_rewind_whose_kept_turns_another_rewind_holds_waits_for_that_one(
    store: SessionStore,
) -> None:
    """A later rewind took out (inside a summary) the turns the first one kept: undoing the
    first now would put its turns back with nothing of what came before them, so it names the
    later rewind; undone in that order, every turn is back where it was."""
    session = store.create()
    conversation(session)
    first = session.rewind("a2")  # kept p1 a1 p2
    session.append([answer("a2b", "again"), say("p3"), answer("a3")])
    compaction = summary_boundary(session, ["p2", "a2b"])
    assert compaction.summary_id is not None
    compaction.view_after = ["p1", "a1", compaction.summary_id, "p3", "a3"]
    session.commit_boundary(compaction)
    second = session.rewind(compaction.summary_id)
    before = session.transcript.path.read_bytes()

    with pytest.raises(InvalidParams, match=f"rewind {second.id} took out what came before"):
        session.uncompact(first.id)

    assert session.transcript.path.read_bytes() == before and session.view == ["p1", "a1"]
    session.uncompact(second.id)
    session.uncompact(compaction.id)
    session.uncompact(first.id)
    assert session.view == ["p1", "a1", "p2", "a2", "a2b", "p3", "a3"]


def test_a_named_compaction_not_in_force_is_invalid_params_with_or_without_others(
    store: SessionStore,
) -> None:
    """A stale "undo" that names a compaction gets the same answer whether or not another
    compaction is in force; only "undo the latest" with none in force has nothing to undo."""
    session = store.create()
    conversation(session)
    compaction = summary_boundary(session, ["p1", "a1"])
    session.commit_boundary(compaction)
    session.uncompact(compaction.id)
    for named in (compaction.id, "cmp_unknown", ""):
        with pytest.raises(InvalidParams, match="no active compaction"):
            session.uncompact(named)
    with pytest.raises(NothingToCompact):
        session.uncompact()


def _summarize(session: Session, span: list[str], view_after: list[str]) -> str:
    """Commit a summary standing for `span`, the view becoming `view_after` ("S" marks the
    summary's place; the messages of `span` also in it stayed verbatim, as pinned ones do)."""
    summary = Message(role="user", kind="summary", content=[TextBlock(text="summary")])
    view = [summary.id if mid == "S" else mid for mid in view_after]
    session.commit_boundary(
        Boundary(
            summary_id=summary.id,
            new_messages=[summary],
            stands_for={summary.id: span},
            summarized_ids=[mid for mid in span if mid not in view],
            kept_ids=[mid for mid in view if mid != summary.id],
            view_before=list(session.view),
            view_after=view,
        )
    )
    return summary.id


def _turns(session: Session, *names: str) -> None:
    session.append([m for n in names for m in (say(f"p{n}"), answer(f"a{n}"))])


def test_two_rewinds_at_one_place_undone_in_either_order_keep_the_turns_in_order(
    store: SessionStore,
) -> None:
    for first_undone in (0, 1):
        session = store.create()
        _turns(session, "1", "2")
        rewinds = [session.rewind("p2").id]
        _turns(session, "3")
        rewinds.append(session.rewind("p3").id)
        session.uncompact(rewinds[first_undone])
        session.uncompact(rewinds[1 - first_undone])
        assert session.view == ["p1", "a1", "p2", "a2", "p3", "a3"]


def test_an_outer_summary_undone_after_its_inner_one_keeps_the_turns_sent_since_a_rewind(
    store: SessionStore,
) -> None:
    """p2 stayed beside the inner summary and was rewound; p5 was sent after that, and an
    outer summary then stood for the inner one and p5: undoing the inner one, then the outer
    one, gives back p5, and the rewind then everything it took, in order."""
    session = store.create()
    _turns(session, "1", "2", "3", "4")
    inner = _summarize(session, ["p1", "a1", "p2", "a2", "p3", "a3"], ["S", "p2", "p4", "a4"])
    rewind = session.rewind("p2")
    _turns(session, "5")
    _summarize(session, [inner, "p5"], ["S", "a5"])
    session.uncompact(session.active[0])
    session.uncompact(session.active[-1])
    assert session.view == ["p1", "a1", "p5", "a5"]
    session.uncompact(rewind.id)
    assert session.view == [f"{r}{n}" for n in "12345" for r in "pa"]
    assert reopen(store, session.session_id).view == session.view


def test_two_rewinds_holding_parts_of_one_undone_summary_each_give_back_their_own(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session, "1", "2", "3", "4", "5")
    summary = _summarize(
        session, ["p2", "a2", "p3", "a3", "p4", "a4"], ["p1", "a1", "S", "p4", "p5", "a5"]
    )
    first = session.rewind("p4")
    _turns(session, "6")
    second = session.rewind(summary)
    session.uncompact(session.active[0])
    session.uncompact(second.id)
    assert session.view == ["p1", "a1", "p2", "a2", "p3", "a3", "p6", "a6"]
    session.uncompact(first.id)
    assert session.view == [f"{r}{n}" for n in "123456" for r in "pa"]


def test_a_summary_with_two_messages_kept_beside_it_gives_back_its_span_in_order(
    store: SessionStore,
) -> None:
    session = store.create()
    _turns(session, "1", "2", "3", "4", "5")
    span = ["p1", "a1", "p2", "a2", "p3", "a3", "p4", "a4"]
    _summarize(session, span, ["S", "p2", "p4", "p5", "a5"])
    rewind = session.rewind("p2")
    session.uncompact(session.active[0])
    assert session.view == ["p1", "a1"]
    session.uncompact(rewind.id)
    assert session.view == [f"{r}{n}" for n in "12345" for r in "pa"]


def test_a_message_still_in_the_view_is_never_held_by_a_rewind_after_an_undo() -> None:
    """A rewind took out a summary whose span also holds a message shown in the view (kept
    verbatim): once that compaction is undone, the rewind holds the rest of the span, never
    the message the view still shows."""
    compaction = Boundary(
        new_messages=[Message(id="S", role="user", kind="summary", content=[TextBlock(text="s")])],
        stands_for={"S": ["P", "x", "y"]},
    )
    rewind = Boundary(direction="rewind", summarized_ids=["S", "z"], view_after=["P", "w"])
    order = {mid: n for n, mid in enumerate(["P", "x", "y", "w", "S", "z"])}

    view = undo_compaction(["P", "w"], compaction, [rewind], order)

    assert view == ["P", "w"]
    assert rewind.summarized_ids == ["x", "y", "z"]


def test_a_rewinds_turns_go_back_among_older_turns_in_the_order_they_came() -> None:
    """After what the rewind kept (k), the view holds older turns another rewind's undo put
    back (o1, o2): the rewound turns (b1, b2) go among them where they came, not after them
    all."""
    arrival = ["k", "b1", "o1", "b2", "o2", "later"]
    rewind = Boundary(direction="rewind", summarized_ids=["b1", "b2"], view_after=["k"])
    since = sent_since(arrival, arrival.index("later"))

    view = unrewind(["k", "o1", "o2", "later"], rewind, {}, since, arrival)

    assert view == ["k", "b1", "o1", "b2", "o2", "later"]
