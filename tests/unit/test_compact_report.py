"""`baton compact FILE`: the command, its report, its JSON, and its progress display."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conversations import Convo

from baton.cli.compact_report import ProgressDisplay, format_report
from baton.cli.main import EXAMPLE_SESSION, main
from baton.core.compaction.result import CompactResult
from baton.core.compaction.retention.ledger_text import LEDGER_HEADING, LEFT_OUT
from baton.core.conversation.boundary import AdjustedPivot, Retention, RetentionFigure
from baton.core.conversation.store import SessionStore
from baton_testkit.claude_code_gen import case

CLAUDE_FILE = "iansherr__claude-code-log__37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl"


@pytest.fixture(params=["generated", pytest.param("corpus", marks=pytest.mark.corpus)])
def claude_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A Claude Code session file: a generated one, and the real one in the corpus tier."""
    if request.param == "corpus":
        return Path(request.getfixturevalue("corpus_dir")) / CLAUDE_FILE
    return case("old-jsonl").write(tmp_path / "session.jsonl")


def baton_transcript(store: SessionStore) -> tuple[Path, list[str]]:
    c = Convo(tokens=0)
    for n in range(5):
        c.user(f"question {n}")
        c.tools("Read", inputs=[{"file_path": f"/src/f{n}.py"}])
        c.reply(f"answer {n}")
    session = store.create(title="cli")
    session.append(c.messages)
    return session.transcript.path, c.ids


def test_compacting_a_claude_code_file_reports_tokens_counts_retention_and_summary(
    claude_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = claude_file
    before = path.read_bytes()
    assert main(["compact", str(path)]) == 0
    out = capsys.readouterr().out
    assert path.read_bytes() == before
    assert out.startswith(f"Compacted {path} (Claude Code session file")
    tokens = next(line for line in out.splitlines() if line.startswith("Tokens"))
    pre, post = (int(x.replace(",", "")) for x in tokens.split()[1:5:3])
    assert 0 < post < pre
    assert "summarized," in out and "kept," in out and "files restored" in out
    assert "Retention   in the summary: user prompts " in out
    assert "  ## 1. Primary request and intent" in out


def test_json_output_is_the_compact_result(
    claude_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compact", str(claude_file), "--all", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["direction"] == "all" and result["summarizer"] == "extractive"
    assert result["summary"] and result["boundaryId"]
    assert result["summarizedMessageIds"] and result["keptMessageIds"]
    assert result["preTokens"] > result["postTokens"] > 0
    assert set(result["retention"]) == {"prompts", "paths", "errors"}


def test_a_range_of_a_baton_transcript_compacts_a_copy(
    store: SessionStore, capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids = baton_transcript(store)
    store.close()  # as if no server held it
    before = path.read_bytes()
    assert main(["compact", str(path), "--range", ids[4], ids[7], "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["summarizedMessageIds"] == ids[4:8]
    assert result["keptMessageIds"] == ids[:4] + ids[8:]
    assert path.read_bytes() == before


def test_a_dry_run_prints_a_plan_without_a_summary(
    store: SessionStore, capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids = baton_transcript(store)
    assert main(["compact", str(path), "--up-to", ids[3], "--dry-run", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["summary"] is None and result["dryRun"] is True
    assert result["summarizedMessageIds"] == ids[:4]
    assert main(["compact", str(path), "--from", ids[5], "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Dry run of") and "Summary     none" in out


def test_bad_input_is_one_error_line_and_exit_code_2(
    store: SessionStore, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path, _ = baton_transcript(store)
    assert main(["compact", str(path), "--up-to", "nope"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("no message id in the view starts with 'nope' (see `baton show`)")
    )
    assert main(["compact", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["compact", str(path), "--up-to", "a", "--from", "b"]) == 2  # exclusive flags


def test_steps_are_plain_lines_when_stderr_is_not_a_terminal(
    store: SessionStore, capsys: pytest.CaptureFixture[str]
) -> None:
    path, ids = baton_transcript(store)
    assert main(["compact", str(path), "--up-to", ids[3]]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "  Planning the compaction"
    assert "  Committing" in err and "\r" not in "".join(err)
    assert len(err) == len(set(err))


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_progress_is_one_redrawn_bar_cleared_at_the_end() -> None:
    stream = Terminal()
    display = ProgressDisplay(stream)
    display("Planning", 0.0)
    display("Summarizing", 0.5)
    display("Waiting", None)
    display.close()
    frames = stream.getvalue().split("\r\x1b[K")
    assert frames[1].startswith("[........................]   0% Planning")
    assert frames[2].startswith("[############............]  50% Summarizing")
    assert frames[3].startswith("[........................]   0% Waiting")
    assert frames[-1] == "" and "\n" not in stream.getvalue()


def test_the_report_names_a_moved_pivot_and_the_fact_ledger() -> None:
    figure = RetentionFigure(kept=1, total=3)
    result = CompactResult(
        boundary_id="cmp_1",
        direction="up_to",
        summary="## 1. Primary\nline\n\n" + LEDGER_HEADING + "\n- missing prompt",
        summarized_message_ids=["a", "b"],
        kept_message_ids=["c"],
        pre_tokens=1_000,
        post_tokens=250,
        summarizer="extractive",
        adjusted_pivot=AdjustedPivot(requested="a", used="b", why="kept a tool call whole"),
        retention=Retention(prompts=figure, paths=figure, errors=figure),
    )
    text = format_report(result, path=Path("s.jsonl"), kind="baton")
    assert "Tokens      1,000 before -> 250 after (-75%)" in text
    assert "Messages    2 summarized, 1 kept, 0 files restored" in text
    assert "Pivot       a -> b: kept a tool call whole" in text
    assert "user prompts 1/3" in text and "appended as a fact ledger" in text
    assert "  - missing prompt" in text


def test_the_report_says_when_the_ledger_had_to_leave_facts_out() -> None:
    figure = RetentionFigure(kept=0, total=900)
    summary = f"## 1. Primary\n\n{LEDGER_HEADING}\n{LEFT_OUT}: 400 user messages.\n- p1"
    result = CompactResult(
        boundary_id="cmp_2",
        direction="all",
        summary=summary,
        summarized_message_ids=["a"],
        kept_message_ids=[],
        pre_tokens=90_000,
        post_tokens=9_000,
        summarizer="extractive",
        retention=Retention(prompts=figure, paths=figure, errors=figure),
    )
    text = format_report(result, path=Path("s.jsonl"), kind="baton")
    assert "counts what it left out" in text


def test_a_dry_run_tells_the_figure_the_compaction_reports_and_its_warnings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A dry run measures the context after the compaction, its offline summary in, but
    said "N in the kept messages (no summary yet)" and "nothing was summarized", and left
    out its warnings: one whose compaction would be refused as no smaller (a summary
    outweighing the one message it replaces) read as a plan that would do."""
    first = "6f5b626e"  # the bundled example's first message
    assert main(["compact", str(EXAMPLE_SESSION), "--up-to", first, "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    (tokens,) = [line for line in out if line.startswith("Tokens")]
    assert "no summary" not in tokens and "after, the offline summary in" in tokens
    (warning,) = [line for line in out if line.startswith("Warning")]
    assert "would not make the conversation smaller" in warning
    assert "nothing was summarized" not in "\n".join(out)
    # the compaction refuses it, with the dry run's figure
    assert main(["compact", str(EXAMPLE_SESSION), "--up-to", first]) == 2
    after = tokens.split(" -> ")[1].split()[0]
    assert f"{after} after); nothing was changed" in capsys.readouterr().err
    # and a dry run's figure is the one the compaction then reports
    assert main(["compact", str(EXAMPLE_SESSION), "--dry-run"]) == 0
    planned = capsys.readouterr().out
    assert main(["compact", str(EXAMPLE_SESSION)]) == 0
    done = capsys.readouterr().out
    figures = [
        line.split(" -> ")[1].split()[0]
        for report in (planned, done)
        for line in report.splitlines()
        if line.startswith("Tokens")
    ]
    assert figures[0] == figures[1]


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_a_conversation_the_recent_window_holds_says_what_compacts_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dry_run: list[str]
) -> None:
    """It said "the whole conversation fits in the recent window kept verbatim" and no
    more: nothing of --up-to, which compacts it, nor of the window's setting."""
    path = case("newest-recaps").write(tmp_path / "session.jsonl")
    assert main(["compact", str(path), *dry_run]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == (
        "baton: the whole conversation fits in the recent window kept verbatim: --up-to ID "
        "summarizes up to a message `baton show` names, or a smaller keepWindow in "
        "--settings keeps less"
    )
