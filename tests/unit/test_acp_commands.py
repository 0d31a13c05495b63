"""How a prompt's text names a slash command of the agent panel, and its argument."""

from __future__ import annotations

import pytest
from acp import RequestError

from baton.acp.commands import Command, parse, resolve
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore


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


@pytest.fixture
def three(store: SessionStore) -> Session:
    session = store.create("odd", "claude-haiku-4-5")
    session.append([MessageInput(role="user", content=f"prompt {n}") for n in range(3)])
    return session


@pytest.mark.parametrize("reference", ["²", "⑤", "1²"])
def test_a_digit_that_is_no_number_names_no_message(three: Session, reference: str) -> None:
    """'²' and '⑤' are digits to str.isdigit but no number to int(): `/pin ²` was an
    internal error."""
    with pytest.raises(RequestError) as refused:
        resolve(three, reference)
    assert refused.value.data == {"code": "invalid_params"}


def test_a_number_in_other_decimal_digits_names_its_message(three: Session) -> None:
    assert resolve(three, "٣").id == three.view[2]  # Arabic-Indic three


def test_a_compactions_sentence_says_the_figure_after_it_is_estimated() -> None:
    """As auto-compact's sentence and the meter (its "~") say it: the context after a
    compaction is an estimate until the next reply."""
    from baton.acp.compaction_report import done_sentence
    from baton.core.compaction.result import CompactResult

    result = CompactResult(
        boundary_id="b1",
        direction="all",
        summary="s",
        summarized_message_ids=["m1", "m2"],
        pre_tokens=11_200,
        post_tokens=2_300,
    )
    assert done_sentence(result) == (
        "Compacted 2 messages: 11,200 -> 2,300 tokens (estimated). /undo-compact puts them back."
    )


@pytest.mark.parametrize(("estimated", "said"), [(True, " (estimated)"), (False, "")])
def test_an_undos_sentence_says_when_the_figure_after_it_is_estimated(
    estimated: bool, said: str
) -> None:
    """An undo that leaves a later reply's usage stale leaves an estimate: said so, as the
    meter's "~" says it; one the last reply's usage anchors again is said bare."""
    from baton.acp.compaction_report import undone_sentence
    from baton.core.usage.budget import Breakdown
    from baton_testkit.usage_figures import sonnet_usage

    usage = sonnet_usage(
        12_000,
        percent_used=6,
        percent_left=93,
        estimated=estimated,
        breakdown=Breakdown(messages=12_000, free=188_000),
    )
    assert undone_sentence(2_300, usage) == (
        f"Undid the latest compaction: 2,300 -> 12,000 tokens{said}."
    )
