"""The `baton` command line: usage and import, the bundled example, and clean errors."""

from __future__ import annotations

import json
import py_compile
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.cli.main import EXAMPLE_SESSION, EXAMPLES_DIR, build_parser, main, plain_serve
from baton.cli.usage_report import BAR_WIDTH, bar
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_with_report
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator, default_estimator
from baton.core.usage.session_usage import compute_usage
from baton_testkit.claude_code_gen import CASES, case
from corpus_names import CORPUS_FILES

CATEGORIES = ("system", "tools", "messages", "summary", "attachments", "unattributed", "free")


@pytest.fixture(scope="module")
def shared_estimator() -> Estimator:
    # the CLI uses the process-wide estimator; the tests compare against the same one
    return default_estimator()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "baton-data"
    monkeypatch.setenv("BATON_DATA_DIR", str(target))
    return target


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Where the CLI's temporary import directories go, so a test can see them vanish."""
    where = tmp_path / "scratch"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    yield where


def expected_usage(path: Path, estimator: Estimator, tmp_path: Path) -> dict[str, object]:
    """The Usage the core computes for a Claude Code file, imported on the side."""
    store = SessionStore(tmp_path / "reference", estimator.count_message)
    try:
        session, _ = import_with_report(path, store)
        return compute_usage(session, Settings(), estimator).wire()
    finally:
        store.close()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---- usage -----------------------------------------------------------------------------------


def test_usage_without_a_file_reports_the_bundled_example(
    capsys: pytest.CaptureFixture[str],
    shared_estimator: Estimator,
    tmp_path: Path,
    scratch: Path,
) -> None:
    want = expected_usage(EXAMPLE_SESSION, shared_estimator, tmp_path)

    code, out, err = run(capsys, "usage")

    assert code == 0 and err == ""
    assert f"Used tokens     {want['usedTokens']:,} (anchored on real API usage" in out
    thresholds = (
        f"warning {want['warningThreshold']:,} · auto-compact {want['autoCompactThreshold']:,} · "
        f"error {want['errorThreshold']:,} · blocking {want['blockingLimit']:,}"
    )
    assert thresholds in out
    assert f"Context window  {want['contextWindow']:,}" in out
    assert f"Effective       {want['effectiveWindow']:,}" in out
    assert f"{want['percentUsed']:.1f}% of the window used" in out
    assert f"{want['percentLeft']}% left until auto-compact" in out
    assert "State           ok" in out
    chart = [line for line in out.splitlines() if line.strip().split(" ")[0] in CATEGORIES]
    assert [line.split()[0] for line in chart] == list(CATEGORIES)
    assert "█" in chart[2]  # the messages bar is drawn
    assert "Plain cl100k count of the view's text:" in out
    assert list(scratch.iterdir()) == []  # the temporary import is gone


def test_usage_json_is_the_usage_wire_object(
    capsys: pytest.CaptureFixture[str], shared_estimator: Estimator, tmp_path: Path
) -> None:
    want = expected_usage(EXAMPLE_SESSION, shared_estimator, tmp_path)

    code, out, _ = run(capsys, "usage", str(EXAMPLE_SESSION), "--json")

    assert code == 0
    got = json.loads(out)
    # the file's session: the test below
    session_keys = {"sessionId", "claudeCodeSessionIds"}
    assert {k: v for k, v in got.items() if k not in session_keys} == {
        k: v for k, v in want.items() if k not in session_keys
    }
    assert got["estimated"] is False
    breakdown = got["breakdown"]
    assert sum(breakdown[c] for c in CATEGORIES) == got["contextWindow"]


def test_usage_json_of_a_claude_code_file_names_its_own_session_not_a_temporary_one(
    capsys: pytest.CaptureFixture[str], shared_estimator: Estimator, tmp_path: Path
) -> None:
    """`sessionId` was the random id of the file's temporary import, a new one each run,
    naming no session anywhere; a Baton transcript's is its own."""
    code, out, _ = run(capsys, "usage", str(EXAMPLE_SESSION), "--json")
    assert code == 0
    got = json.loads(out)
    assert got["sessionId"] is None
    assert got["claudeCodeSessionIds"] == ["7c3f2a9e-5b1d-4e8a-9f64-2d0b8c1e7a53"]

    store = SessionStore(tmp_path / "data", shared_estimator.count_message)
    session = store.create(title="Native session")
    store.close()
    code, out, _ = run(capsys, "usage", str(session.transcript.path), "--json")
    assert code == 0
    native = json.loads(out)
    assert native["sessionId"] == session.session_id
    assert "claudeCodeSessionIds" not in native


def test_usage_model_option_changes_the_window(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "usage", "--json", "--model", "claude-sonnet-4-5[1m]")
    assert code == 0
    got = json.loads(out)
    assert got["contextWindow"] == 1_000_000
    assert got["model"] == "claude-sonnet-4-5[1m]"


def test_usage_reads_a_baton_transcript_without_changing_it(
    capsys: pytest.CaptureFixture[str], shared_estimator: Estimator, tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "data", shared_estimator.count_message)
    session = store.create(title="Native session")
    session.append(
        [
            MessageInput(role="user", content="how big is this?"),
            MessageInput(role="assistant", content="small"),
        ]
    )
    path = session.transcript.path
    before = path.read_bytes()
    want = compute_usage(session, Settings(), shared_estimator)

    # the store still holds the writer's lock: usage only reads
    code, out, err = run(capsys, "usage", str(path))

    assert code == 0, err
    assert "Native session" in out and "(Baton transcript)" in out
    assert f"Used tokens     {want.used_tokens:,} (estimated" in out
    assert path.read_bytes() == before
    store.close()


def test_usage_of_a_claude_code_file_matches_the_core_figures(
    capsys: pytest.CaptureFixture[str],
    shared_estimator: Estimator,
    tmp_path: Path,
) -> None:
    path = case("old-summary-first-array").write(tmp_path / "chat.json")
    want = expected_usage(path, shared_estimator, tmp_path)

    code, out, _ = run(capsys, "usage", str(path))

    assert code == 0
    assert f"Used tokens     {want['usedTokens']:,}" in out
    assert "2 Claude Code session ids joined in one session" in out


@pytest.mark.corpus
def test_usage_of_a_corpus_file_matches_the_core_figures(
    capsys: pytest.CaptureFixture[str],
    corpus_dir: Path,
    shared_estimator: Estimator,
    tmp_path: Path,
) -> None:
    path = corpus_dir / "kesslerio__attio-mcp-server__chat.json"
    want = expected_usage(path, shared_estimator, tmp_path)

    code, out, _ = run(capsys, "usage", str(path))

    assert code == 0
    assert f"Used tokens     {want['usedTokens']:,}" in out
    assert "2 Claude Code session ids joined in one session" in out


# ---- import ----------------------------------------------------------------------------------


def test_import_creates_a_session_in_the_data_dir(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    code, out, err = run(capsys, "import", str(EXAMPLE_SESSION), "--title", "Expenses")

    assert code == 0, err
    session_id = out.split(" as session ")[1].split()[0]
    store = SessionStore(data_dir, lambda m: 0)
    session = store.get(session_id)
    assert session.title == "Expenses"
    assert f"Messages   {len(session.view)} in the view" in out
    assert str(session.transcript.path) in out
    assert invariant_violations(session.view_messages()) == []
    store.close()


# ---- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["usage", "/no/such/file.jsonl"], "no such file"),
        (["import", "/no/such/file.jsonl"], "no such file"),
        (["usage", "/"], "is a directory"),
        # a name holding a line break (or another control character) is told escaped: the
        # error was as many lines as the name
        (["usage", "/no/such\nfile\r.jsonl"], "no such file: /no/such\\nfile\\r.jsonl"),
        (["import", "/no/such\x1b[2Jfile"], "no such file: /no/such\\x1b[2Jfile"),
        (["compact", str(EXAMPLE_SESSION), "--workspace", "/no\nws"], "folder: /no\\nws"),
    ],
)
def test_errors_are_one_line_on_stderr_with_exit_code_2(
    capsys: pytest.CaptureFixture[str], data_dir: Path, argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("baton: ") and needle in err


def test_a_bad_file_is_rejected_cleanly_and_nothing_is_imported(
    capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path, scratch: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not a session\n")

    for command in ("usage", "import"):
        code, out, err = run(capsys, command, str(bad))
        assert code == 2 and out == ""
        assert err.startswith("baton: ") and "Traceback" not in err

    assert not (data_dir / "sessions").exists() or list((data_dir / "sessions").iterdir()) == []
    assert list(scratch.iterdir()) == []


def test_no_command_or_a_bad_option_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["usage", "--no-such-option"]) == 2
    assert main(["--version"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    ("argv", "told"),
    [
        (["usage", "--bogus"], "baton usage: unrecognized arguments: --bogus"),
        (["compact"], "baton compact: the following arguments are required: file"),
        (["nosuch"], "baton: argument COMMAND: invalid choice: 'nosuch'"),
        (["serve", "--log-level", "LOUD"], "baton serve: argument --log-level: invalid choice"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_help(
    capsys: pytest.CaptureFixture[str], argv: list[str], told: str
) -> None:
    """README: errors are one line on stderr. A usage error printed the whole usage block
    first (seven lines for compact), then 'baton compact: error: ...'."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(told) and err.count("\n") == 1, err
    command = told.split(":")[0]
    assert err.endswith(f" (see `{command} --help`)\n")


def test_serve_alone_is_what_the_parser_makes_of_it_without_the_parser() -> None:
    assert vars(build_parser().parse_args(["serve"])) == vars(plain_serve())


def test_the_console_entry_point_runs_as_a_subprocess() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "baton", "usage", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["usedTokens"] > 0
    assert "Traceback" not in done.stderr


# ---- the bundled example and the chart ---------------------------------------------------------


def test_the_bundled_example_is_a_realistic_coding_session(
    shared_estimator: Estimator, tmp_path: Path
) -> None:
    store = SessionStore(tmp_path / "data", shared_estimator.count_message)
    session, report = import_with_report(EXAMPLE_SESSION, store)
    messages = session.view_messages()
    tokens = sum(m.tokens for m in messages)
    errors = [r for m in messages for r in m.tool_results() if r.is_error]
    touched = {
        str(u.input.get("file_path", "")).rsplit("/", 1)[-1]
        for m in messages
        for u in m.tool_uses()
        if isinstance(u.input, dict)
    }

    assert 30 <= len(messages) <= 60
    assert 20_000 <= tokens <= 40_000
    assert report.tool_pairs >= 15 and len(errors) >= 2
    assert {"app.py", "utils.py"} <= touched
    assert report.problems == [] and report.repairs == [] and report.broken_lines == []
    assert session.anchor() is not None
    store.close()


@pytest.mark.parametrize("name", ["app.py", "utils.py"])
def test_the_example_workspace_files_are_valid_python(name: str, tmp_path: Path) -> None:
    source = EXAMPLES_DIR / "workspace" / name
    py_compile.compile(str(source), cfile=str(tmp_path / f"{name}c"), doraise=True)


def test_bars_scale_with_their_share_and_never_hide_a_nonzero_value() -> None:
    assert bar(0, 100) == ""
    assert bar(100, 100) == "█" * BAR_WIDTH
    assert bar(50, 100) == "█" * (BAR_WIDTH // 2)
    assert bar(1, 1_000_000) == "▏"
    assert len(bar(33, 100)) == 14  # 13.2 cells: 13 full and a partial one
    assert bar(200, 100) == "█" * BAR_WIDTH


def estimate_within_15_percent_of_plain_count(out: str) -> None:
    figures = {
        line.split(":")[0].strip(): int(line.split(":")[1].split("tokens")[0].replace(",", ""))
        for line in out.splitlines()
        if line.startswith(("Plain cl100k count", "Estimate of the view alone"))
    }
    plain = figures["Plain cl100k count of the view's text"]
    estimate = figures["Estimate of the view alone"]
    assert plain > 0
    assert abs(estimate - plain) / plain <= 0.15, (estimate, plain)


@pytest.mark.parametrize("name", CASES)
def test_usage_estimates_each_generated_file_within_15_percent_of_a_plain_cl100k_count(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # no PDF prompts: the plain count sees text alone, the estimate a page's 2,000 tokens
    generated = case(name, media=False)
    code, out, _ = run(capsys, "usage", str(generated.write(tmp_path / "session.jsonl")))
    assert code == 0
    estimate_within_15_percent_of_plain_count(out)


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_usage_estimates_each_corpus_file_within_15_percent_of_a_plain_cl100k_count(
    name: str, corpus_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "usage", str(corpus_dir / name))
    assert code == 0
    estimate_within_15_percent_of_plain_count(out)


@pytest.mark.parametrize(
    ("argv", "told"),
    [
        (["usage", ""], "FILE is empty: it names no file"),
        (["import", ""], "FILE is empty: it names no file"),
        (
            ["import", str(EXAMPLE_SESSION), "--data-dir", ""],
            "--data-dir is empty: it names no folder",
        ),
        (
            ["compact", str(EXAMPLE_SESSION), "--workspace", ""],
            "--workspace is empty: it names no folder",
        ),
        (
            ["compact", "s_1", "--apply-draft", "d_1", "--summary-file", ""],
            "--summary-file is empty: it names no file",
        ),
        (
            ["compact", "s_1", "--preview", "--summary-out", ""],
            "--summary-out is empty: it names no file",
        ),
        (["acp", "--settings", ""], "--settings is empty: it names no file"),
        (["acp", "--data-dir", ""], "--data-dir is empty: it names no folder"),
    ],
)
def test_an_empty_name_is_refused_not_taken_for_none(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    argv: list[str],
    told: str,
) -> None:
    """An unset shell variable ('baton usage "$F"') reported the bundled example; --data-dir
    '' imported into the default data dir; --summary-file '' applied the draft unedited;
    --workspace '' compacted without one; '' as a file was '. is a directory'."""
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path / "data"))
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"baton: {told}\n"
    assert not (tmp_path / "data").exists()
