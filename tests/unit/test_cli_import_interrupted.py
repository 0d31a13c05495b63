"""`baton import` stopped (Ctrl-C, SIGTERM) before it said what it imported leaves nothing
in the data dir, as a cancelled import over LSP leaves nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_draft_signals import WAITING_AT, stopped_waiting

from baton.cli.main import EXAMPLE_SESSION


def stopped(data: Path, hook: str, stop: signal.Signals) -> tuple[int, bytes, bytes]:
    """The import's exit code, stdout and stderr, stopped by `stop` at `hook`, before it."""
    module, _, name = hook.rpartition(":")
    argv = ["import", str(EXAMPLE_SESSION), "--data-dir", str(data)]
    program = [WAITING_AT, module, name, "before", *argv]
    return stopped_waiting(program, stop, "the import")


@pytest.mark.parametrize(
    "hook",
    [
        # the new transcript is in place under its session's name, and is read as a session
        "baton.core.importers.claude_code_write:StagedTranscript.opened",
        # the session is made: its usage is worked out for the line that names it
        "baton.core.usage.session_usage:compute_usage",
    ],
)
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_an_import_stopped_before_it_names_its_session_leaves_none(
    tmp_path: Path, hook: str, stop: signal.Signals
) -> None:
    """Stopped once its transcript was in place, the import ended with 130 (or 143) and
    said nothing, and the session stayed in the data dir: the user, told the import was
    stopped, found it in the editor's list, and a second `baton import` did nothing
    ("Already imported")."""
    data = tmp_path / "data"
    code, out, err = stopped(data, hook, stop)
    assert code == 128 + stop, err
    assert b"Traceback" not in err and out == b"", err
    assert [p.name for p in (data / "sessions").iterdir() if not p.name.startswith(".")] == []
    done = subprocess.run(
        [sys.executable, "-m", "baton", "import", str(EXAMPLE_SESSION), "--data-dir", str(data)],
        capture_output=True,
        check=True,
    )
    assert done.stdout.startswith(b"Imported "), done.stdout
