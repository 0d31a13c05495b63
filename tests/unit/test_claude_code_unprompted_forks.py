"""Two Claude Code processes on one session whose branches fork at something else than a
typed prompt: a terminal's /compact begins its branch with a compact_boundary, a slash
command with a meta record. The view is still the chain Claude Code resumes, the other
branch kept out of it; a parallel call's result off the chain is no such branch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_claude_code_edits import call, imported, result, text
from test_claude_code_formats import SUMMARY, record

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.store import SessionStore

SHARED = [
    record("user", "u1", "read a.py", None),
    record("assistant", "a1", text("It sets x."), "u1"),
]
B_TURN = [
    record("user", "pB", "now make x three", "a1"),
    record("assistant", "aB", call("toolu_B"), "pB"),
    record("user", "rB", result("toolu_B"), "aB"),
    record("assistant", "dB", text("Done: x is 3."), "rB"),
]


def compacted_in_a() -> list[dict[str, Any]]:
    """Terminal A runs /compact straight away, no prompt typed: its compact_boundary (no
    parent, its logical parent the shared reply) and its summary."""
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "cA",
        "parentUuid": None,
        "logicalParentUuid": "a1",
        "sessionId": "cc-1",
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "manual", "preTokens": 900},
    }
    return [boundary, record("user", "sA", text(SUMMARY), "cA", isCompactSummary=True)]


def command_in_a() -> list[dict[str, Any]]:
    """Terminal A runs a slash command (a meta caveat first), then types a prompt."""
    return [
        record(
            "user", "mA", "<local-command-caveat>Caveat</local-command-caveat>", "a1", isMeta=True
        ),
        record("user", "cmdA", "<command-name>/model</command-name>", "mA"),
        record("user", "pA", "now make x two", "cmdA"),
        record("assistant", "dA", text("Done: x is 2."), "pA"),
    ]


@pytest.mark.parametrize("a_branch", [compacted_in_a, command_in_a])
def test_a_branch_of_the_other_terminal_not_begun_by_a_prompt_is_left_out(
    tmp_path: Path, store: SessionStore, a_branch: Any
) -> None:
    """B types a prompt under the shared reply and goes on, written last; A's branch from
    the same reply is written among B's records. A's compaction went into B's view in
    file order (its summary standing for B's own prompt), as did A's command and turn."""
    a = a_branch()
    records = [*SHARED, B_TURN[0], a[0], B_TURN[1], *a[1:], *B_TURN[2:]]
    session, report = imported(tmp_path, store, records)

    assert session.view == ["u1", "a1", "pB", "aB", "rB", "dB"]
    assert session.compactions == 0 and report.edits == 0
    assert [r.get("uuid") for r in session.opaque] == [r["uuid"] for r in a]
    assert report.beside == len(a)
    assert (
        f"{len(a)} record(s) of another branch from the chain Claude Code resumes, which goes "
        "on in the file beside it (Claude Code run twice on the session, or an earlier branch "
        "resumed): kept as opaque, out of the view"
    ) in report.notes()
    assert invariant_violations(session.view_messages()) == []


def test_the_compacting_terminal_written_last_is_the_view(
    tmp_path: Path, store: SessionStore
) -> None:
    """A compacts without a prompt, then goes on after B's turn: A's chain is the view,
    through its compaction, and B's turn is kept out of it."""
    after = [record("user", "qA", "and z?", "sA"), record("assistant", "zA", text("z."), "qA")]
    records = [*SHARED, B_TURN[0], *compacted_in_a(), *B_TURN[1:], *after]
    session, report = imported(tmp_path, store, records)

    assert session.view == ["sA", "qA", "zA"] and session.compactions == 1
    assert report.beside == len(B_TURN) and report.edits == 0
    assert [r.get("uuid") for r in session.opaque] == [r["uuid"] for r in B_TURN]
    session.uncompact()
    assert session.view == ["u1", "a1", "qA", "zA"]
    assert invariant_violations(session.view_messages()) == []


def test_a_parallel_calls_result_off_the_chain_stays_in_the_view(
    tmp_path: Path, store: SessionStore
) -> None:
    """Parallel calls: each result under the record of its own call, the first call's
    result written after the second call, off the chain the next reply goes on from. It
    says nothing of its own: no other conversation, and it answers its call."""
    first = record("assistant", "c1", call("toolu_1"), "u1")
    second = record("assistant", "c2", call("toolu_2"), "c1")
    second["message"]["id"] = first["message"]["id"]  # one response, a record per call
    records = [
        record("user", "u1", "read both", None),
        first,
        second,
        record("user", "r1", result("toolu_1"), "c1"),
        record("user", "r2", result("toolu_2"), "c2"),
        record("assistant", "d", text("Both set x."), "r2"),
    ]
    session, report = imported(tmp_path, store, records)

    assert report.beside == 0 and session.opaque == []
    answered = [b.tool_use_id for m in session.view_messages() for b in m.tool_results()]
    assert answered == ["toolu_1", "toolu_2"]
    assert invariant_violations(session.view_messages()) == []


def test_a_compaction_the_other_terminal_made_before_this_one_went_on_is_left_out(
    tmp_path: Path, store: SessionStore
) -> None:
    """A ran /compact and quit (or /resume picked the branch before it) before B typed its
    prompt under the shared reply: no edit stands for A's branch, and the summary went
    into B's view, standing for the turns B goes on from. Claude Code resumes B's chain."""
    a = compacted_in_a()
    session, report = imported(tmp_path, store, [*SHARED, *a, *B_TURN])

    assert session.view == ["u1", "a1", "pB", "aB", "rB", "dB"]
    assert session.compactions == 0 and report.edits == 0
    assert [r.get("uuid") for r in session.opaque] == [r["uuid"] for r in a]
    assert report.beside == len(a)
    assert invariant_violations(session.view_messages()) == []
