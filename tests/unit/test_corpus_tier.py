"""The corpus tier: deselected (one line says so) without BATON_CORPUS, selected with it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = "tests/unit/test_claude_code_files.py"
TESTS = [
    f"{FILES}::test_the_corpus_holds_the_files_these_tests_name",  # marked corpus
    f"{FILES}::test_other_agents_trajectories_in_the_corpus_are_rejected",  # marked corpus
    f"{FILES}::test_the_generator_is_reproducible",
]


def pytest_run(corpus: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BATON_CORPUS"}
    if corpus is not None:
        env["BATON_CORPUS"] = corpus
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, *TESTS]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_without_the_corpus_its_tests_are_deselected_and_one_line_says_how_to_run_them() -> None:
    run = pytest_run(None)

    assert run.returncode == 0, run.stdout + run.stderr
    lines = [line for line in run.stdout.splitlines() if "corpus tier" in line]
    assert lines == [
        "corpus tier not selected (2 tests deselected): to run it, set BATON_CORPUS to the "
        "folder of real transcripts, e.g. BATON_CORPUS=../shared/corpus bash scripts/test"
    ]
    assert "1 passed, 2 deselected" in run.stdout
    assert "skipped" not in run.stdout


def test_with_the_corpus_named_its_tests_are_selected(tmp_path: Path) -> None:
    run = pytest_run(str(tmp_path), "--collect-only")

    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 tests collected" in run.stdout
    assert "corpus tier" not in run.stdout


def test_a_corpus_that_is_not_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    run = pytest_run(str(tmp_path / "missing"), "--collect-only")

    assert run.returncode == 4  # pytest's usage error: nothing ran
    assert f"BATON_CORPUS={tmp_path / 'missing'} is not a folder" in run.stderr
