"""What the command line makes of input a user gets slightly wrong, and of a terminal it
did not expect: each is told in the words the user wrote, or drawn to fit."""

from __future__ import annotations

import io

import pytest

from baton.cli.compact_report import ProgressDisplay
from baton.cli.main import EXAMPLE_SESSION, main


@pytest.mark.parametrize("prompt", ["", "  \n"])
def test_an_empty_prompt_is_told_as_the_option_given(
    capsys: pytest.CaptureFixture[str], prompt: str
) -> None:
    """It said "content must not be empty (omit it to continue the conversation)": the
    server's words for a field no user of the command line wrote."""
    assert main(["payload", str(EXAMPLE_SESSION), "--prompt", prompt]) == 2
    err = capsys.readouterr().err
    assert err.startswith("baton: --prompt is empty") and "content" not in err
    assert "leave --prompt out" in err and err.count("\n") == 1


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_narrow_terminal_the_bar_fits_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawn 78 characters wide on a 20-column terminal, each redraw wrapped, and its "\\r"
    cleared only its last row: every step left rows of the bar behind."""
    monkeypatch.setenv("COLUMNS", "20")
    stream = Terminal()
    display = ProgressDisplay(stream)
    display("Summarizing: primary request and intent", 0.5)
    display("Committing", 1.0)
    display.close()
    frames = stream.getvalue().split("\r\x1b[K")
    assert frames[0] == "" and frames[-1] == ""
    assert all(0 < len(frame) < 20 for frame in frames[1:-1]), frames
