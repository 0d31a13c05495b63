"""The offline extractive summarizer, summary-input preparation and the shared fact extraction."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction.prompts import summary_message_text
from baton.core.compaction.retention.error_facts import error_facts, error_line
from baton.core.compaction.retention.facts import (
    approx_tokens,
    normalize,
    prompt_texts,
    touched_paths,
)
from baton.core.compaction.retention.ledger import retention
from baton.core.compaction.retention.summary_facts import carried_facts
from baton.core.compaction.summary.summarizers import (
    PROMPTS_MAX_TOKENS,
    ExtractiveSummarizer,
    SummaryRequest,
    strip_media,
)
from baton.core.conversation.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_message,
)
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_claude_code
from baton.core.usage.estimator import Estimator
from baton_testkit.claude_code_gen import CASES, case
from corpus_names import CORPUS_FILES

TRACEBACK = """Traceback (most recent call last):
  File "/repo/app/main.py", line 10, in <module>
    run()
  File "/repo/app/db.py", line 42, in run
    connect()
sqlite3.OperationalError: no such table: users
"""


class Chat:
    """A small conversation builder with tool calls whose inputs and results are given."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._tools = 0

    def user(self, text: str) -> Chat:
        self.messages.append(text_message("user", text))
        return self

    def reply(self, text: str) -> Chat:
        self.messages.append(text_message("assistant", text))
        return self

    def tool(self, name: str, result: str = "ok", *, error: bool = False, **inputs: Any) -> Chat:
        self._tools += 1
        use_id = f"toolu_{self._tools}"
        self.messages.append(
            Message(role="assistant", content=[ToolUseBlock(id=use_id, name=name, input=inputs)])
        )
        block = ToolResultBlock(tool_use_id=use_id, content=result, is_error=error or None)
        self.messages.append(Message(role="user", content=[block]))
        return self


def sample_chat() -> Chat:
    return (
        Chat()
        .user("Please fix the failing login test in tests/test_login.py")
        .tool("Read", "def test_login(): ...", file_path="/repo/tests/test_login.py")
        .tool("Bash", TRACEBACK, command="pytest")
        .tool("Edit", "edited", file_path="/repo/app/db.py", old_string="a", new_string="b")
        .tool(
            "Write",
            "<tool_use_error>File has not been read yet.</tool_use_error>",
            error=True,
            file_path="/repo/app/new.py",
            content="x = 1",
        )
        .tool("Grep", "3 matches", pattern=r"def \w+_user", path="/repo/app")
        .tool("Glob", "a.py", pattern="app/**/*.py")
        .reply("The `create_user` table was missing; I added the migration in `db_setup`.")
        .user("Now also add a test for logout\nwith two lines")
        .tool(
            "TodoWrite",
            "ok",
            todos=[
                {"content": "Write logout test", "status": "in_progress"},
                {"content": "Run the suite", "status": "pending"},
                {"content": "Fix login", "status": "completed"},
            ],
        )
        .reply("Working on the logout test now; `create_user` is reused.")
    )


async def summarize(
    messages: list[Message],
    direction: str = "all",
    max_tokens: int = 20_000,
    count: Any = approx_tokens,
) -> str:
    request = SummaryRequest(direction=direction, messages=messages, max_tokens=max_tokens)
    return await ExtractiveSummarizer(count).summarize(request)


def section(body: str, number: int) -> str:
    match = re.search(rf"^## {number}\. .*?$(.*?)(?=^## \d\. |\Z)", body, re.M | re.S)
    assert match, f"section {number} missing"
    return match.group(1)


# ---- sections ----------------------------------------------------------------------------


async def test_summary_has_the_nine_sections_in_order() -> None:
    body = await summarize(sample_chat().messages)
    titles = re.findall(r"^## (\d)\. (.+)$", body, re.M)
    assert [int(n) for n, _ in titles] == list(range(1, 10))
    assert titles[5][1] == "All user messages"
    assert titles[7][1] == "Current work"


async def test_up_to_summary_uses_the_looking_back_titles() -> None:
    body = await summarize(sample_chat().messages, direction="up_to")
    assert "## 8. Work completed" in body
    assert "## 9. Context for continuing work" in body


async def test_every_user_prompt_is_kept_verbatim_in_order() -> None:
    body = await summarize(sample_chat().messages)
    prompts = section(body, 6)
    first = prompts.index("Please fix the failing login test in tests/test_login.py")
    second = normalize(prompts).index("Now also add a test for logout with two lines")
    assert first < prompts.index("Now also add a test for logout")
    assert second > 0


async def test_files_touched_are_listed_with_their_operations() -> None:
    files = section(await summarize(sample_chat().messages), 3)
    assert "/repo/tests/test_login.py (read)" in files
    assert "/repo/app/db.py (edited)" in files
    assert "/repo/app/new.py (written)" in files
    assert "/repo/app (searched)" in files
    assert "app/**/*.py (searched)" in files
    assert "_user" not in files  # a grep pattern is a regular expression, not a path


async def test_attachments_in_the_input_are_listed_as_restored_files() -> None:
    messages = sample_chat().messages
    messages.insert(1, text_message("user", "Restored file: /repo/conf.toml\nx", kind="attachment"))
    body = await summarize(messages)
    assert "/repo/conf.toml (restored)" in section(body, 3)
    assert "Restored file" not in section(body, 6)


async def test_errors_give_the_first_line_and_the_traceback_location() -> None:
    errors = section(await summarize(sample_chat().messages), 4)
    assert "sqlite3.OperationalError: no such table: users" in errors
    assert "/repo/app/db.py, line 42" in errors
    assert "File has not been read yet." in errors
    assert "<tool_use_error>" not in errors


PYTEST_FAILURE = """\
Error: Exit code 1
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0
rootdir: /home/dev/expenses
collected 13 items

tests/test_utils.py .........F...                                        [100%]

=================================== FAILURES ===================================
___________________ test_parse_date_accepts_every_format[2] ____________________

    def test_parse_date_accepts_every_format(text):
>       assert parse_date(text) == date(2024, 3, 4)
E       ValueError: unknown date format: '04.03.2024'

tests/test_utils.py:33: ValueError
=========================== short test summary info ============================
FAILED tests/test_utils.py::test_parse_date_accepts_every_format[2] - ValueError
========================= 1 failed, 12 passed in 0.05s =========================
"""


async def test_the_errors_section_lists_real_errors_not_a_test_runners_banners() -> None:
    chat = Chat().user("Run the tests").tool("Bash", PYTEST_FAILURE, error=True)
    unwrapped = PYTEST_FAILURE.split("\n", 1)[1]  # the runner's output as it came
    chat.tool("Bash", unwrapped.replace("04.03.2024", "4 March"), error=True)
    chat.tool("Bash", "Error: Exit code 2\n===== test session starts =====\n", error=True)
    chat.reply("One test fails.")
    errors = section(await summarize(chat.messages), 4)
    assert "ValueError: unknown date format: '04.03.2024'" in errors
    assert "ValueError: unknown date format: '4 March'" in errors
    for noise in ("test session starts", "platform linux", "FAILURES", "[100%]", "collected"):
        assert noise not in errors
    assert "Exit code 2" in errors  # nothing better to say: the failure itself stands


@pytest.mark.parametrize(
    ("output", "line"),
    [
        (PYTEST_FAILURE, "ValueError: unknown date format: '04.03.2024'"),
        ("Error: Exit code 1\nexpenses: data/x.csv:2: could not convert '1,250.00'",
         "expenses: data/x.csv:2: could not convert '1,250.00'"),
        ("Error: Exit code 1\nexpenses: data/x.csv:14: not an amount: '(45.00)'",
         "expenses: data/x.csv:14: not an amount: '(45.00)'"),
        ("===== test session starts =====\n>   assert f() == 2\ntests/t.py:3:",
         "> assert f() == 2"),
        ("Error: Exit code 127", "Error: Exit code 127"),
        ("======== test session starts ========\n_ _ _ _ _ _\n", None),
        ("\n\n", None),
    ],
)  # fmt: skip
def test_a_failed_results_error_line_is_the_line_that_says_what_went_wrong(
    output: str, line: str | None
) -> None:
    assert error_line(output) == line


async def test_problem_solving_counts_tool_usage() -> None:
    solving = section(await summarize(sample_chat().messages), 5)
    assert "7 tool calls (1 failed)" in solving
    assert "Bash 1" in solving and "Read 1" in solving


async def test_key_concepts_rank_terms_used_more_than_once() -> None:
    concepts = section(await summarize(sample_chat().messages), 2)
    assert "`create_user` (2)" in concepts
    assert ".py (" in concepts


async def test_pending_tasks_come_from_the_latest_todo_list() -> None:
    pending = section(await summarize(sample_chat().messages), 7)
    assert "[in_progress] Write logout test" in pending
    assert "[pending] Run the suite" in pending
    assert "Fix login" not in pending
    assert "1 of 3 done" in pending


async def test_without_a_todo_list_unanswered_prompts_are_pending() -> None:
    chat = Chat().user("first ask").reply("answered").user("second ask").user("third ask")
    pending = section(await summarize(chat.messages), 7)
    assert "second ask" in pending and "third ask" in pending
    assert "first ask" not in pending


async def test_current_work_is_the_last_assistant_reply_and_next_step_quotes_the_request() -> None:
    body = await summarize(sample_chat().messages)
    assert "Working on the logout test now" in section(body, 8)
    next_step = normalize(section(body, 9))
    assert '"Now also add a test for logout with two lines"' in next_step


async def test_long_prompts_are_cut_fairly_with_a_visible_marker() -> None:
    chat = Chat()
    shorts = [f"short request number {i} about module_{i}" for i in range(12)]
    chat.user("HUGE " + "word " * 40_000)
    for text in shorts:
        chat.user(text).reply("ok")
    body = await summarize(chat.messages, max_tokens=3_000)
    prompts = section(body, 6)
    for text in shorts:
        assert f"- {text}\n" in prompts + "\n"
    assert re.search(r"HUGE (word ){20,}\[\.\.\. \d+ characters cut \.\.\.\]", prompts)
    assert approx_tokens(body) <= 3_000


async def test_summary_is_bounded_by_the_smaller_of_its_cap_and_the_request() -> None:
    chat = Chat()
    for i in range(300):
        chat.user(f"request {i}: " + "please change the parser " * 60)
        chat.tool("Edit", TRACEBACK.replace("42", str(i)), file_path=f"/repo/src/mod_{i}.py")
        chat.reply(f"changed mod_{i} " * 50)
    messages = chat.messages
    # 6,000 tokens, grown for 300 user messages to keep each visible, never past 20,000
    assert 6_000 < approx_tokens(await summarize(messages, max_tokens=50_000)) <= PROMPTS_MAX_TOKENS
    small = await summarize(messages, max_tokens=1_500)
    assert approx_tokens(small) <= 1_500
    assert "## 9." in small


async def test_summary_is_bounded_with_the_real_estimator(estimator: Estimator) -> None:
    chat = Chat()
    for i in range(150):
        chat.user(f"step {i} " + "漢字とかなの混在 テキスト " * 30).reply("done " * 100)
    body = await summarize(chat.messages, max_tokens=4_000, count=estimator.count_text)
    assert estimator.count_text(body) <= 4_000


async def test_prior_summaries_carry_their_user_messages_forward() -> None:
    first = Chat().user("ORIGINAL-ASK one").tool("Read", "x", file_path="/a.py").reply("read it")
    first.user("ORIGINAL-ASK two\nspanning lines").reply("done")
    body = await summarize(first.messages)
    wrapped = summary_message_text(body, transcript_path="/t.jsonl", auto=False, direction="all")
    second = [text_message("user", wrapped, kind="summary")]
    second += Chat().user("NEW-ASK three").reply("fine").messages
    again = await summarize(second)
    prompts = normalize(section(again, 6))
    assert prompts.index("ORIGINAL-ASK one") < prompts.index("ORIGINAL-ASK two spanning lines")
    assert prompts.index("ORIGINAL-ASK two spanning lines") < prompts.index("NEW-ASK three")
    assert "Carried from an earlier summary" in section(again, 1)


async def test_repeated_compaction_keeps_every_user_prompt() -> None:
    asked: list[Message] = []
    view: list[Message] = []
    for round_ in range(4):
        chat = Chat()
        for i in range(6):
            chat.user(f"round {round_} ask {i}: " + "detail " * (10 + 7 * i)).reply("ok " * 30)
        asked += chat.messages
        body = await summarize([*view, *chat.messages], max_tokens=6_000)
        view = [text_message("user", body, kind="summary")]
    figures, ledger = retention(asked, view[0].text(), [])
    assert figures.prompts.kept == figures.prompts.total == 24
    assert ledger is None or "User messages" not in ledger


async def test_summary_is_a_pure_function_of_its_input() -> None:
    messages = sample_chat().messages
    snapshot = [m.model_dump() for m in messages]
    assert await summarize(messages) == await summarize(messages)
    assert [m.model_dump() for m in messages] == snapshot


async def test_progress_is_reported_in_steps_up_to_done() -> None:
    seen: list[tuple[str, float | None]] = []
    request = SummaryRequest(direction="all", messages=sample_chat().messages)
    await ExtractiveSummarizer().summarize(request, lambda m, f: seen.append((m, f)))
    fractions = [f for _, f in seen]
    assert len(seen) >= 4
    assert fractions == sorted(fractions)  # type: ignore[type-var]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0


async def test_summarizing_can_be_cancelled_between_sections() -> None:
    request = SummaryRequest(direction="all", messages=sample_chat().messages)
    calls: list[str] = []

    def cancel_on_second_step(message: str, fraction: float | None) -> None:
        calls.append(message)
        if len(calls) == 2:
            task.cancel()

    task = asyncio.ensure_future(ExtractiveSummarizer().summarize(request, cancel_on_second_step))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "Summary ready" not in calls


# ---- the corpus --------------------------------------------------------------------------


async def summary_keeps_every_prompt_and_stays_bounded(
    messages: list[Message], estimator: Estimator
) -> None:
    body = await summarize(messages, max_tokens=20_000, count=estimator.count_text)
    assert estimator.count_text(body) <= 6_000
    figures, _ = retention(messages, body, [])
    # the typed prompts, and those an earlier summary quoted (they count as much)
    quoted = [p for facts in carried_facts(messages) for p in facts.prompts]
    assert figures.prompts.total == len(set(map(normalize, prompt_texts(messages) + quoted)))
    assert figures.prompts.kept == figures.prompts.total
    assert body == await summarize(messages, max_tokens=20_000, count=estimator.count_text)


@pytest.mark.parametrize("name", CASES)
async def test_summary_of_a_generated_session_keeps_every_prompt_and_stays_bounded(
    name: str, tmp_path: Path, store: SessionStore, estimator: Estimator
) -> None:
    generated = case(name)
    session = import_claude_code(generated.write(tmp_path / "session.jsonl"), store)
    messages = session.view_messages()
    assert {p for p in generated.truth.prompts if p} >= set(prompt_texts(messages)) - {
        m.text().strip() for m in messages if m.text().startswith(("<", "["))
    }
    await summary_keeps_every_prompt_and_stays_bounded(messages, estimator)


@pytest.mark.parametrize("name", [n for n in CASES if case(n).truth.summary_prompts])
async def test_claude_code_summary_prompts_are_carried_forward(
    name: str, tmp_path: Path, store: SessionStore
) -> None:
    generated = case(name)
    session = import_claude_code(generated.write(tmp_path / "session.jsonl"), store)
    messages = session.view_messages()
    assert messages[0].kind == "summary"
    body = normalize(section(await summarize(messages), 6))
    for prompt in generated.truth.summary_prompts:
        assert normalize(prompt) in body


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
async def test_corpus_summary_keeps_every_prompt_and_stays_bounded(
    name: str, corpus_dir: Path, store: SessionStore, estimator: Estimator
) -> None:
    session = import_claude_code(corpus_dir / name, store)
    await summary_keeps_every_prompt_and_stays_bounded(session.view_messages(), estimator)


@pytest.mark.corpus
async def test_corpus_claude_code_summary_prompts_are_carried_forward(
    corpus_dir: Path, store: SessionStore
) -> None:
    session = import_claude_code(corpus_dir / CORPUS_FILES[-1], store)
    messages = session.view_messages()
    assert messages[0].kind == "summary"
    body = normalize(section(await summarize(messages), 6))
    assert "yes lets begin, make use of @agent-project-delegator-orchestrator" in body


# ---- strip_media and fact extraction -----------------------------------------------------


def test_strip_media_turns_images_and_documents_into_markers() -> None:
    source = {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    prompt = Message(
        role="user",
        content=[TextBlock(text="look"), ImageBlock(source=source), DocumentBlock(source=source)],
    )
    nested = Message(
        role="user",
        content=[
            ToolResultBlock(
                tool_use_id="t1",
                content=[{"type": "text", "text": "shot:"}, {"type": "image", "source": source}],
            )
        ],
    )
    attachment = text_message("user", "Restored file: /a.py", kind="attachment")
    stripped = strip_media([prompt, attachment, nested])
    assert [m.id for m in stripped] == [prompt.id, nested.id]
    assert [b.model_dump() for b in stripped[0].content] == [
        {"type": "text", "text": "look"},
        {"type": "text", "text": "[image]"},
        {"type": "text", "text": "[document]"},
    ]
    result = stripped[1].tool_results()[0]
    assert result.content == [
        {"type": "text", "text": "shot:"},
        {"type": "text", "text": "[image]"},
    ]
    assert isinstance(prompt.content[1], ImageBlock)  # the originals are untouched
    assert nested.tool_results()[0].content[1]["type"] == "image"  # type: ignore[index]


def test_prompts_exclude_tool_results_summaries_and_attachments() -> None:
    messages = [
        text_message("user", "typed by the user"),
        text_message("user", "an old summary", kind="summary"),
        text_message("user", "Restored file: /x", kind="attachment"),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t", content="result")]),
        text_message("assistant", "a reply"),
    ]
    assert prompt_texts(messages) == ["typed by the user"]


def test_paths_come_from_tool_inputs_and_attachments_in_first_seen_order() -> None:
    chat = Chat().tool("Read", file_path="/b.py").tool("MultiEdit", file_path="/b.py", edits=[])
    chat.tool("NotebookEdit", notebook_path="/n.ipynb").tool(
        "str_replace_based_edit_tool", command="create", path="/c.py"
    )
    chat.messages.append(text_message("user", "Restored file: /r (1).py\nbody", kind="attachment"))
    touched = [(t.path, t.ops) for t in touched_paths(chat.messages)]
    assert touched == [
        ("/b.py", ["read", "edited"]),
        ("/n.ipynb", ["edited"]),
        ("/c.py", ["written"]),
        ("/r (1).py", ["restored"]),
    ]


def test_error_facts_dedupe_and_skip_successful_results_without_tracebacks() -> None:
    chat = Chat().tool("Bash", "fine\nall good").tool("Bash", TRACEBACK).tool("Bash", TRACEBACK)
    chat.tool("Bash", "\n\nexit code 2: boom\nmore", error=True)
    facts = error_facts(chat.messages)
    assert [(f.line, f.location) for f in facts] == [
        ("sqlite3.OperationalError: no such table: users", "/repo/app/db.py, line 42"),
        ("exit code 2: boom", None),
    ]
