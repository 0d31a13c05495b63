"""How a prompt's text names a slash command of the agent panel, and its argument."""

from __future__ import annotations

import pytest

from baton.acp.commands import Command, parse


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("/compact", Command("compact", "")),
        ("  /context  ", Command("context", "")),
        ("/compact keep the API notes", Command("compact", "keep the API notes")),
        # instructions typed on the next line (a panel's multi-line input), or after a tab:
        # the text went to the model as a prompt, and was stored as one
        ("/compact\nkeep the API notes", Command("compact", "keep the API notes")),
        (
            "/compact\n\n- the API notes\n- the open bug",
            Command("compact", "- the API notes\n- the open bug"),
        ),
        ("/compact-up-to\t5", Command("compact-up-to", "5")),
    ],
)
def test_a_command_is_its_name_then_whatever_follows_the_first_white_space(
    text: str, command: Command
) -> None:
    assert parse(text) == command


@pytest.mark.parametrize(
    "text", ["/", "/ compact", "/compactx", "hi /compact", "/Compact", "compact"]
)
def test_other_text_is_a_prompt(text: str) -> None:
    assert parse(text) is None
