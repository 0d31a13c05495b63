"""What the command line makes of input a user gets slightly wrong, and of a terminal it
did not expect: each is told in the words the user wrote, or drawn to fit."""

from __future__ import annotations

import pytest

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
