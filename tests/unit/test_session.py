"""Sessions and the store: validated appends, repairs, boundaries and undo, ids, deletion."""

from __future__ import annotations

from pathlib import Path

import pytest
from conversations import say, summary_boundary, ten_per_block
from pydantic import ValidationError

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import (
    ApiUsage,
    Attachment,
    ContentBlock,
    ImageBlock,
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import INTERRUPTED, Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams, NothingToCompact, SessionNotFound

COUNT = ten_per_block  # how the `store` fixture counts


def reopen(store: SessionStore, session_id: str) -> Session:
    store.close()
    return store.get(session_id)


def answer(mid: str, *blocks: ContentBlock, api: str | None = None, usage: int = 0) -> Message:
    content: list[ContentBlock] = list(blocks) or [TextBlock(text="sure")]
    return Message(
        id=mid,
        role="assistant",
        content=content,
        api_message_id=api,
        usage=ApiUsage(input_tokens=usage) if usage else None,
    )


def use(use_id: str) -> ToolUseBlock:
    return ToolUseBlock(id=use_id, name="Bash", input={"command": "ls"})


def result(mid: str, use_id: str) -> MessageInput:
    return MessageInput(
        id=mid, role="user", content=[ToolResultBlock(tool_use_id=use_id, content="a.py")]
    )


# ---- append ------------------------------------------------------------------------------------


def test_append_writes_messages_with_their_token_counts(store: SessionStore) -> None:
    session = store.create(title="t")
    outcome = session.append([say("p1"), answer("a1")])

    assert outcome.message_ids == ["p1", "a1"]
    assert outcome.repairs == []
    reopened = reopen(store, session.session_id)
    assert reopened.view == ["p1", "a1"]
    assert [m.tokens for m in reopened.view_messages()] == [10, 10]


bad_input = ToolUseBlock(id="t8", name="Read", input=[1])


@pytest.mark.parametrize(
    "batch",
    [
        [result("u1", "no-such-call")],
        [say("p1")],  # p1 exists already
        [say("p9"), say("p9")],  # the same id twice in one batch
        [MessageInput(id="e1", role="user", content=[])],
        [],
        [say("ok1"), result("u2", "no-such-call")],  # a valid message before a bad one
        [MessageInput(id="e2", role="user", content="")],
        [MessageInput(id="e3", role="user", content="   ")],
        [MessageInput(id="e4", role="user", content=[ToolUseBlock(id="t9", name="R")])],
        [MessageInput(id="e5", role="assistant", content=[ToolResultBlock(tool_use_id="t1")])],
        [
            MessageInput(
                id="e6", role="assistant", content=[ToolUseBlock(id="t8", name="R", input=[1])]
            )
        ],
        [MessageInput(id="e7", role="user", content=[ImageBlock(source={})])],
        [MessageInput(id="e\n8", role="user", content="hi")],
        [MessageInput(id="e9", role="assistant", content=[ToolUseBlock(id="t\r9", name="R")])],
        [MessageInput(id="e10", role="assistant", content=[ToolUseBlock(id="t10", name="R\n")])],
    ],
    ids=[
        "orphan-result",
        "duplicate-id",
        "duplicate-in-batch",
        "no-blocks",
        "empty",
        "partial",
        "empty-text",
        "blank-text",
        "tool-use-from-user",
        "tool-result-from-assistant",
        "tool-input-not-object",
        "image-without-source",
        "line-break-in-id",
        "line-break-in-tool-use-id",
        "line-break-in-tool-name",
    ],
)
def test_an_invalid_append_is_rejected_and_the_file_is_byte_identical(
    store: SessionStore, batch: list[MessageInput]
) -> None:
    session = store.create()
    session.append([say("p1"), answer("a1")])
    before = session.transcript.path.read_bytes()

    with pytest.raises(InvalidParams):
        session.append(batch)

    assert session.transcript.path.read_bytes() == before
    assert session.view == ["p1", "a1"]
    assert reopen(store, session.session_id).view == ["p1", "a1"]


def test_negative_usage_figures_are_rejected() -> None:
    with pytest.raises(ValidationError):
        MessageInput.model_validate(
            {"role": "assistant", "content": "ok", "usage": {"inputTokens": -5}}
        )


def test_a_tool_result_must_answer_the_preceding_assistant_turn(store: SessionStore) -> None:
    session = store.create()
    session.append([say("p1"), answer("a1", use("t1")), result("u1", "t1"), say("p2")])
    before = session.transcript.path.read_bytes()

    with pytest.raises(InvalidParams, match="t1"):
        session.append([result("u2", "t1")])  # t1 belongs to an earlier turn

    assert session.transcript.path.read_bytes() == before


def test_a_prompt_after_unanswered_tool_calls_answers_them_first(store: SessionStore) -> None:
    session = store.create()
    session.append([say("p1"), answer("a1", use("t1"), use("t2")), result("u1", "t1")])

    outcome = session.append([say("p2", "never mind")])

    assert outcome.message_ids == ["p2"]
    assert len(outcome.repairs) == 1 and "t2" in outcome.repairs[0]
    repair = session.view_messages()[-2]
    assert session.view[-1] == "p2"
    assert [(r.tool_use_id, r.content, r.is_error) for r in repair.tool_results()] == [
        ("t2", INTERRUPTED, True)
    ]
    assert invariant_violations(session.view_messages()) == []
    assert reopen(store, session.session_id).view == session.view


def test_a_prompt_that_answers_the_calls_itself_needs_no_repair(store: SessionStore) -> None:
    session = store.create()
    session.append([say("p1"), answer("a1", use("t1"))])
    both = MessageInput(
        id="p2",
        role="user",
        content=[ToolResultBlock(tool_use_id="t1", content="done"), TextBlock(text="and now?")],
    )

    outcome = session.append([both])

    assert outcome.repairs == []
    assert session.view == ["p1", "a1", "p2"]


# ---- boundaries ------------------------------------------------------------------------------


def conversation(session: Session) -> None:
    session.append(
        [say("p1"), answer("a1", api="r1", usage=500), say("p2"), answer("a2", api="r2", usage=900)]
    )


def test_a_boundary_replaces_what_it_summarized_and_survives_a_reload(store: SessionStore) -> None:
    session = store.create()
    conversation(session)
    boundary = summary_boundary(session, ["p1", "a1"])

    session.commit_boundary(boundary)

    assert session.view == [boundary.summary_id, "p2", "a2"]
    assert session.compactions == 1
    assert session.get(str(boundary.summary_id)).tokens == 10
    reopened = reopen(store, session.session_id)
    assert reopened.view == [boundary.summary_id, "p2", "a2"]
    assert reopened.active == [boundary.id]


def test_messages_appended_during_a_compaction_follow_the_new_view(store: SessionStore) -> None:
    session = store.create()
    conversation(session)
    boundary = summary_boundary(session, ["p1", "a1", "p2", "a2"])  # planned now
    session.append([say("p3")])  # arrives while the summary is being written

    session.commit_boundary(boundary)

    assert session.view == [boundary.summary_id, "p3"]


def test_uncompact_restores_the_messages_and_keeps_later_turns(store: SessionStore) -> None:
    session = store.create()
    conversation(session)
    session.commit_boundary(summary_boundary(session, ["p1", "a1"]))
    session.append([say("p3"), answer("a3")])

    undone = session.uncompact()

    assert session.view == ["p1", "a1", "p2", "a2", "p3", "a3"]
    assert session.active == [] and session.compactions == 0
    reopened = reopen(store, session.session_id)
    assert reopened.view == ["p1", "a1", "p2", "a2", "p3", "a3"]
    assert undone.id in reopened.boundaries and reopened.active == []


def test_nested_compactions_undo_in_any_order(store: SessionStore) -> None:
    session = store.create()
    conversation(session)
    first = summary_boundary(session, ["p1", "a1"], "first")
    session.commit_boundary(first)
    second = summary_boundary(session, [str(first.summary_id), "p2"], "second")
    session.commit_boundary(second)
    assert session.view == [second.summary_id, "a2"]

    session.uncompact(first.id)  # the older one, now hidden inside the second summary

    assert session.view == [second.summary_id, "a2"]
    session.uncompact(second.id)
    assert session.view == ["p1", "a1", "p2", "a2"]
    assert reopen(store, session.session_id).view == ["p1", "a1", "p2", "a2"]


def test_uncompact_without_a_compaction_is_an_error_and_writes_nothing(
    store: SessionStore,
) -> None:
    session = store.create()
    conversation(session)
    before = session.transcript.path.read_bytes()
    with pytest.raises(NothingToCompact):
        session.uncompact()
    assert session.transcript.path.read_bytes() == before
    session.commit_boundary(summary_boundary(session, ["p1", "a1"]))
    before = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams):
        session.uncompact("cmp_unknown")
    assert session.transcript.path.read_bytes() == before


def test_usage_anchors_only_while_the_view_before_it_is_unchanged(store: SessionStore) -> None:
    session = store.create()
    conversation(session)
    anchor = session.anchor()
    assert anchor is not None and anchor[0] == 3 and anchor[1].input_tokens == 900

    session.commit_boundary(summary_boundary(session, ["p1", "a1"]))
    assert session.anchor() is None  # a2's usage counted p1/a1, which are gone

    session.uncompact()
    restored = session.anchor()
    assert restored is not None and restored[1].input_tokens == 900


def test_the_anchor_starts_at_the_first_record_of_its_response(store: SessionStore) -> None:
    session = store.create()
    session.append(
        [
            say("p1"),
            answer("a1", use("t1"), api="r1", usage=700),
            result("u1", "t1"),
            answer("a2", use("t2"), api="r1", usage=700),
        ]
    )
    anchor = session.anchor()
    assert anchor is not None and anchor[0] == 1


def test_pins_survive_a_reload(store: SessionStore) -> None:
    session = store.create()
    conversation(session)
    session.set_pinned("p2", True)
    assert reopen(store, session.session_id).get("p2").pinned


# ---- the store -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["../x", "a/b", "", ".hidden", "x" * 200, "a b", "a\\b", "evil\n", "x\n\n"]
)
def test_invalid_session_ids_are_rejected(store: SessionStore, bad: str) -> None:
    with pytest.raises(InvalidParams):
        store.get(bad)
    with pytest.raises(InvalidParams):
        store.path_for(bad)
    if bad:  # an empty id given to create means "choose one"
        with pytest.raises(InvalidParams):
            store.create(session_id=bad)
    assert not store.sessions_dir.exists() or list(store.sessions_dir.iterdir()) == []


def test_an_unknown_session_is_not_found(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.get("s_missing")


def test_delete_hides_the_session_but_keeps_its_file(store: SessionStore) -> None:
    kept = store.create(title="kept")
    gone = store.create(title="gone")
    conversation(gone)
    path = gone.transcript.path
    before = path.read_bytes()

    store.delete(gone.session_id)

    assert path.read_bytes().startswith(before)  # appended to, never rewritten
    with pytest.raises(SessionNotFound):
        store.get(gone.session_id)
    assert [s.session_id for s in store.list()] == [kept.session_id]
    store.close()
    assert [s.session_id for s in store.list()] == [kept.session_id]
    with pytest.raises(SessionNotFound):
        store.get(gone.session_id)
    assert path.exists()


def test_work_that_began_before_a_delete_writes_nothing_after_it(store: SessionStore) -> None:
    """A compaction or a reply that was running when the session was deleted is refused
    at its commit (it answered success and wrote its boundary after the `deleted` record,
    into a session no one can open)."""
    session = store.create()
    conversation(session)
    boundary = summary_boundary(session, list(session.view[:2]))
    store.delete(session.session_id)
    written = session.transcript.path.read_bytes()
    with pytest.raises(SessionNotFound, match="was deleted"):
        session.commit_boundary(boundary)
    with pytest.raises(SessionNotFound, match="was deleted"):
        session.append([MessageInput(role="user", content="late")])
    assert session.transcript.path.read_bytes() == written


def test_a_read_only_view_follows_the_writer_and_becomes_writable_when_it_lets_go(
    tmp_path: Path,
) -> None:
    count = len
    writer = SessionStore(tmp_path, lambda m: count(m.text()))
    reader = SessionStore(tmp_path, lambda m: count(m.text()))
    session = writer.create(title="shared")
    session.append([MessageInput(role="user", content="first")])

    seen = reader.get(session.session_id)
    assert seen.read_only and len(seen.view) == 1
    session.append([MessageInput(role="assistant", content="second")])
    assert len(reader.get(session.session_id).view) == 2  # the writer's new turn shows

    writer.close()
    again = reader.get(session.session_id)
    assert not again.read_only
    again.append([MessageInput(role="user", content="third")])
    assert len(again.view) == 3
    reader.close()


def test_loading_a_session_leaves_the_cyclic_collector_as_it_found_it(
    store: SessionStore,
) -> None:
    import gc

    session = store.create()
    conversation(session)
    sid = session.session_id
    for enabled in (True, False):
        store.close()
        (gc.enable if enabled else gc.disable)()
        try:
            assert store.get(sid).view == ["p1", "a1", "p2", "a2"]
            assert gc.isenabled() is enabled
        finally:
            gc.enable()


def test_a_load_freezes_what_it_read_before_the_collector_is_back_on(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Switched on with the loaded messages still among the collector's objects, the
    collector ran a full collection over all of them at the next allocation (0.13 s for
    an import of 57,000 messages, with every other session waiting): they are frozen out
    of its walks first."""
    import gc

    from baton.core import memory
    from baton.core.conversation.messages import Message

    session = store.create()
    for n in range(200):
        session.append(
            [
                MessageInput(role="user", content=f"question {n}"),
                MessageInput(role="assistant", content=f"answer {n}"),
            ]
        )
    sid = session.session_id
    store.close()
    walked: list[int] = []

    class Watched:
        def __getattr__(self, name: str) -> object:
            return getattr(gc, name)

        def enable(self) -> None:
            walked.append(sum(1 for o in gc.get_objects() if type(o) is Message))
            gc.enable()

    monkeypatch.setattr(memory, "gc", Watched())
    assert len(store.get(sid).view) == 400
    assert walked == [0], f"{walked} loaded messages left for the collector to walk"


def test_overlapping_pauses_keep_the_collector_off_until_the_last_ends() -> None:
    """A load on the loop and an import in a thread overlap: the collector stays off until
    both are done (the first to end switched it back on while the other still ran), and is
    on again after, as it was."""
    import gc

    from baton.core.memory import collector_paused

    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # found off, left off
    finally:
        gc.enable()


def test_an_attachment_written_without_its_file_reads_back_with_it(store: SessionStore) -> None:
    """Transcripts from before `Message.attachment` name the file only in the text's first
    line; a reload fills the field from it, so no client has to read the text."""
    session = store.create()
    conversation(session)
    boundary = summary_boundary(session, ["p1", "a1"])
    restored = Message(
        role="user",
        kind="attachment",
        content=[TextBlock(text="Restored file: /w/app.py\nRestored after a compaction.")],
    )
    note = Message(role="user", kind="attachment", content=[TextBlock(text="A note.")])
    boundary.new_messages += [restored, note]
    boundary.view_after += [restored.id, note.id]
    session.commit_boundary(boundary)

    reopened = reopen(store, session.session_id)
    assert reopened.get(restored.id).attachment == Attachment(
        path="/w/app.py", label="Restored file"
    )
    assert reopened.get(note.id).attachment is None  # names no file: nothing made up
    assert reopened.get(restored.id).wire()["attachment"] == {
        "path": "/w/app.py",
        "label": "Restored file",
    }


@pytest.mark.parametrize(
    ("title", "why"),
    [
        ("x" * 201, "at most 200 characters"),
        ("line1\nline2", "one line without control characters"),
        ("bell\x07", "one line without control characters"),
    ],
)
def test_create_takes_the_titles_rename_takes(store: SessionStore, title: str, why: str) -> None:
    with pytest.raises(InvalidParams, match=why):
        store.create(title=title)
    assert store.list() == []
    session = store.create(title="ok")
    with pytest.raises(InvalidParams, match=why):
        store.rename(session.session_id, title)


def test_create_trims_a_title_and_a_blank_one_is_none_given(store: SessionStore) -> None:
    assert store.create(title="  Report bug  ").title == "Report bug"
    assert store.create(title="   ").title == store.create().title
    assert store.create(title="é" * 200).title == "é" * 200  # characters, not bytes
