"""Three rounds of compaction of a long session: every prompt ever typed stays visible
(its first 200 characters), the summary grows with what it stands for (at most 5% of it),
and the symbols the edits defined are named."""

from __future__ import annotations

from pathlib import Path

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.represented import (
    FACTS_SHARE,
    SUMMARY_MAX_TOKENS,
    stands_for_tokens,
    summary_bound,
)
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention.facts import message_haystack, normalize
from baton.core.compaction.retention.ledger import PROMPT_PREFIX_CHARS, found_in
from baton.core.compaction.retention.symbols import definitions, edited_symbols, read_symbols
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import (
    Message,
    ToolResultBlock,
    ToolUseBlock,
    text_message,
)
from baton.core.conversation.store import SessionStore
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator

WORDS = [
    "parser",
    "loader",
    "session",
    "record",
    "module",
    "export",
    "cache",
    "handler",
    "fixture",
    "migration",
]


def prompt(n: int) -> str:
    words = " ".join(WORDS[(n * 7 + i) % len(WORDS)] + str((n + i) % 97) for i in range(40))
    return f"Request {n}: look at the {WORDS[n % len(WORDS)]} code, {words}"


def turns(start: int, count: int) -> list[Message]:
    out: list[Message] = []
    reply = " ".join(f"step{i} of the change" for i in range(450))  # ~2,000 tokens
    for n in range(start, start + count):
        out.append(text_message("user", prompt(n)))
        use = ToolUseBlock(
            id=f"e{n}",
            name="Edit",
            input={
                "file_path": f"/repo/src/mod{n % 20}.py",
                "old_string": "x = 1",
                "new_string": f"def handler_{n}(config):\n    return config",
            },
        )
        out.append(Message(role="assistant", content=[use]))
        out.append(
            Message(role="user", content=[ToolResultBlock(tool_use_id=f"e{n}", content="ok")])
        )
        out.append(text_message("assistant", reply))
    return out


async def test_three_rounds_keep_every_prompt_ever_typed(tmp_path: Path) -> None:
    estimator = Estimator()
    settings = Settings(model="claude-sonnet-4-5[1m]")
    ctx = CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))
    store = SessionStore(tmp_path, estimator.count_message)
    session = store.create(title="three rounds")
    typed: list[str] = []
    per_round = 150
    for round_ in range(3):
        part = turns(round_ * per_round, per_round)
        typed += [m.text() for m in part if m.is_user_prompt]
        session.append(part)
        result = await compact(session, CompactRequest(direction="all"), ctx)
        assert result.summary is not None
    view = session.view_messages()
    haystack = message_haystack(view)
    shown = [p for p in typed if found_in(haystack, normalize(p), PROMPT_PREFIX_CHARS)]
    assert len(shown) == len(typed) == 450
    summary = next(m for m in view if m.kind == "summary")
    stood = stands_for_tokens(session, [summary], estimator.count_message)
    assert stood > 800_000  # the three rounds' messages, through the earlier summaries
    assert estimator.count_message(summary) <= FACTS_SHARE * stood
    assert estimator.count_message(summary) > SUMMARY_MAX_TOKENS  # it had to grow
    named = set(read_symbols(summary.text())) | set(edited_symbols(view))
    assert {f"handler_{n}" for n in range(450)} <= named
    store.close()


def test_the_bound_grows_with_what_the_summary_stands_for_within_the_threshold() -> None:
    assert summary_bound(100_000, 160_000) == SUMMARY_MAX_TOKENS
    assert summary_bound(1_000_000, 800_000) == 50_000
    assert summary_bound(1_000_000, 160_000) == 40_000  # a quarter of the threshold
    assert summary_bound(1_000_000, 60_000) == 15_000  # the quarter holds below the floor too
    assert summary_bound(2_000_000, 400_000) == 100_000


def test_definitions_are_read_from_edits_and_carried() -> None:
    text = (
        "class Reader:\n    def parse(self):\n        pass\n"
        "export async function loadAll() {}\nconst handle = (x) => x\nfn main() {}\n"
        "x = always_not_a_def\n"
    )
    assert definitions(text) == ["Reader", "parse", "loadAll", "handle", "main"]
    messages = [
        Message(
            role="assistant",
            content=[
                ToolUseBlock(
                    id="m1",
                    name="MultiEdit",
                    input={"file_path": "/a.py", "edits": [{"new_string": "def one():\n  pass"}]},
                ),
                ToolUseBlock(id="r1", name="Read", input={"file_path": "/b.py"}),
            ],
        )
    ]
    assert edited_symbols(messages) == ["one"]
    assert read_symbols("## 3. Files\n- /a.py (edited)\n- Symbols edited: `one`, `two`") == [
        "one",
        "two",
    ]
