"""Retention figures and the fact ledger: what a summary dropped is found and carried."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.core.compaction.retention.facts import approx_tokens, summary_prompts
from baton.core.compaction.retention.ledger import retention
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock, text_message
from baton.core.usage.estimator import Estimator

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


# ---- the ledger's budget -------------------------------------------------------------------


def left_out(ledger: str) -> dict[str, tuple[int, int]]:
    """What the ledger's note says it left out: kind -> (left out, missing from the summary)."""
    match = re.search(r"Left out for lack of room: ([^.]*)\.", ledger)
    if match is None:
        return {}
    found = re.findall(r"([\d,]+) of ([\d,]+) (user messages|file paths|error lines)", match[1])
    return {kind: (int(n.replace(",", "")), int(t.replace(",", ""))) for n, t, kind in found}


def listed(ledger: str, title: str) -> list[str]:
    """The bullets under the ledger section whose heading starts with `title`."""
    block = ledger.split(title, 1)[1].split("\n\n", 1)[0] if title in ledger else ""
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


def long_prompts(count: int, length: int = 1_000) -> list[Message]:
    return [
        text_message("user", f"Request {n}: rework module_{n} " + "with care and detail " * length)
        for n in range(count)
    ]


def test_a_ledger_within_its_budget_is_the_full_one_as_before() -> None:
    expected = (
        "Fact ledger: details of the summarized messages that the summary above does not carry."
        "\n\n### User messages (verbatim, long ones cut)\n- Rename the parser module to reader\n"
        "- Also update the docs\n\n### Files touched\n- /repo/parser.py\n- /repo/x.py\n\n"
        "### Errors seen\n- KeyError: 'missing-key'\n- Permission denied: x.py"
    )
    _, default = retention(conversation(), "", [])
    _, roomy = retention(conversation(), "", [], budget=10**9, transcript_path="/t/s.jsonl")
    assert default == roomy == expected


def test_long_prompts_over_budget_are_all_listed_cut_to_a_common_length(
    estimator: Estimator,
) -> None:
    count = estimator.count_text
    short = [text_message("user", "ship it")]
    summarized = short + [m for m in long_prompts(40, 60)]
    _, full = retention(summarized, "", [], budget=10**9, count_text=count)
    assert full is not None and count(full) > 3_000
    _, ledger = retention(summarized, "", [], budget=3_000, count_text=count)
    assert ledger is not None and count(ledger) <= 3_000
    assert left_out(ledger) == {} and "Shortened to fit 3,000 tokens" in ledger
    prompts = summary_prompts(ledger)  # still readable by a later compaction
    assert len(prompts) == 41 and prompts[0] == "ship it"  # short prompts stay whole
    for n, prompt in enumerate(prompts[1:]):
        assert prompt.startswith(f"Request {n}: rework module_{n} with care")
        assert re.search(r"\[\.\.\. \d+ characters cut \.\.\.\]$", prompt)
    cut_sizes = {count(p) for p in prompts[1:]}
    assert max(cut_sizes) - min(cut_sizes) <= 3  # one common length for the long ones


def test_when_cut_prompts_still_do_not_fit_the_ledger_counts_what_it_left_out(
    estimator: Estimator,
) -> None:
    count = estimator.count_text
    summarized = long_prompts(600)
    _, ledger = retention(
        summarized, "", [], budget=2_000, count_text=count, transcript_path="/data/s_1.jsonl"
    )
    assert ledger is not None and count(ledger) <= 2_000
    kept = summary_prompts(ledger)
    assert 0 < len(kept) < 600
    assert left_out(ledger) == {"user messages": (600 - len(kept), 600)}
    assert "/data/s_1.jsonl" in ledger
    # the middle goes first: the earliest and the latest requests stay
    assert kept[0].startswith("Request 0:") and kept[-1].startswith("Request 599:")


def test_paths_are_listed_under_their_common_folder_and_errors_cut_when_short_of_room(
    estimator: Estimator,
) -> None:
    count = estimator.count_text
    folder = "/home/someone/projects/a-rather-long-repository-name/src/package/"
    summarized: list[Message] = []
    for n in range(60):
        use = ToolUseBlock(id=f"t{n}", name="Edit", input={"file_path": f"{folder}mod_{n}.py"})
        error = f"ValueError: module {n} rejected the input " + "because of reasons " * 12
        result = ToolResultBlock(tool_use_id=f"t{n}", content=error, is_error=True)
        summarized += [
            Message(role="assistant", content=[use]),
            Message(role="user", content=[result]),
        ]
    _, full = retention(summarized, "", [], count_text=count)
    assert full is not None and folder + "mod_0.py" in full  # the full form when it fits
    _, ledger = retention(summarized, "", [], budget=1_200, count_text=count)
    assert ledger is not None and count(ledger) <= 1_200
    assert f"### Files touched (under {folder})" in ledger
    paths = listed(ledger, "### Files touched")
    errors = listed(ledger, "### Errors seen")
    assert paths and all(re.fullmatch(r"mod_\d+\.py", p) for p in paths)
    assert errors and all("characters cut" in e for e in errors)
    gone = left_out(ledger)
    assert gone.get("file paths", (0, 60)) == (60 - len(paths), 60)
    assert gone.get("error lines", (0, 60)) == (60 - len(errors), 60)


def test_a_budget_too_small_for_any_fact_still_says_what_was_left_out() -> None:
    summarized = [text_message("user", "keep this"), text_message("user", "and this")]
    figures, ledger = retention(summarized, "", [], budget=5)
    assert ledger is not None and summary_prompts(ledger) == []
    assert left_out(ledger) == {"user messages": (2, 2)}
    assert "the session's transcript file" in ledger
    assert figures.prompts.kept == 0  # the figures describe the summary, ledger or not


@settings(max_examples=40, deadline=None)
@given(
    prompts=st.lists(st.integers(1, 400), max_size=120),
    paths=st.lists(st.integers(1, 30), max_size=80),
    errors=st.lists(st.integers(1, 40), max_size=40),
    budget=st.integers(150, 3_000),
)
def test_a_shortened_ledger_stays_within_budget_and_accounts_for_every_fact(
    prompts: list[int], paths: list[int], errors: list[int], budget: int
) -> None:
    summarized = [
        text_message("user", f"prompt {n} " + "word " * size) for n, size in enumerate(prompts)
    ]
    for n, depth in enumerate(paths):
        use = ToolUseBlock(
            id=f"p{n}", name="Read", input={"file_path": "/r" + "/d" * depth + f"/{n}.py"}
        )
        summarized.append(Message(role="assistant", content=[use]))
    for n, size in enumerate(errors):
        result = ToolResultBlock(tool_use_id=f"p{n}", content=f"E{n} " + "x " * size, is_error=True)
        summarized.append(Message(role="user", content=[result]))
    figures, ledger = retention(summarized, "", [], budget=budget)
    if ledger is None:
        assert not (prompts or paths or errors)
        return
    gone = left_out(ledger)
    if approx_tokens(ledger) > budget:
        assert "###" not in ledger and gone  # only the note, too long for a tiny budget
    shown = {
        "user messages": len(summary_prompts(ledger)),
        "file paths": len(listed(ledger, "### Files touched")),
        "error lines": len(listed(ledger, "### Errors seen")),
    }
    totals = {
        "user messages": figures.prompts.total,
        "file paths": figures.paths.total,
        "error lines": figures.errors.total,
    }
    for kind, total in totals.items():
        dropped = gone.get(kind, (0, total))[0]
        assert shown[kind] + dropped == total, kind
