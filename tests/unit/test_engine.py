"""The compaction engine: view order per direction, atomic commit, failures, late appends, undo."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conversations import Convo, reload

from baton.core.compaction.engine import CompactContext, compact, uncompact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention.facts import normalize, prompt_texts, summary_prompts
from baton.core.compaction.retention.ledger_text import LEDGER_HEADING, LEDGER_MAX_TOKENS
from baton.core.compaction.summary.summarizers import (
    EXTRACTIVE_MAX_TOKENS,
    ExtractiveSummarizer,
    Progress,
    SummaryRequest,
)
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import ApiUsage, Message, MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import Transcript
from baton.core.errors import (
    CompactionInProgress,
    NothingToCompact,
    PromptTooLong,
    SessionLocked,
    SummarizerFailed,
)
from baton.core.importers.claude_code import import_with_report
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage
from baton.core.workspace.editor_files import EditorFiles, path_to_uri
from baton_testkit.claude_code_gen import CASES, case

BODY = "## 1. Primary request and intent\nThe user asked for things."


class FakeSummarizer:
    """Records each request and answers with a fixed body; `during` runs mid-summary."""

    name = "fake"

    def __init__(
        self,
        body: str = BODY,
        error: Exception | None = None,
        during: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.body = body
        self.error = error
        self.during = during
        self.requests: list[SummaryRequest] = []

    async def summarize(self, request: SummaryRequest, progress: Progress | None = None) -> str:
        self.requests.append(request)
        if progress is not None:
            progress("fake summarizing", 0.5)
        if self.during is not None:
            await self.during()
        if self.error is not None:
            raise self.error
        return self.body


def small_window() -> Settings:
    settings = Settings()
    settings.keep_window = KeepWindowSettings(min_tokens=1, min_text_messages=2, max_tokens=10_000)
    return settings


def context(
    estimator: Estimator, summarizer: FakeSummarizer | None = None, **fields: Any
) -> CompactContext:
    fields.setdefault("settings", small_window())
    return CompactContext(estimator=estimator, summarizer=summarizer or FakeSummarizer(), **fields)


def new_session(store: SessionStore, convo: Convo) -> Session:
    session = store.create(title="t")
    session.append(convo.messages)
    return session


def chat(turns: int = 4) -> Convo:
    c = Convo(tokens=0)  # real counts from the estimator
    for n in range(turns):
        c.user(f"question number {n}")
        if n == 1:
            c.tools("Read", "Bash", inputs=[{"file_path": "/src/app.py"}, {"command": "ls"}])
        c.reply(f"answer number {n}")
    return c


def dumps(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.wire() for m in messages]


# ---- the new view per direction ----------------------------------------------------------------


async def test_all_puts_the_summary_first_then_the_recent_window(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    result = await compact(session, CompactRequest(direction="all"), context(estimator))
    view = session.view_messages()
    assert view[0].kind == "summary" and view[0].role == "user"
    assert BODY in view[0].text()
    assert [m.id for m in view[1:]] == result.kept_message_ids == c.ids[-2:]
    assert result.summarized_message_ids == c.ids[:-2]
    assert result.summary is not None and result.summary.startswith(BODY)
    assert invariant_violations(view) == []


async def test_up_to_puts_the_summary_before_the_later_messages(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    pivot = c.ids[2]
    request = CompactRequest(direction="up_to", pivot_message_id=pivot)
    result = await compact(session, request, context(estimator))
    view = session.view
    assert session.messages[view[0]].kind == "summary"
    assert view[1:] == c.ids[3:]
    assert result.summarized_message_ids == c.ids[:3]


async def test_from_keeps_the_prefix_and_ends_with_the_summary(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    request = CompactRequest(direction="from", pivot_message_id=c.ids[3])
    await compact(session, request, context(estimator))
    assert session.view[:3] == c.ids[:3]
    assert len(session.view) == 4
    assert session.messages[session.view[3]].kind == "summary"


async def test_range_replaces_the_span_in_place(store: SessionStore, estimator: Estimator) -> None:
    c = chat()
    session = new_session(store, c)
    request = CompactRequest(direction="range", pivot_message_id=c.ids[2], end_message_id=c.ids[7])
    result = await compact(session, request, context(estimator))
    view = session.view
    assert view[:2] == c.ids[:2]
    assert session.messages[view[2]].kind == "summary"
    assert view[3:] == c.ids[8:]
    assert result.summarized_message_ids == c.ids[2:8]


@pytest.mark.parametrize("direction", ["all", "up_to", "from", "range"])
async def test_restored_files_sit_where_each_direction_puts_them(
    direction: str, store: SessionStore, estimator: Estimator, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    source = workspace / "notes.py"
    source.write_text("print('restored')\n")
    files = EditorFiles()
    files.opened(path_to_uri(source), source.read_text())
    c = chat()
    session = new_session(store, c)
    pivots = {"all": (None, None), "up_to": (c.ids[2], None), "from": (c.ids[3], None)}
    pivot, end = pivots.get(direction, (c.ids[2], c.ids[7]))
    ctx = context(estimator, editor_files=files, workspace_folders=[workspace])
    request = CompactRequest(direction=direction, pivot_message_id=pivot, end_message_id=end)
    result = await compact(session, request, ctx)
    kinds = [session.messages[mid].kind for mid in session.view]
    where = kinds.index("attachment")
    expected = {"all": len(kinds) - 1, "up_to": len(kinds) - 1}.get(direction)
    if expected is None:  # from / range: right after the summary
        expected = kinds.index("summary") + 1
    assert where == expected
    assert [f.uri for f in result.restored_files] == [path_to_uri(source)]
    assert "print('restored')" in session.messages[session.view[where]].text()


# ---- atomicity and failures ---------------------------------------------------------------------


async def test_a_dry_run_plans_without_summarizing_or_writing(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    before = session.transcript.path.read_bytes()
    summarizer = FakeSummarizer()
    request = CompactRequest(
        direction="up_to", pivot_message_id=c.ids[2], dry_run=True, measure=False
    )
    result = await compact(session, request, context(estimator, summarizer))
    assert session.transcript.path.read_bytes() == before
    assert session.view == c.ids and not session.boundaries
    assert summarizer.requests == []
    assert result.summary is None and result.dry_run and result.boundary_id == ""
    assert result.summarized_message_ids == c.ids[:3]
    assert result.wire()["summary"] is None
    assert 0 < result.post_tokens < result.pre_tokens


@pytest.mark.parametrize(
    ("error", "raised"),
    [
        (RuntimeError("model exploded"), SummarizerFailed),
        (PromptTooLong("too long", actual=300_000, limit=200_000), PromptTooLong),
    ],
)
async def test_a_failing_summarizer_changes_nothing(
    error: Exception, raised: type[Exception], store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    before = session.transcript.path.read_bytes()
    with pytest.raises(raised):
        await compact(session, CompactRequest(), context(estimator, FakeSummarizer(error=error)))
    assert session.transcript.path.read_bytes() == before
    assert session.view == c.ids
    assert not session.compacting


async def test_an_empty_summary_is_a_summarizer_failure(
    store: SessionStore, estimator: Estimator
) -> None:
    session = new_session(store, chat())
    with pytest.raises(SummarizerFailed):
        await compact(session, CompactRequest(), context(estimator, FakeSummarizer(body="  \n")))
    assert not session.boundaries


async def test_the_commit_is_one_boundary_line_that_a_reload_replays(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    before = session.transcript.path.read_bytes()
    result = await compact(session, CompactRequest(), context(estimator))
    after = session.transcript.path.read_bytes()
    assert after.startswith(before)
    added = after[len(before) :].decode().splitlines()
    assert len(added) == 1
    event = json.loads(added[0])
    assert event["type"] == "boundary" and event["boundary"]["id"] == result.boundary_id
    assert event["boundary"]["summarizedIds"] == result.summarized_message_ids
    again = reload(session)
    assert again.view == session.view
    assert dumps(again.view_messages()) == dumps(session.view_messages())


async def test_a_read_only_session_cannot_be_compacted(
    store: SessionStore, estimator: Estimator
) -> None:
    session = new_session(store, chat())
    other = Session(Transcript.open(session.transcript.path), session.count)
    try:
        assert other.read_only
        with pytest.raises(SessionLocked):
            await compact(other, CompactRequest(), context(estimator))
        written = session.transcript.path.read_bytes()
        # a dry run writes nothing: what a compaction would do is readable there too
        preview = await compact(other, CompactRequest(dry_run=True), context(estimator))
        assert preview.dry_run and preview.summarized_message_ids
        assert session.transcript.path.read_bytes() == written and not other.boundaries
    finally:
        other.transcript.close()


async def test_nothing_to_compact_leaves_the_session_alone(
    store: SessionStore, estimator: Estimator
) -> None:
    c = Convo(tokens=0)
    c.user("hi")
    c.reply("hello")
    session = new_session(store, c)
    with pytest.raises(NothingToCompact):
        await compact(session, CompactRequest(), context(estimator))
    assert not session.compacting and not session.boundaries


# ---- concurrency ---------------------------------------------------------------------------


async def test_messages_appended_while_summarizing_follow_the_new_view(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    started = asyncio.Event()
    release = asyncio.Event()

    async def hold() -> None:
        started.set()
        await release.wait()

    ctx = context(estimator, FakeSummarizer(during=hold))
    task = asyncio.create_task(compact(session, CompactRequest(direction="all"), ctx))
    await started.wait()
    with pytest.raises(CompactionInProgress):
        await compact(session, CompactRequest(), context(estimator))
    late = session.append(
        [
            MessageInput(role="user", content="a late question"),
            MessageInput(role="assistant", content="a late answer"),
        ]
    ).message_ids
    release.set()
    result = await task
    assert session.view[-2:] == late
    assert session.view[1:-2] == result.kept_message_ids
    assert late[0] not in result.summarized_message_ids
    assert reload(session).view == session.view
    assert invariant_violations(session.view_messages()) == []
    assert not session.compacting


async def test_a_tool_result_appended_while_summarizing_finds_its_call(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    c.user("run the tests")
    (call,) = c.tools("Bash", results=False)
    session = new_session(store, c)
    started, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        started.set()
        await release.wait()

    ctx = context(estimator, FakeSummarizer(during=hold))
    request = CompactRequest(direction="up_to", pivot_message_id=call.id)
    task = asyncio.create_task(compact(session, request, ctx))
    await started.wait()
    answer = {"type": "tool_result", "tool_use_id": "t3", "content": "passed"}
    session.append([MessageInput.model_validate({"role": "user", "content": [answer]})])
    release.set()
    result = await task
    assert result.adjusted_pivot is not None
    assert call.id in result.kept_message_ids
    assert invariant_violations(session.view_messages()) == []


async def test_an_undo_during_summarization_makes_the_compaction_refuse(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    first = await compact(
        session, CompactRequest(direction="up_to", pivot_message_id=c.ids[2]), context(estimator)
    )
    started, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        started.set()
        await release.wait()

    task = asyncio.create_task(
        compact(
            session,
            CompactRequest(direction="all"),
            context(estimator, FakeSummarizer(during=hold)),
        )
    )
    await started.wait()
    session.uncompact(first.boundary_id)
    lines = session.transcript.path.read_bytes()
    release.set()
    with pytest.raises(CompactionInProgress):
        await task
    assert session.transcript.path.read_bytes() == lines
    assert session.view == c.ids


# ---- repeated compactions and undo --------------------------------------------------------------


async def test_a_compacted_view_compacts_again_and_undoes_in_any_order(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat(6)
    session = new_session(store, c)
    original = dumps(session.view_messages())
    ctx = context(estimator)
    first = await compact(
        session, CompactRequest(direction="up_to", pivot_message_id=c.ids[3]), ctx
    )
    summary_id = session.view[0]
    second = await compact(
        session,
        CompactRequest(direction="range", pivot_message_id=summary_id, end_message_id=c.ids[6]),
        ctx,
    )
    assert summary_id in second.summarized_message_ids
    third = await compact(session, CompactRequest(direction="from", pivot_message_id=c.ids[9]), ctx)
    assert session.compactions == 3
    for boundary_id in (first.boundary_id, third.boundary_id, second.boundary_id):
        uncompact(session, boundary_id)
        assert invariant_violations(session.view_messages()) == []
    assert dumps(session.view_messages()) == original
    assert dumps(reload(session).view_messages()) == original


async def test_undo_keeps_turns_made_after_the_compaction(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    result = await compact(session, CompactRequest(direction="all"), context(estimator))
    later = session.append([MessageInput(role="user", content="after")]).message_ids
    boundary = uncompact(session)
    assert boundary.id == result.boundary_id
    assert session.view == [*c.ids, *later]


# ---- what the summarizer is asked and what comes back ---------------------------------------


async def test_the_summary_request_strips_media_and_carries_context_and_instructions(
    store: SessionStore, estimator: Estimator, tmp_path: Path
) -> None:
    c = Convo(tokens=0)
    c.user("look at this picture", image=True)
    c.reply("a cat")
    c.user("and now?")
    c.reply("a dog")
    c.user("thanks")
    c.reply("welcome")
    session = new_session(store, c)
    workspace = tmp_path / "proj"
    workspace.mkdir()
    (workspace / "CLAUDE.md").write_text("# P\n\n## Compact Instructions\nKeep the animals.\n")
    settings = small_window()
    settings.compact_instructions = "Be brief."
    summarizer = FakeSummarizer()
    ctx = context(estimator, summarizer, settings=settings, workspace_folders=[workspace])
    request = CompactRequest(
        direction="range",
        pivot_message_id=c.ids[2],
        end_message_id=c.ids[3],
        instructions="Mind the dog.",
    )
    await compact(session, request, ctx)
    (asked,) = summarizer.requests
    assert [m.id for m in asked.context_before] == c.ids[:2]
    assert "[image]" in [b.text for b in asked.context_before[0].content if b.type == "text"]  # type: ignore[union-attr]
    assert [m.id for m in asked.messages] == c.ids[2:4]
    assert asked.instructions == "Mind the dog.\n\nBe brief.\n\nKeep the animals."
    assert asked.direction == "range" and asked.trigger == "manual"
    assert asked.transcript_path == str(session.transcript.path)
    # the session itself still holds the image
    assert any(b.type == "image" for b in session.messages[c.ids[0]].content)


async def test_facts_the_summary_misses_are_appended_as_a_ledger(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    session = new_session(store, c)
    result = await compact(
        session, CompactRequest(), context(estimator, FakeSummarizer(body="short"))
    )
    assert result.retention is not None
    assert result.retention.prompts.kept < result.retention.prompts.total
    assert result.summary is not None
    for n in range(3):
        assert f"question number {n}" in result.summary
    assert "/src/app.py" in result.summary
    assert "question number 0" in session.messages[session.view[0]].text()


async def test_auto_compaction_tells_the_model_to_carry_on(
    store: SessionStore, estimator: Estimator
) -> None:
    session = new_session(store, chat())
    manual = await compact(session, CompactRequest(), context(estimator))
    manual_text = session.messages[session.view[0]].text()
    uncompact(session, manual.boundary_id)
    auto = await compact(session, CompactRequest(trigger="auto"), context(estimator))
    assert auto.trigger == "auto" and session.boundaries[auto.boundary_id].trigger == "auto"
    auto_text = session.messages[session.view[0]].text()
    assert auto_text != manual_text and auto_text.startswith(manual_text[:20])


async def test_the_result_reports_tokens_and_progress_runs_to_the_end(
    store: SessionStore, estimator: Estimator
) -> None:
    c = Convo(tokens=0)
    for n in range(8):
        c.user(f"question {n}")
        c.reply(f"a long answer {n}: " + "with many words " * 200)
    session = new_session(store, c)
    steps: list[tuple[str, float | None]] = []
    ctx = context(estimator, progress=lambda text, fraction: steps.append((text, fraction)))
    result = await compact(session, CompactRequest(), ctx)
    assert 0 < result.post_tokens < result.pre_tokens
    assert result.summarizer == "fake" and result.direction == "all"
    boundary = session.boundaries[result.boundary_id]
    assert (boundary.pre_tokens, boundary.post_tokens) == (result.pre_tokens, result.post_tokens)
    fractions = [f for _, f in steps if f is not None]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert ("fake summarizing", pytest.approx(0.05 + 0.75 * 0.5)) in steps
    wire = result.wire()
    assert set(wire) >= {
        "boundaryId",
        "direction",
        "summary",
        "summarizedMessageIds",
        "keptMessageIds",
        "restoredFiles",
        "preTokens",
        "postTokens",
        "trigger",
        "summarizer",
        "retention",
    }


async def test_a_pinned_message_stays_verbatim_and_returns_to_its_place_on_undo(
    store: SessionStore, estimator: Estimator
) -> None:
    c = chat()
    c.messages[2].pinned = True  # "question number 1", inside the span
    session = new_session(store, c)
    original = dumps(session.view_messages())
    request = CompactRequest(direction="up_to", pivot_message_id=c.ids[7])
    result = await compact(session, request, context(estimator))
    assert session.view[1:] == [c.ids[2], *c.ids[8:]]
    assert c.ids[2] in result.kept_message_ids
    assert c.ids[2] not in result.summarized_message_ids
    assert session.boundaries[result.boundary_id].stands_for[session.view[0]] == c.ids[:8]
    uncompact(session, result.boundary_id)
    assert dumps(session.view_messages()) == original
    assert dumps(reload(session).view_messages()) == original


# ---- real sessions ---------------------------------------------------------------------------


async def compaction_keeps_every_user_prompt(path: Path, estimator: Estimator, data: Path) -> None:
    # a smaller window than the default, so that even the shortest session has a past
    settings = Settings()
    settings.keep_window = KeepWindowSettings(
        min_tokens=2_000, min_text_messages=3, max_tokens=8_000
    )
    store = SessionStore(data, estimator.count_message)
    try:
        session, _ = import_with_report(path, store)
        before = session.view_messages()
        ctx = CompactContext(
            settings=settings,
            estimator=estimator,
            summarizer=ExtractiveSummarizer(estimator.count_text),
        )
        result = await compact(session, CompactRequest(direction="all"), ctx)
        after = session.view_messages()
        assert invariant_violations(after) == [], path.name
        assert result.summarized_message_ids and result.post_tokens < result.pre_tokens
        visible = normalize("\n".join(m.text() for m in after))
        prompts = prompt_texts(before)
        gone = set(result.summarized_message_ids)
        assert prompt_texts([m for m in before if m.id in gone]), path.name
        for prompt in prompts:
            assert normalize(prompt)[:80] in visible, (path.name, prompt[:80])
        uncompact(session, result.boundary_id)
        assert dumps(session.view_messages()) == dumps(before), path.name
    finally:
        store.close()


@pytest.mark.parametrize("name", CASES)
async def test_compacting_a_generated_session_keeps_every_user_prompt(
    name: str, estimator: Estimator, tmp_path: Path
) -> None:
    path = case(name).write(tmp_path / "session.jsonl")
    await compaction_keeps_every_user_prompt(path, estimator, tmp_path / "data")


@pytest.mark.corpus
async def test_compacting_real_sessions_keeps_every_user_prompt(
    corpus_dir: Path, estimator: Estimator, tmp_path: Path
) -> None:
    files = sorted([*corpus_dir.glob("*.jsonl"), *corpus_dir.glob("*.json")])
    assert len(files) >= 6
    for number, path in enumerate(files):
        await compaction_keeps_every_user_prompt(path, estimator, tmp_path / str(number))


async def test_a_failing_progress_callback_does_not_fail_the_compaction(
    store: SessionStore, estimator: Estimator
) -> None:
    session = new_session(store, chat())

    def broken(text: str, fraction: float | None) -> None:
        raise RuntimeError("the progress display went away")

    result = await compact(session, CompactRequest(), context(estimator, progress=broken))
    assert session.active == [result.boundary_id]


def test_the_keep_window_is_bounded_by_a_quarter_of_the_threshold() -> None:
    from baton.core.compaction.engine import bounded_keep_window
    from baton.core.settings import KeepWindowSettings

    default = KeepWindowSettings()
    assert bounded_keep_window(default, 167_000) == default  # 200K window: unchanged
    small = bounded_keep_window(default, 16_875)  # a 30K window
    assert small.max_tokens == 4_218 and small.min_tokens == 4_218
    assert small.min_text_messages == default.min_text_messages


# ---- size: the summary and its ledger stay bounded, the context shrinks --------------------


async def test_hundreds_of_long_prompts_keep_summary_and_ledger_bounded_and_the_context_shrinks(
    store: SessionStore, estimator: Estimator
) -> None:
    session = store.create(title="many prompts")
    session.append(
        [
            message
            for n in range(600)
            for message in (
                MessageInput(
                    role="user",
                    content=f"Request {n}: look at module_{n} and " + "weigh each detail " * 20,
                ),
                MessageInput(role="assistant", content=f"Done with module_{n}."),
            )
        ]
    )
    ctx = CompactContext(Settings(), estimator, ExtractiveSummarizer(estimator.count_text))
    result = await compact(session, CompactRequest(direction="all"), ctx)
    assert result.summary is not None and result.retention is not None
    assert estimator.count_text(result.summary) <= EXTRACTIVE_MAX_TOKENS + LEDGER_MAX_TOKENS
    assert result.post_tokens < result.pre_tokens
    # the ledger carries what it can and says how many it left out, and where they are
    ledger = result.summary.split(LEDGER_HEADING, 1)[1]
    match = re.search(r"Left out for lack of room: ([\d,]+) of ([\d,]+) user messages", ledger)
    assert match is not None, ledger[:300]
    left, missing = (int(group.replace(",", "")) for group in match.groups())
    figures = result.retention.prompts
    assert missing == figures.total - figures.kept  # the figures still describe the summary
    assert len(summary_prompts(ledger)) + left == missing
    assert str(session.transcript.path) in ledger


async def test_a_summary_that_would_not_shrink_the_context_changes_nothing(
    store: SessionStore, estimator: Estimator
) -> None:
    c = Convo(tokens=0)
    for n in range(30):
        c.user(f"question {n}: " + "detail " * 100)
        c.reply(f"answer {n}: " + "words " * 300)
    session = new_session(store, c)
    before = dumps(session.view_messages())
    written = session.transcript.path.read_bytes()
    wordy = FakeSummarizer(body=BODY + "\n" + "and then some more " * 10_000)
    with pytest.raises(SummarizerFailed, match="would not make the conversation smaller"):
        await compact(session, CompactRequest(), context(estimator, wordy))
    assert dumps(session.view_messages()) == before and session.compactions == 0
    assert session.transcript.path.read_bytes() == written
    assert not session.compacting


async def test_a_short_conversation_grown_by_its_summary_is_compacted_and_the_dry_run_says_so(
    store: SessionStore, estimator: Estimator
) -> None:
    """Under 10,000 tokens a summary may outweigh what it replaces: the compaction commits,
    but its dry run warns that the conversation does not get smaller."""
    c = Convo(tokens=0)
    for n in range(4):
        c.user(f"question {n}: " + "detail " * 20)
        c.reply(f"answer {n}: " + "words " * 40)
    session = new_session(store, c)
    wordy = FakeSummarizer(body=BODY + "\n" + "and then some more " * 400)

    dry = await compact(session, CompactRequest(dry_run=True), context(estimator, wordy))

    assert dry.post_tokens >= dry.pre_tokens
    assert any("under 10,000 tokens it is compacted all the same" in w for w in dry.warnings)
    done = await compact(session, CompactRequest(), context(estimator, wordy))
    assert done.post_tokens >= done.pre_tokens and session.compactions == 1


@pytest.mark.parametrize("direction", ["from", "range"])
async def test_a_dry_run_reports_the_figure_the_compaction_and_the_meter_will(
    store: SessionStore, estimator: Estimator, direction: str
) -> None:
    """The prefix a `from` or `range` compaction keeps holds a usage that stays valid, and
    the newest usage is another: the dry run's `postTokens`, the committed compaction's
    and the meter after it are one figure."""
    c = Convo(tokens=0)
    for n in range(12):
        c.user(f"question {n}: " + "detail " * 60)
        c.reply(f"answer {n}: " + "words " * 200, usage=ApiUsage(input_tokens=300 + 700 * n))
    session = new_session(store, c)
    ids = session.view
    request = CompactRequest(
        direction=direction,  # type: ignore[arg-type]
        pivot_message_id=ids[4],
        end_message_id=ids[15] if direction == "range" else None,
    )

    offline = CompactContext(small_window(), estimator, ExtractiveSummarizer(estimator.count_text))
    dry = await compact(session, replace(request, dry_run=True), offline)
    done = await compact(session, request, offline)

    meter = compute_usage(session, Settings(), estimator)
    assert meter.basis == "compacted"
    assert dry.post_tokens == done.post_tokens == meter.used_tokens
