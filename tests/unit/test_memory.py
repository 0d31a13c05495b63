"""Session notes: format and caps, when they update, how, and the `memory` summarizer."""

from __future__ import annotations

import stat
from collections.abc import Callable

import pytest

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.memory import (
    NOTES_SYSTEM,
    UNCOVERED_HEADING,
    MemorySummarizer,
    NotesUpdater,
    due,
    uncovered,
)
from baton.core.compaction.summary.notes import (
    EMPTY,
    SECTIONS,
    MemoryNotes,
    NotesMark,
    notes_path,
    parse_sections,
)
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer, SummaryRequest
from baton.core.conversation.messages import (
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic

MakeClient = Callable[..., AnthropicClient]
MODEL = "claude-haiku-4-5"


@pytest.fixture
def session(store: SessionStore) -> Session:
    return store.create("Parser rewrite", MODEL)


def words(count: int) -> str:
    """About `2 * count` tokens."""
    return " ".join(f"word{i % 10}" for i in range(count))


def talk(session: Session, tokens: int, *, tool_calls: int = 0, quiet_end: bool = True) -> None:
    """About `tokens` of conversation; `tool_calls` calls; a last reply with or without one."""
    session.append([MessageInput(role="user", content=words(tokens // 4))])
    for n in range(tool_calls):
        call_id = f"toolu_{len(session.messages)}_{n}"
        call = ToolUseBlock(id=call_id, name="Read", input={"file_path": f"src/mod{n}.py"})
        session.append(
            [
                MessageInput(role="assistant", content=[call]),
                MessageInput(role="user", content=[ToolResultBlock(tool_use_id=call_id)]),
            ]
        )
    if quiet_end:
        session.append([MessageInput(role="assistant", content=words(tokens // 4))])
    else:
        last = ToolUseBlock(id=f"toolu_end_{len(session.messages)}", name="Bash", input={})
        session.append(
            [MessageInput(role="assistant", content=[TextBlock(text=words(tokens // 4)), last])]
        )


def total_tokens(session: Session) -> int:
    return sum(m.tokens for m in session.messages.values())


def covered_now(session: Session) -> NotesMark:
    return NotesMark(covered=list(session.messages)[-1], updated="2025-01-01T00:00:00Z")


# ---- the notes file ------------------------------------------------------------------------


def test_notes_come_back_as_the_ten_sections_in_order() -> None:
    text = (
        "# Current state\nFixing the tokenizer.\n"
        "## 3. Task specification\nRewrite the parser.\n"
        "### A heading of its own\nstays with the task\n"
        "# Worklog\n- read parser.py\n"
    )
    sections = parse_sections(text)
    assert list(sections) == list(SECTIONS)
    assert sections["Current state"] == "Fixing the tokenizer."
    assert "Rewrite the parser." in sections["Task specification"]
    assert "stays with the task" in sections["Task specification"]
    assert sections["Learnings"] == ""
    normalized = MemoryNotes(notes_path("/x/s.jsonl")).normalize(text)
    headings = [line[2:] for line in normalized.splitlines() if line.startswith("# ")]
    assert headings == list(SECTIONS)
    assert f"# Learnings\n{EMPTY}" in normalized


def test_each_section_is_capped_and_the_notes_stay_within_the_total(
    estimator: Estimator,
) -> None:
    notes = MemoryNotes(notes_path("/x/s.jsonl"), estimator.count_text)
    worklog = "\n".join(f"- step {n}: edited module {n}" for n in range(3_000))
    big = "\n".join(f"# {name}\n{words(3_000)}" for name in SECTIONS[:-1])
    normalized = notes.normalize(f"{big}\n# Worklog\n{worklog}")
    sections = parse_sections(normalized)
    sizes = {name: estimator.count_text(body) for name, body in sections.items()}
    assert all(size <= 2_000 for size in sizes.values())
    assert sum(sizes.values()) <= 12_000
    assert "- step 2999:" in sections["Worklog"] and "- step 0:" not in sections["Worklog"]
    assert "older entries cut" in sections["Worklog"]


def test_notes_live_beside_the_transcript_privately(session: Session) -> None:
    notes = MemoryNotes.for_session(session)
    assert notes.path == session.transcript.path.with_name(f"{session.session_id}.notes.md")
    assert notes.read() == (None, NotesMark())
    notes.write("# Current state\nworking", NotesMark("m1", "2025-01-01T00:00:00Z"))
    assert stat.S_IMODE(notes.path.stat().st_mode) == 0o600
    body, mark = notes.read()
    assert body is not None and "# Current state\nworking" in body
    assert mark == NotesMark("m1", "2025-01-01T00:00:00Z")


# ---- when they update ----------------------------------------------------------------------


def test_the_first_notes_wait_for_ten_thousand_tokens(session: Session) -> None:
    talk(session, 8_000)
    assert total_tokens(session) < 10_000
    assert not due(session, NotesMark(), has_notes=False)
    talk(session, 3_000)
    assert due(session, NotesMark(), has_notes=False)


def test_later_updates_need_five_thousand_tokens_and_tool_calls_or_a_quiet_turn(
    session: Session,
) -> None:
    talk(session, 11_000)
    mark = covered_now(session)
    talk(session, 3_000)
    assert not due(session, mark, has_notes=True)  # not enough new conversation
    talk(session, 3_000, tool_calls=1, quiet_end=False)
    assert not due(session, mark, has_notes=True)  # one call, and the model is mid-task
    talk(session, 200, tool_calls=2, quiet_end=False)
    assert due(session, mark, has_notes=True)  # three calls now

    mark = covered_now(session)
    talk(session, 5_600, quiet_end=True)
    assert due(session, mark, has_notes=True)  # a turn that called no tool


# ---- how they update -----------------------------------------------------------------------


async def test_without_a_client_the_notes_are_built_offline(session: Session) -> None:
    talk(session, 11_000)
    session.append([MessageInput(role="user", content="Please rewrite the parser in parser.py")])
    call = ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "src/parser.py"})
    session.append(
        [
            MessageInput(role="assistant", content=[call]),
            MessageInput(role="user", content=[ToolResultBlock(tool_use_id="toolu_1")]),
        ]
    )
    updater = NotesUpdater()
    assert await updater.maybe_update(session)
    body, mark = MemoryNotes.for_session(session).read()
    assert body is not None and mark.covered == list(session.messages)[-1]
    sections = parse_sections(body)
    assert sections["Session title"] == "Parser rewrite"
    assert "src/parser.py" in sections["Files and functions"]
    assert "Please rewrite the parser" in sections["Worklog"]
    assert not await updater.maybe_update(session)  # nothing new since


async def test_with_a_client_one_request_rewrites_the_notes_from_what_is_new(
    session: Session, fake_anthropic: FakeAnthropic, anthropic_client: MakeClient
) -> None:
    session.append([MessageInput(role="user", content="first request about the lexer")])
    talk(session, 400)
    fake_anthropic.reply("<notes>\n# Session title\nLexer work\n# Current state\nstarted\n</notes>")
    updater = NotesUpdater(anthropic_client(), MODEL)
    await updater.update(session)
    body, _ = MemoryNotes.for_session(session).read()
    assert body is not None
    assert parse_sections(body)["Current state"] == "started"
    assert parse_sections(body)["Learnings"] == ""

    session.append([MessageInput(role="user", content="second request about the parser")])
    session.append([MessageInput(role="assistant", content="on it")])
    fake_anthropic.reply("<notes># Current state\nparser next</notes>")
    await updater.update(session)

    first, second = (r.body for r in fake_anthropic.message_requests())
    assert first["system"] == NOTES_SYSTEM and "tools" not in first
    prompt = second["messages"][-1]["content"][-1]["text"]
    assert "# Current state\nstarted" in prompt  # the current notes are in the request
    assert all(f"# {name}" in prompt for name in SECTIONS)
    sent = " ".join(b["text"] for turn in second["messages"] for b in turn["content"])
    assert "second request about the parser" in sent
    assert "first request about the lexer" not in sent  # the notes already hold it


# ---- the summarizer ------------------------------------------------------------------------


async def test_the_memory_summarizer_returns_the_notes_without_a_model_call(
    session: Session,
) -> None:
    notes = MemoryNotes.for_session(session)
    notes.write("# Current state\nhalfway through the parser", NotesMark("x", "t"))
    seen: list[str] = []
    request = SummaryRequest("all", [], transcript_path=str(session.transcript.path))
    summary = await MemorySummarizer().summarize(request, lambda text, f: seen.append(text))
    assert "# Current state\nhalfway through the parser" in summary
    assert "baton-notes" not in summary
    assert seen == ["Using the session notes as the summary"]


async def test_without_notes_the_memory_summarizer_falls_back_and_says_so(
    session: Session,
) -> None:
    talk(session, 400)
    seen: list[str] = []
    view = session.view_messages()
    request = SummaryRequest("all", view, transcript_path=str(session.transcript.path))
    summary = await MemorySummarizer().summarize(request, lambda text, f: seen.append(text))
    assert summary.startswith("## 1. Primary request")
    assert seen[0] == "No session notes yet: using the extractive summarizer instead"


async def test_notes_stand_only_for_a_whole_conversation_compaction(session: Session) -> None:
    MemoryNotes.for_session(session).write("# Current state\nnotes", NotesMark("x", "t"))
    talk(session, 400)
    request = SummaryRequest(
        "from", session.view_messages(), transcript_path=str(session.transcript.path)
    )
    summary = await MemorySummarizer().summarize(request)
    assert "notes" not in summary and summary.startswith("## 1.")


async def test_compaction_with_the_memory_summarizer_puts_the_notes_in_the_view(
    session: Session, estimator: Estimator
) -> None:
    for _ in range(4):
        talk(session, 2_000)
    MemoryNotes.for_session(session).write(
        "# Current state\nreplacing the recursive descent parser", NotesMark("x", "t")
    )
    settings = Settings(
        keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=1_000)
    )
    ctx = CompactContext(settings, estimator, MemorySummarizer())
    result = await compact(session, CompactRequest(), ctx)
    assert result.summarizer == "memory"
    summary = session.view_messages()[0]
    assert summary.kind == "summary"
    assert "replacing the recursive descent parser" in summary.text()


NOTES = "# Current state\nhalfway through the parser rewrite"


def later_work(session: Session) -> None:
    """A prompt, a tool call that fails, and a reply, after the notes were written."""
    session.append([MessageInput(role="user", content="Now port the lexer to src/lexer2.py")])
    call = ToolUseBlock(id="toolu_lex", name="Edit", input={"file_path": "src/lexer2.py"})
    result = ToolResultBlock(
        tool_use_id="toolu_lex", content="TokenError: unterminated string", is_error=True
    )
    session.append(
        [
            MessageInput(role="assistant", content=[call]),
            MessageInput(role="user", content=[result]),
            MessageInput(role="assistant", content="Fixed the string scanning in the lexer."),
        ]
    )


def last_id(session: Session) -> str:
    return list(session.messages)[-1]


async def summarize_all(
    session: Session, count_text: Callable[[str], int], *, max_tokens: int = 20_000
) -> tuple[str, list[str]]:
    seen: list[str] = []
    request = SummaryRequest(
        "all",
        session.view_messages(),
        transcript_path=str(session.transcript.path),
        max_tokens=max_tokens,
    )
    summarizer = MemorySummarizer(count_text=count_text)
    summary = await summarizer.summarize(request, lambda text, f: seen.append(text))
    return summary, seen


async def test_messages_after_the_notes_are_summarized_after_them(
    session: Session, estimator: Estimator
) -> None:
    session.append([MessageInput(role="user", content="Rewrite the parser in parser.py")])
    talk(session, 400)
    MemoryNotes.for_session(session).write(NOTES, NotesMark(last_id(session), "t"))
    later_work(session)
    summary, seen = await summarize_all(session, estimator.count_text)
    notes_at = summary.index("# Current state\nhalfway through the parser rewrite")
    rest = summary[summary.index(UNCOVERED_HEADING) :]
    assert notes_at < summary.index(UNCOVERED_HEADING)
    assert "Now port the lexer to src/lexer2.py" in rest
    assert "src/lexer2.py" in rest.split("## 3.")[1]  # files section of the later part
    assert "TokenError: unterminated string" in rest
    assert "Rewrite the parser in parser.py" not in rest  # the notes hold that part
    assert "do not cover yet" in seen[0]


async def test_notes_that_cover_the_whole_span_are_the_summary_unchanged(
    session: Session, estimator: Estimator
) -> None:
    session.append([MessageInput(role="user", content="Rewrite the parser in parser.py")])
    later_work(session)
    notes = MemoryNotes.for_session(session)
    notes.write(NOTES, NotesMark(last_id(session), "t"))
    summary, seen = await summarize_all(session, estimator.count_text)
    assert summary == notes.read()[0]
    assert seen == ["Using the session notes as the summary"]


async def test_notes_and_the_later_part_together_stay_within_the_bound(
    session: Session, estimator: Estimator
) -> None:
    big = "\n".join(f"# {name}\n{words(1_500)}" for name in SECTIONS)
    talk(session, 400)
    notes = MemoryNotes.for_session(session, estimator.count_text)
    notes.write(big, NotesMark(last_id(session), "t"))  # the full 12,000 tokens
    for n in range(30):
        session.append([MessageInput(role="user", content=f"request {n}: {words(300)}")])
        session.append([MessageInput(role="assistant", content=words(300))])
    later_work(session)
    for bound in (3_000, 20_000):
        summary, _ = await summarize_all(session, estimator.count_text, max_tokens=bound)
        assert estimator.count_text(summary) <= bound
        assert UNCOVERED_HEADING in summary and "# Session title" in summary
        assert "Now port the lexer to src/lexer2.py" in summary  # the latest request stays
    whole = notes.read()[0] or ""
    assert estimator.count_text(whole) > 11_000
    summary, _ = await summarize_all(session, estimator.count_text, max_tokens=20_000)
    assert summary.startswith(whole)  # at the default bound the notes fit whole


async def test_a_summary_that_folded_in_the_covered_message_and_later_ones_is_not_covered(
    session: Session, estimator: Estimator
) -> None:
    session.append([MessageInput(role="user", content="Rewrite the parser in parser.py")])
    talk(session, 4_000)
    covered = last_id(session)
    MemoryNotes.for_session(session).write(NOTES, NotesMark(covered, "t"))
    later_work(session)
    talk(session, 4_000)
    session.append([MessageInput(role="user", content="And keep going with tests")])
    pivot = last_id(session)
    session.append([MessageInput(role="assistant", content="Writing the tests now.")])
    ctx = CompactContext(Settings(), estimator, ExtractiveSummarizer(estimator.count_text))
    result = await compact(session, CompactRequest("up_to", pivot_message_id=pivot), ctx)
    assert covered in result.summarized_message_ids  # the covered id is gone from the view
    assert covered not in {m.id for m in session.view_messages()}

    summary, _ = await summarize_all(session, estimator.count_text)
    rest = summary[summary.index(UNCOVERED_HEADING) :]
    assert "Now port the lexer to src/lexer2.py" in rest  # carried from the earlier summary
    assert "And keep going with tests" in rest


async def test_a_summary_of_covered_messages_only_stays_covered(
    session: Session, estimator: Estimator
) -> None:
    session.append([MessageInput(role="user", content="Rewrite the parser in parser.py")])
    talk(session, 4_000)
    session.append([MessageInput(role="user", content="Then the lexer")])
    pivot = last_id(session)
    talk(session, 4_000)
    MemoryNotes.for_session(session).write(NOTES, NotesMark(last_id(session), "t"))
    ctx = CompactContext(Settings(), estimator, ExtractiveSummarizer(estimator.count_text))
    await compact(session, CompactRequest("up_to", pivot_message_id=pivot), ctx)
    assert session.view_messages()[0].kind == "summary"
    summary, seen = await summarize_all(session, estimator.count_text)
    assert UNCOVERED_HEADING not in summary
    assert seen == ["Using the session notes as the summary"]


async def test_a_mark_the_transcript_does_not_know_vouches_for_nothing(
    session: Session, estimator: Estimator
) -> None:
    session.append([MessageInput(role="user", content="Rewrite the parser in parser.py")])
    talk(session, 400)
    MemoryNotes.for_session(session).write(NOTES, NotesMark("msg_from_elsewhere", "t"))
    summary, _ = await summarize_all(session, estimator.count_text)
    assert "halfway through the parser rewrite" in summary
    assert "Rewrite the parser in parser.py" in summary[summary.index(UNCOVERED_HEADING) :]


def test_a_tool_result_after_the_notes_comes_with_its_call(session: Session) -> None:
    session.append([MessageInput(role="user", content="Rewrite the parser in parser.py")])
    later_work(session)
    view = session.view_messages()
    call_message = next(m for m in view if m.tool_uses())
    rest = uncovered(view, call_message.id, str(session.transcript.path))
    assert [m.id for m in rest] == [m.id for m in view[view.index(call_message) :]]
    assert all(isinstance(m, Message) for m in rest)


async def test_compaction_with_notes_that_reach_into_the_kept_window_uses_the_notes_alone(
    session: Session, estimator: Estimator
) -> None:
    for _ in range(4):
        talk(session, 2_000)
    MemoryNotes.for_session(session).write(NOTES, NotesMark(last_id(session), "t"))
    settings = Settings(
        keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=1_000)
    )
    ctx = CompactContext(settings, estimator, MemorySummarizer())
    result = await compact(session, CompactRequest(), ctx)
    assert last_id(session) not in result.summarized_message_ids
    assert result.summary is not None
    assert "halfway through the parser rewrite" in result.summary
    assert UNCOVERED_HEADING not in result.summary
