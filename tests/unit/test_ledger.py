"""Retention figures and the fact ledger: what a summary dropped is found and carried."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.core.compaction.facts import summary_prompts
from baton.core.compaction.ledger import retention
from baton.core.messages import Message, ToolResultBlock, ToolUseBlock, text_message

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/repo/job.py", line 7, in <module>\n'
    "KeyError: 'missing-key'\n"
)


def conversation() -> list[Message]:
    return [
        text_message("user", "Rename the parser module to reader"),
        Message(
            role="assistant",
            content=[ToolUseBlock(id="t1", name="Read", input={"file_path": "/repo/parser.py"})],
        ),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="code")]),
        Message(
            role="assistant",
            content=[ToolUseBlock(id="t2", name="Bash", input={"command": "python job.py"})],
        ),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t2", content=TRACEBACK)]),
        Message(
            role="assistant",
            content=[ToolUseBlock(id="t3", name="Write", input={"file_path": "/repo/x.py"})],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(tool_use_id="t3", content="Permission denied: x.py", is_error=True)
            ],
        ),
        text_message("assistant", "Renamed."),
        text_message("user", "Also update the docs"),
    ]


FULL_SUMMARY = (
    "User said: Rename the parser module to reader. Then: Also update the docs.\n"
    "Files: /repo/parser.py and /repo/x.py.\n"
    "Errors: KeyError: 'missing-key' and Permission denied: x.py"
)


def test_nothing_missing_gives_full_figures_and_no_ledger() -> None:
    figures, ledger = retention(conversation(), FULL_SUMMARY, [])
    assert ledger is None
    assert (figures.prompts.kept, figures.prompts.total) == (2, 2)
    assert (figures.paths.kept, figures.paths.total) == (2, 2)
    assert (figures.errors.kept, figures.errors.total) == (2, 2)


def test_a_dropped_prompt_path_and_error_are_counted_and_listed() -> None:
    summary = "Rename the parser module to reader. Touched /repo/parser.py. KeyError: 'missing-key'"
    figures, ledger = retention(conversation(), summary, [])
    assert (figures.prompts.kept, figures.prompts.total) == (1, 2)
    assert (figures.paths.kept, figures.paths.total) == (1, 2)
    assert (figures.errors.kept, figures.errors.total) == (1, 2)
    assert ledger is not None
    assert "- Also update the docs" in ledger
    assert "- /repo/x.py" in ledger
    assert "- Permission denied: x.py" in ledger
    assert "Rename the parser" not in ledger and "/repo/parser.py" not in ledger


def test_facts_visible_in_kept_messages_count_as_kept() -> None:
    kept = [
        text_message("user", "Also   update\nthe docs"),
        Message(
            role="assistant",
            content=[ToolUseBlock(id="t9", name="Edit", input={"file_path": "/repo/x.py"})],
        ),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t9", content=TRACEBACK)]),
    ]
    summary = "Rename the parser module to reader; /repo/parser.py; Permission denied: x.py"
    figures, ledger = retention(conversation(), summary, kept)
    assert ledger is None
    assert figures.prompts.kept == figures.paths.kept == figures.errors.kept == 2


def test_comparison_ignores_whitespace_differences() -> None:
    summarized = [text_message("user", "first line\n\n   second\tline  ")]
    figures, ledger = retention(summarized, "quoted: first line second line.", [])
    assert ledger is None and figures.prompts.kept == 1


def test_a_short_prompt_is_not_found_inside_another_word() -> None:
    summarized = [text_message("user", "yes")]
    figures, ledger = retention(summarized, "The eyes have it.", [])
    assert figures.prompts.kept == 0
    assert ledger is not None and "- yes" in ledger


def test_a_long_prompt_survives_when_its_head_does() -> None:
    prompt = "Start of a long request. " + "more detail " * 200
    summarized = [text_message("user", prompt)]
    head = prompt[:260] + " [... cut ...]"
    figures, _ = retention(summarized, head, [])
    assert figures.prompts.kept == 1
    figures, _ = retention(summarized, prompt[:120], [])
    assert figures.prompts.kept == 0


def test_the_ledger_cuts_long_prompts_with_a_marker() -> None:
    prompt = "Begin. " + "x" * 3_000
    _, ledger = retention([text_message("user", prompt)], "", [])
    assert ledger is not None
    line = next(ln for ln in ledger.splitlines() if ln.startswith("- Begin."))
    assert "[... 2507 characters cut ...]" in line
    assert len(line) < 600


def test_only_user_prompts_are_checked_not_summaries_attachments_or_results() -> None:
    summarized = [
        text_message("user", "an earlier summary", kind="summary"),
        text_message("user", "Some attachment body", kind="attachment"),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t", content="a result")]),
    ]
    figures, ledger = retention(summarized, "", [])
    assert figures.prompts.total == 0
    assert ledger is None


def test_restored_file_attachments_count_as_paths_touched() -> None:
    summarized = [text_message("user", "Restored file: /ws/a.py\nx", kind="attachment")]
    figures, ledger = retention(summarized, "", [])
    assert figures.paths.total == 1
    assert ledger is not None and "- /ws/a.py" in ledger


def test_duplicate_facts_are_counted_once() -> None:
    summarized = [text_message("user", "go on"), text_message("user", "go   on")]
    figures, _ = retention(summarized, "", [])
    assert figures.prompts.total == 1


def test_ledger_prompts_are_readable_as_user_messages_of_a_later_compaction() -> None:
    prompts = ["one\nwith a second line", "two"]
    _, ledger = retention([text_message("user", p) for p in prompts], "", [])
    assert ledger is not None
    assert summary_prompts(ledger) == prompts


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
            min_size=1,
            max_size=900,
        ).filter(lambda s: s.strip()),
        min_size=1,
        max_size=6,
    ),
    st.text(max_size=300),
)
def test_with_the_ledger_appended_every_fact_is_kept(prompts: list[str], summary: str) -> None:
    summarized = [text_message("user", p) for p in prompts]
    summarized.append(
        Message(
            role="assistant",
            content=[ToolUseBlock(id="t", name="Read", input={"file_path": prompts[0][:40]})],
        )
    )
    _, ledger = retention(summarized, summary, [])
    with_ledger = summary + "\n\n" + (ledger or "")
    figures, again = retention(summarized, with_ledger, [])
    assert figures.prompts.kept == figures.prompts.total
    assert figures.paths.kept == figures.paths.total
    assert again is None
