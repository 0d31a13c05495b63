"""The summary request per direction, summary extraction, the summary message, instructions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from baton.core.compaction.prompts import (
    extract_summary,
    merge_instructions,
    project_instructions,
    summary_message_text,
    summary_prompt,
    summary_section,
)
from baton.core.errors import InvalidParams

COMMON = [
    "Primary request and intent",
    "Key technical concepts",
    "Files and code sections",
    "Errors and fixes",
    "Problem solving",
    "All user messages",
    "Pending tasks",
]


def numbered_sections(prompt: str) -> list[str]:
    """The `## n. Title` lines of the layout the prompt asks for, in order."""
    return re.findall(r"^## (\d\. .+)$", prompt, flags=re.MULTILINE)


@pytest.mark.parametrize("direction", ["all", "from", "range"])
def test_prompt_asks_for_nine_sections_ending_with_current_work_and_next_step(
    direction: str,
) -> None:
    prompt = summary_prompt(direction, None)
    expected = [*COMMON, "Current work", "Optional next step"]
    assert numbered_sections(prompt) == [f"{n}. {t}" for n, t in enumerate(expected, 1)]


def test_up_to_prompt_looks_back_with_work_completed_and_context_for_continuing() -> None:
    prompt = summary_prompt("up_to", None)
    expected = [*COMMON, "Work completed", "Context for continuing work"]
    assert numbered_sections(prompt) == [f"{n}. {t}" for n, t in enumerate(expected, 1)]
    assert "Current work" not in prompt
    assert "newer messages" in prompt.lower()


@pytest.mark.parametrize("direction", ["all", "up_to", "from", "range"])
def test_prompt_forbids_tools_and_asks_for_analysis_then_summary(direction: str) -> None:
    prompt = summary_prompt(direction, None)
    lowered = prompt.lower()
    assert "do not call any tool" in lowered
    assert prompt.index("<analysis>") < prompt.index("<summary>")
    assert "chronological" in lowered
    assert "verbatim" in lowered  # the latest request is quoted verbatim


def test_each_direction_describes_its_own_scope() -> None:
    prompts = {d: summary_prompt(d, None).lower() for d in ("all", "up_to", "from", "range")}
    assert len(set(prompts.values())) == 4
    assert "only the recent part" in prompts["from"]
    assert "earlier messages stay verbatim" in prompts["from"]
    assert "middle span" in prompts["range"]
    assert "before the span" in prompts["range"] and "after it" in prompts["range"]
    assert "whole conversation" in prompts["all"]


def test_custom_instructions_are_appended_under_a_heading() -> None:
    prompt = summary_prompt("all", "  Focus on the database migration.\n")
    heading = prompt.index("## Additional instructions")
    assert prompt.endswith("Focus on the database migration.")
    assert heading > prompt.index("</summary>")


@pytest.mark.parametrize("instructions", [None, "", "   \n"])
def test_no_instructions_heading_without_instructions(instructions: str | None) -> None:
    assert "Additional instructions" not in summary_prompt("all", instructions)


def test_unknown_direction_is_invalid_params() -> None:
    with pytest.raises(InvalidParams):
        summary_prompt("sideways", None)
    with pytest.raises(InvalidParams):
        summary_message_text("x", transcript_path=None, auto=False, direction="microcompact")


# ---- extract_summary ---------------------------------------------------------------------


def test_extract_summary_keeps_only_the_summary_body() -> None:
    text = "<analysis>\nthinking it over\n</analysis>\n\n<summary>\n## 1. Goal\nShip it\n</summary>"
    assert extract_summary(text) == "## 1. Goal\nShip it"


def test_extract_summary_tolerates_a_missing_closing_tag() -> None:
    text = "<analysis>draft</analysis>\n<summary>\n## 1. Goal\nShip it, then stop"
    assert extract_summary(text) == "## 1. Goal\nShip it, then stop"


def test_extract_summary_ignores_a_summary_tag_mentioned_inside_the_analysis() -> None:
    text = "<analysis>I will write a <summary> next</analysis><summary>the real one</summary>"
    assert extract_summary(text) == "the real one"


@pytest.mark.parametrize(
    "answer",
    [
        "I cannot summarize this.",
        "<analysis>I will write a <summary> next</analysis> but then did not",
        "<summary>\n  \n</summary>",
        "",
    ],
)
def test_an_answer_without_a_summary_section_is_not_a_summary(answer: str) -> None:
    assert summary_section(answer) is None


def test_the_summary_section_of_an_answer_is_its_body() -> None:
    text = "<analysis>draft</analysis>\n<summary>\n## 1. Goal\nShip it, then stop"
    assert summary_section(text) == "## 1. Goal\nShip it, then stop"


def test_extract_summary_without_tags_returns_the_text_stripped() -> None:
    assert extract_summary("\n  Plain summary text.\n") == "Plain summary text."


def test_extract_summary_without_summary_tag_drops_the_analysis_block() -> None:
    text = "<ANALYSIS>scratch notes</ANALYSIS>\nWhat was done: everything."
    assert extract_summary(text) == "What was done: everything."


def test_extract_summary_with_an_unclosed_analysis_and_no_summary_keeps_its_text() -> None:
    assert extract_summary("<analysis>only notes here") == "only notes here"


# ---- summary message ---------------------------------------------------------------------


def test_summary_message_names_transcript_and_continues_for_auto() -> None:
    text = summary_message_text(
        "BODY-123", transcript_path="/data/sessions/s1.jsonl", auto=True, direction="all"
    )
    assert "BODY-123" in text
    assert "/data/sessions/s1.jsonl" in text
    assert "continues from an earlier part" in text
    assert "do not ask the user" in text.lower()
    assert "recap" in text.lower()


def test_manual_summary_message_does_not_tell_the_model_to_carry_on() -> None:
    text = summary_message_text("BODY", transcript_path=None, auto=False, direction="all")
    assert "recap" not in text.lower()
    assert "transcript file" not in text


def test_summary_message_wording_follows_the_direction() -> None:
    def text(direction: str) -> str:
        return summary_message_text("B", transcript_path=None, auto=False, direction=direction)

    assert "newer messages after it are verbatim" in text("up_to")
    assert "messages above are verbatim" in text("from")
    assert "before and after this summary are verbatim" in text("range")


# ---- instructions ------------------------------------------------------------------------

CLAUDE_MD = """# Project

Some intro.

## Compact Instructions

Keep every SQL statement verbatim.

### Details
Mention the schema version.

```md
## not a heading, inside a fence
```

## Build

Run make.
"""


def test_claude_md_compact_section_runs_to_the_next_level_two_heading(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    found = project_instructions([tmp_path])
    assert found is not None
    assert found.startswith("Keep every SQL statement verbatim.")
    assert "### Details" in found and "Mention the schema version." in found
    assert "## not a heading, inside a fence" in found
    assert "Run make." not in found and "Some intro." not in found


def test_claude_md_without_the_section_gives_none(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# Project\n\n## Build\nRun make.\n", encoding="utf-8")
    assert project_instructions([tmp_path]) is None


def test_baton_instructions_file_is_used_whole(tmp_path: Path) -> None:
    (tmp_path / ".baton").mkdir()
    (tmp_path / ".baton" / "instructions.md").write_text(
        "# Notes\nKeep test names.\n\n## More\nAnd file paths.\n", encoding="utf-8"
    )
    assert (
        project_instructions([tmp_path]) == "# Notes\nKeep test names.\n\n## More\nAnd file paths."
    )


def test_instructions_from_both_files_and_every_folder_in_order(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    (first / ".baton").mkdir(parents=True)
    second.mkdir()
    (first / "CLAUDE.md").write_text("## Compact Instructions\nFROM-CLAUDE\n", encoding="utf-8")
    (first / ".baton" / "instructions.md").write_text("FROM-BATON\n", encoding="utf-8")
    (second / "CLAUDE.md").write_text("## compact instructions\nFROM-SECOND\n", encoding="utf-8")
    assert project_instructions([first, second, tmp_path / "missing"]) == (
        "FROM-CLAUDE\n\nFROM-BATON\n\nFROM-SECOND"
    )


def test_no_workspace_means_no_project_instructions() -> None:
    assert project_instructions([]) is None


def test_merge_puts_request_then_setting_then_project() -> None:
    assert merge_instructions(" request ", "setting", "project") == "request\n\nsetting\n\nproject"


def test_merge_drops_empty_parts() -> None:
    assert merge_instructions(None, "", "project") == "project"
    assert merge_instructions("  ", "setting\n", None) == "setting"
    assert merge_instructions(None, "", None) is None
