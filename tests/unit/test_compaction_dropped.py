"""What a compaction dropped: messages summarized, tool results cleared, files not
restored and why, facts only the ledger carries and facts lost."""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_compaction_drafts import conversation

from baton.core.compaction.dropped import check_facts, dropped
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.conversation.boundary import SkippedFile
from baton.core.conversation.messages import (
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.service.service import BatonService
from baton.core.settings import KeepWindowSettings, RestoreSettings, Settings
from baton_testkit.services import service_with_open_file


def _span() -> list[Message]:
    call = ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "/src/kept_out.py"})
    return [
        Message(role="user", content=[TextBlock(text="Rename the parser module please")]),
        Message(role="assistant", content=[call]),
        Message(
            role="user",
            content=[
                ToolResultBlock(
                    tool_use_id="toolu_1", content="Error: permission denied", is_error=True
                )
            ],
        ),
        Message(role="assistant", content=[TextBlock(text="Renamed.")]),
    ]


def test_facts_are_in_the_summary_in_the_ledger_or_lost() -> None:
    span = _span()
    skipped = [SkippedFile(uri="file:///k.pem", reason="looks like a credential")]
    everything = dropped(
        span,
        [],
        "Did: Rename the parser module please; read /src/kept_out.py. Error: permission denied",
        None,
        [],
    )
    assert everything.not_in_summary.count == 0 and everything.lost.count == 0
    assert everything.tool_results_cleared == 1 and everything.messages_summarized == 4

    ledger = "## Facts\n- Rename the parser module please"
    went = dropped(span, [], "Something else entirely.", ledger, skipped)
    assert went.not_in_summary.count == 3  # the prompt, the path and the error
    assert went.not_in_summary.paths == ["/src/kept_out.py"]
    assert went.lost.count == 2 and went.lost.prompts == []  # the ledger kept the prompt
    assert went.lost.errors and went.files_not_restored == skipped
    assert went.lines == [
        "4 messages summarized",
        "1 tool result cleared",
        "not restored: file:///k.pem (looks like a credential)",
        '3 facts only in the fact ledger: "Rename the parser module please"; /src/kept_out.py; '
        + went.not_in_summary.errors[0],
        "2 facts lost (the ledger had no room): /src/kept_out.py; " + went.lost.errors[0],
    ]
    assert went.text == (
        "Summarized 4 messages, cleared 1 tool result; 1 file not restored (looks like a "
        "credential); 3 facts only in the ledger; 2 facts lost (the ledger had no room)"
    )


def test_facts_checked_ahead_give_what_the_commit_would_find() -> None:
    """The facts checked off the event loop (`check_facts`) give the same report as the
    check at the commit, for the paths a restore then keeps too; made with another summary
    or ledger, they are not used."""
    span = _span()
    facts = SpanFacts.extract(span)
    summary, ledger = "Something else entirely.", "## Facts\n- Rename the parser module please"
    ahead = check_facts(facts, [], summary, ledger)
    for restored in ([], ["/src/kept_out.py"]):
        found = dropped(span, [], summary, ledger, [], facts, restored)
        assert dropped(span, [], summary, ledger, [], facts, restored, ahead) == found
    stale = check_facts(facts, [], "Rename the parser module please", None)
    assert dropped(span, [], summary, ledger, [], facts, (), stale) == dropped(
        span, [], summary, ledger, [], facts
    )


def test_every_compaction_result_says_what_went(tmp_path: Path) -> None:
    service = BatonService(
        Settings(
            data_dir=str(tmp_path / "data"),
            keep_window=KeepWindowSettings(min_tokens=500, min_text_messages=2, max_tokens=3_000),
        )
    )
    sid = conversation(service)
    result = asyncio.run(service.compaction.compact(sid, CompactRequest("all")))
    went = result.dropped
    assert went is not None
    assert went.messages_summarized == len(result.summarized_message_ids)
    assert went.tool_results_cleared > 0 and went.text.startswith("Summarized")
    dry = asyncio.run(service.compaction.compact(sid, CompactRequest("all", dry_run=True)))
    assert dry.dropped is not None


def test_a_file_restored_again_is_not_reported_gone_nor_carried_by_the_ledger(
    tmp_path: Path,
) -> None:
    # the second compaction summarizes the first one's restored copy of app.py and restores
    # it again, yet said "1 fact only in the fact ledger: .../app.py" and wrote a ledger for
    # it (retention: 0 of 1 paths kept), as if the file had left the model's view
    service, source = service_with_open_file(tmp_path)
    sid = conversation(service, turns=12)
    first = asyncio.run(service.compaction.compact(sid, CompactRequest("all")))
    assert [f.uri for f in first.restored_files] == [source.as_uri()]
    service.append(sid, [MessageInput(role="user", content="Carry on with the parser.")])
    service.append(sid, [MessageInput(role="assistant", content="On it. " * 600)])
    service.append(sid, [MessageInput(role="user", content="And the tests.")])
    service.append(sid, [MessageInput(role="assistant", content="Done. " * 600)])

    draft = asyncio.run(service.drafts.preview(sid, CompactRequest("all")))
    second = asyncio.run(service.compaction.compact(sid, CompactRequest("all")))

    assert first.restored_files[0].uri in [f.uri for f in second.restored_files]
    for went, retention, ledger in (
        (draft.dropped, draft.retention, draft.ledger or ""),
        (second.dropped, second.retention, second.summary or ""),
    ):
        assert went is not None and retention is not None
        assert str(source) not in "\n".join(went.lines)
        assert retention.paths.kept == retention.paths.total
        assert str(source) not in ledger


def test_every_file_a_restore_left_out_is_reported_with_its_reason(tmp_path: Path) -> None:
    # only the files left out for their name, text or URI were listed: the file limit, the
    # budget, a binary file and a file outside the workspace left theirs out without a word
    workspace, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    restore = RestoreSettings(max_files=3, max_tokens_per_file=2_000, total_tokens=3_000)
    workspace.mkdir()
    elsewhere.mkdir()
    service = BatonService(
        Settings(
            data_dir=str(tmp_path / "data"),
            keep_window=KeepWindowSettings(min_tokens=500, min_text_messages=2, max_tokens=3_000),
            restore=restore,
        )
    )
    service.set_workspace_folders([workspace.as_uri()])
    names = ["old.py", "mid.py", "big.py", "small.py", "blob.bin", "outside.py"]
    paths = {name: (elsewhere if name == "outside.py" else workspace) / name for name in names}
    paths["old.py"].write_text("OLD = 1\n")
    paths["mid.py"].write_text("MID = 1\n")
    paths["big.py"].write_text("value = 'a long line of text'\n" * 2_000)  # cut to 2,000
    paths["small.py"].write_text("SMALL = 1\n" * 500)  # cut to what is left
    paths["blob.bin"].write_bytes(b"\x00\x01binary\x00" * 50)
    paths["outside.py"].write_text("OUTSIDE = 1\n")
    for name in names:  # the last focused is the newest
        service.editor_files.focused(paths[name].as_uri())
    sid = conversation(service, turns=12)
    one = RestoreSettings(max_files=1, max_tokens_per_file=2_000, total_tokens=3_000)
    service.settings = service.settings.model_copy(update={"restore": one})
    dry = asyncio.run(service.compaction.compact(sid, CompactRequest("all", dry_run=True)))
    assert [f.uri for f in dry.restored_files] == [paths["small.py"].as_uri()]
    assert dry.dropped is not None
    limited = {f.uri: f.reason for f in dry.dropped.files_not_restored}
    for name in ("big.py", "mid.py", "old.py"):
        assert "file limit" in limited[paths[name].as_uri()], limited
    service.settings = service.settings.model_copy(update={"restore": restore})

    result = asyncio.run(service.compaction.compact(sid, CompactRequest("all")))

    restored = {f.uri for f in result.restored_files}
    assert restored == {paths["big.py"].as_uri(), paths["small.py"].as_uri()}
    assert result.dropped is not None
    reasons = {f.uri: f.reason for f in result.dropped.files_not_restored}
    assert set(reasons) == {
        paths[n].as_uri() for n in ("old.py", "mid.py", "blob.bin", "outside.py")
    }
    assert "binary" in reasons[paths["blob.bin"].as_uri()]
    assert "outside the workspace" in reasons[paths["outside.py"].as_uri()]
    assert "budget" in reasons[paths["mid.py"].as_uri()]  # the two restored used it up
    assert "budget" in reasons[paths["old.py"].as_uri()]
    assert result.skipped_files == []  # those are for a file's name, text or URI
    assert any("outside.py" in line for line in result.dropped.lines)
