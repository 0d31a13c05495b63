"""Prompts edited in Claude Code: the file keeps the turns the user left beside the ones they
went on with (a typed prompt under the parent of an earlier one), and the import's view is
the branch Claude Code resumes, the left one rewound out of it (undo brings it back)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_claude_code_formats import SUMMARY, record, write

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers import claude_code
from baton.core.importers.claude_code import ImportReport, import_with_report
from baton.core.importers.claude_code_boundaries import RESTARTED


def text(words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


def call(use_id: str) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": use_id, "name": "Read", "input": {"file_path": "/a.py"}}]


def result(use_id: str) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": use_id, "content": "x = 1"}]


def imported(
    tmp_path: Path, store: SessionStore, records: list[dict[str, Any]]
) -> tuple[Session, ImportReport]:
    return import_with_report(write(tmp_path / "edited.jsonl", records), store)


def rewinds(session: Session) -> list[str]:
    return [b for b in session.active if session.boundaries[b].direction == "rewind"]


EDITED = [
    record("user", "u1", "read a.py", None),
    record("assistant", "a1", text("It sets x."), "u1"),
    record("user", "u2", "now make x two", "a1"),
    record("assistant", "a2", call("toolu_2"), "u2"),
    record("user", "r2", result("toolu_2"), "a2"),
    record("assistant", "a3", text("Done: x is 2."), "r2"),
    record("user", "u2b", "now make x three", "a1"),  # the prompt u2, edited
    record("assistant", "a2b", text("Done: x is 3."), "u2b"),
]


def test_an_edited_prompt_leaves_the_turns_it_replaced_out_of_the_view(
    tmp_path: Path, store: SessionStore
) -> None:
    session, report = imported(tmp_path, store, EDITED)

    assert session.view == ["u1", "a1", "u2b", "a2b"]  # what Claude Code resumes
    assert report.edits == 1 and report.boundaries == 0 and session.compactions == 0
    assert any("1 prompt(s) edited in Claude Code" in note for note in report.notes())
    (rewind,) = rewinds(session)
    assert session.boundaries[rewind].summarized_ids == ["u2", "a2", "r2", "a3"]
    assert all(message.tokens > 0 for message in session.view_messages())

    session.uncompact(rewind)  # nothing is lost: the left turns come back, before the edit
    assert session.view == ["u1", "a1", "u2", "a2", "r2", "a3", "u2b", "a2b"]


@pytest.mark.parametrize("batch", [2, claude_code.FLUSH_RECORDS])
def test_the_view_read_again_is_the_imported_one_with_its_counts(
    tmp_path: Path, store: SessionStore, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """Written in one batch (the edit's rewind among the entries before it) or in batches
    of two records (it falls between two writes), the view is stored counted, and a fresh
    read of the transcript gives the same view."""
    monkeypatch.setattr(claude_code, "FLUSH_RECORDS", batch)
    session, _ = imported(tmp_path, store, EDITED)
    stored = [json.loads(line) for line in session.transcript.path.read_text().splitlines()]
    tokens = {
        e["message"]["id"]: e["message"].get("tokens", 0) for e in stored if e["type"] == "message"
    }

    assert all(tokens[mid] > 0 for mid in session.view)
    store.close()
    again = SessionStore(store.data_dir, store.count).get(session.session_id)
    assert again.view == session.view == ["u1", "a1", "u2b", "a2b"]


def test_the_turns_an_edit_rewound_out_are_stored_uncounted_and_counted_once_back(
    tmp_path: Path, store: SessionStore
) -> None:
    """Written in the batch that holds the edit, the turns it left are out of the view
    before they are written: no count (a file of many conversations or edits would count
    every one it leaves); undoing the rewind counts them as a count on import would have."""
    asked: list[str] = []

    def count(message: Any) -> int:
        asked.append(message.id)
        return store.count(message)

    counting = SessionStore(tmp_path / "counting", count)
    session, _ = imported(tmp_path, counting, EDITED)
    stored = [json.loads(line) for line in session.transcript.path.read_text().splitlines()]
    tokens = {
        e["message"]["id"]: e["message"].get("tokens", 0) for e in stored if e["type"] == "message"
    }

    left = ["u2", "a2", "r2", "a3"]
    assert [tokens[mid] for mid in left] == [0, 0, 0, 0]
    assert not set(asked) & set(left)
    assert all(tokens[mid] == store.count(session.messages[mid]) > 0 for mid in session.view)
    (rewind,) = rewinds(session)
    session.uncompact(rewind)
    assert [m.tokens for m in session.view_messages()] == [
        store.count(m) for m in session.view_messages()
    ]
    assert all(m.tokens > 0 for m in session.view_messages())
    counting.close()


def first_edited(reply: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first prompt answered with `reply`, then edited (a second prompt with no parent)
    and answered again."""
    return [
        record("user", "u1", "first question", None),
        record("assistant", "a1", reply, "u1"),
        record("user", "u1b", "the first question, edited", None),
        record("assistant", "a1b", text("another answer"), "u1b"),
    ]


def test_the_first_prompt_edited_starts_the_view_again(tmp_path: Path, store: SessionStore) -> None:
    """A second prompt with no parent, in a file with no old compaction (after one, it is a
    restart: `test_claude_code_formats`): the first prompt, edited."""
    session, report = imported(tmp_path, store, first_edited(text("first answer")))

    assert session.view == ["u1b", "a1b"]  # an edit, not a restart: no compaction, no note
    assert session.title == "the first question, edited"  # the prompt it began with now
    assert report.edits == 1 and report.boundaries == 0
    assert not any(m.text() == RESTARTED for m in session.messages.values())


def test_another_conversation_in_the_file_is_told_as_one_not_as_an_edit(
    tmp_path: Path, store: SessionStore
) -> None:
    """Two sessions in one file (written one after the other, or put together): the second
    one's first prompt has no parent either, like the first prompt edited, but under
    another session id. The view is the conversation Claude Code resumes, the later one,
    and the note says why the first is out of it."""
    records = first_edited(text("first answer"))
    for later in records[2:]:
        later["sessionId"] = "cc-2"

    session, report = imported(tmp_path, store, records)

    assert session.view == ["u1b", "a1b"]
    assert report.edits == 0
    assert report.notes() == [
        "2 Claude Code session ids joined in one session",
        "record u1b starts another conversation (session cc-2, no parent): the turns before "
        "it are out of the view, as a rewind (undo brings them back)",
    ]
    session.uncompact(rewinds(session)[0])
    assert session.view == ["u1", "a1", "u1b", "a1b"]


def test_a_call_left_open_in_the_left_branch_is_answered_there(
    tmp_path: Path, store: SessionStore
) -> None:
    """The user stopped a tool call and edited their prompt: the view keeps the API's rules,
    with the branch left and with it brought back."""
    session, _ = imported(tmp_path, store, first_edited(call("toolu_1")))

    assert session.view == ["u1b", "a1b"]
    assert invariant_violations(session.view_messages()) == []
    session.uncompact()
    assert session.view[:2] == ["u1", "a1"] and session.view[-2:] == ["u1b", "a1b"]
    assert invariant_violations(session.view_messages()) == []


def test_forks_that_are_no_edit_change_nothing(tmp_path: Path, store: SessionStore) -> None:
    """Parallel tool calls fork the chain under assistant records and results, a record
    written twice shares its parent with itself, and meta records are not typed: none of
    them is an edit."""
    records = [
        record("user", "u1", "read both", None),
        record("assistant", "a1", call("toolu_a"), "u1"),
        record("assistant", "a1", call("toolu_b"), "u1"),  # the same response, a fork
        record("user", "r1", result("toolu_a"), "a1"),
        record("user", "r2", result("toolu_b"), "a1"),
        record("assistant", "a2", text("Both read."), "r2"),
        record("user", "m1", "Caveat: local commands follow", "a2", isMeta=True),
        record("user", "u2", "thanks", "a2"),
        record("user", "u2", "thanks", "a2"),  # written twice
        record("assistant", "a3", text("You are welcome."), "u2"),
    ]
    session, report = imported(tmp_path, store, records)

    assert report.edits == 0 and not rewinds(session)
    assert [m for m in session.view if m in ("u1", "r1", "r2", "a2", "u2", "a3")] == [
        "u1",
        "r1",
        "r2",
        "a2",
        "u2",
        "a3",
    ]


def test_an_edit_of_a_prompt_a_compaction_summarized_is_imported_in_order(
    tmp_path: Path, store: SessionStore
) -> None:
    records = [
        record("user", "u1", "first question", None),
        record("assistant", "a1", text("first answer"), "u1"),
        record("user", "u2", "second question", "a1"),
        record("assistant", "a2", text("second answer"), "u2"),
        record("user", "s1", text(SUMMARY), None, isCompactSummary=True),
        record("user", "u3", "after the summary", "s1"),
        record("user", "u2b", "second question, edited", "a1"),
        record("assistant", "a4", text("an answer"), "u2b"),
    ]
    session, report = imported(tmp_path, store, records)

    assert report.edits == 0
    assert any("edits prompt u2, which a later compaction summarized" in p for p in report.problems)
    assert session.view == ["s1", "u3", "u2b", "a4"]
