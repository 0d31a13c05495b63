"""An import checks the view it leaves against the API rules: each message from the last
compaction's summary on, once, in the view's order; a message a compaction in the same
batch replaced is not looked at (its rules would be dropped at that compaction), and what
breaks a rule in the view left is reported as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conversations import char_count
from test_import_counts import compaction, said

from baton.core.conversation.invariants import ApiRules
from baton.core.conversation.messages import Message, ToolUseBlock
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_with_report
from baton.core.importers.claude_code_write import StagedTranscript
from baton_testkit.claude_code_gen import generate


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the messages the API rules take in, in order."""
    seen: list[str] = []
    add = ApiRules.add

    def taking(self: ApiRules, message: Message) -> list[str]:
        seen.append(message.id)
        return add(self, message)

    monkeypatch.setattr(ApiRules, "add", taking)
    return seen


def staged_in(tmp_path: Path) -> tuple[StagedTranscript, dict[str, Any]]:
    store = SessionStore(tmp_path / "data", char_count)
    store.sessions_dir.mkdir(parents=True)
    staged = StagedTranscript(store, char_count)
    return staged, {"type": "session", "format": 1, "sessionId": staged.session_id, "model": "m"}


def calls(mid: str) -> Message:
    """A reply whose call is never answered: a prompt after it breaks a rule."""
    return Message(id=mid, role="assistant", content=[ToolUseBlock(id=f"toolu_{mid}", name="R")])


def test_a_batch_checks_the_messages_after_its_last_compaction_only(
    tmp_path: Path, checked: list[str]
) -> None:
    staged, header = staged_in(tmp_path)
    # what comes before the compaction breaks a rule (a reply first, a call left open)
    first = [calls("a"), said("b"), compaction(["a", "b"], "s1"), said("c")]
    staged.write([*first, compaction(["s1", "c"], "s2"), said("d")], header)
    assert checked == ["s2", "d"]
    assert staged.rules.problems == []
    staged.write([said("e"), calls("f")], header)  # no compaction: the rules go on
    staged.write([said("g")], header)
    assert checked == ["s2", "d", "e", "f", "g"]
    assert staged.rules.problems == [
        "f: tool_use toolu_f is unanswered before the next user prompt"
    ]
    staged.abort()


def test_an_import_checks_the_view_it_leaves_once(tmp_path: Path, checked: list[str]) -> None:
    path = generate(4, era="newest", compactions=3, turns=30).write(tmp_path / "file.jsonl")
    store = SessionStore(tmp_path / "data", char_count)
    session, report = import_with_report(path, store)
    assert report.boundaries >= 3 and report.problems == []
    assert len(checked) == len(set(checked))  # once each
    assert set(session.view) <= set(checked)  # the view left, all of it
    compactions = [b for b in session.boundaries.values() if b.summary_id is not None]
    assert checked[0] == compactions[-1].summary_id  # from the last one's summary on
    assert len(checked) < len(session.messages)
    store.close()
