"""Work a compaction does once: the span's facts, token counts and cuts, copies of messages."""

from __future__ import annotations

import random
import re
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction import commit
from baton.core.compaction.cuts import (
    MAX_CHARS_PER_TOKEN,
    CountText,
    counts_shared,
    cut_to_tokens,
    cut_with_marker,
    longest_head,
)
from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention import blocks, span_facts
from baton.core.compaction.retention.error_facts import ErrorFact, error_facts
from baton.core.compaction.retention.facts import (
    PathTouch,
    prompt_texts,
    remembered,
    summary_prompts,
    touched_paths,
)
from baton.core.compaction.retention.ledger_text import write_ledger
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.compaction.retention.summary_facts import read_summary, summary_text
from baton.core.compaction.summary import extractive
from baton.core.compaction.summary.extractive import _TERM
from baton.core.compaction.summary.summarizers import (
    PROMPTS_MAX_TOKENS,
    ExtractiveSummarizer,
    SummaryRequest,
    strip_media,
)
from baton.core.conversation.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    text_message,
)
from baton.core.conversation.store import SessionStore
from baton.core.errors import BatonError
from baton.core.importers.claude_code import import_claude_code
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.claude_code_gen import CASES, case


def small_window() -> Settings:
    return Settings(keep_window=KeepWindowSettings(min_tokens=2_000, min_text_messages=3))


def imported(name: str, store: SessionStore, tmp_path: Path) -> list[Message]:
    session = import_claude_code(case(name).write(tmp_path / f"{name}.jsonl"), store)
    return session.view_messages()


class CountingCounter:
    """A token counter (four characters a token) that records every text it is asked for."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()

    def __call__(self, text: str) -> int:
        self.asked[text] += 1
        return (len(text) + 3) // 4


# ---- the span's facts ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_span_facts_are_the_prompts_paths_and_errors_each_extraction_finds(
    name: str, store: SessionStore, tmp_path: Path
) -> None:
    messages = imported(name, store, tmp_path)
    facts = SpanFacts.extract(messages)
    # each message's own facts, or an earlier summary's quoted ones, where it stands
    prompts: list[str] = []
    paths: dict[str, list[str]] = {}
    errors: dict[str, ErrorFact] = {}
    for index, message in enumerate(messages):
        text = summary_text(message)
        carried = read_summary(text) if text is not None else None
        prompts += carried.prompts if carried else prompt_texts([message])
        touches = carried.paths if carried else touched_paths([message])
        for touch in touches:
            paths.setdefault(touch.path, [])
            paths[touch.path] += [op for op in touch.ops if op not in paths[touch.path]]
        found = carried.errors if carried else error_facts(messages[: index + 1])
        for fact in found:
            errors.setdefault(fact.line, fact)
    assert facts.prompts == prompts
    assert [(t.path, t.ops) for t in facts.paths] == list(paths.items())
    assert facts.errors == list(errors.values())
    if not any(summary_text(m) is not None for m in messages):
        assert facts.paths == touched_paths(messages)
        assert facts.without_attachments().paths == touched_paths(strip_media(messages))


def test_without_attachments_drops_only_the_restores() -> None:
    restored = text_message("user", "Restored file: /repo/a.py\nbody", kind="attachment")
    facts = SpanFacts.extract([restored, text_message("user", "fix /repo/a.py")])
    assert [(t.path, t.ops) for t in facts.paths] == [("/repo/a.py", ["restored"])]
    shared = facts.without_attachments()
    assert shared.paths == [] and shared.prompts == ["fix /repo/a.py"]
    assert facts.paths != []  # the original is unchanged


async def test_one_compaction_extracts_the_span_facts_once(
    store: SessionStore, estimator: Estimator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = import_claude_code(
        case("newest-several-compactions").write(tmp_path / "s.jsonl"), store
    )
    extractions: list[int] = []
    scanned: list[str] = []
    extract = SpanFacts.extract.__func__  # type: ignore[attr-defined]
    result_errors = span_facts.result_errors

    def counted_extract(cls: type[SpanFacts], messages: Any) -> SpanFacts:
        extractions.append(1)
        return extract(cls, messages)  # type: ignore[no-any-return]

    def counted_errors(block: ToolResultBlock, command: str | None = None) -> Any:
        scanned.append(block.tool_use_id)
        return result_errors(block, command)

    monkeypatch.setattr(SpanFacts, "extract", classmethod(counted_extract))
    monkeypatch.setattr(span_facts, "result_errors", counted_errors)
    ctx = CompactContext(small_window(), estimator, ExtractiveSummarizer(estimator.count_text))
    result = await compact(session, CompactRequest(direction="all"), ctx)
    assert extractions == [1]
    summarized = [session.messages[mid] for mid in result.summarized_message_ids]
    results = [r.tool_use_id for m in summarized for r in m.tool_results()]
    assert scanned == results  # every tool result of the span scanned for errors once
    assert result.retention is not None and result.retention.errors.total > 0


async def test_the_extractive_summarizer_uses_the_facts_it_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    messages = [text_message("user", "please fix the parser"), text_message("assistant", "done")]
    touch = PathTouch("/given/by/the/caller.py", ["edited"])
    given = SpanFacts(prompts=["please fix the parser"], paths=[touch])

    def refuse(messages: Any) -> SpanFacts:
        raise AssertionError("the facts were extracted again")

    monkeypatch.setattr(SpanFacts, "extract", refuse)
    request = SummaryRequest(direction="all", messages=messages, facts=given)
    body = await ExtractiveSummarizer().summarize(request)
    assert "/given/by/the/caller.py (edited)" in body


# ---- counting each text once ------------------------------------------------------------


def test_remembered_counts_each_text_once() -> None:
    counter = CountingCounter()
    count = remembered(counter)
    assert [count("abcd"), count("abcdefgh"), count("abcd"), count("")] == [1, 2, 1, 0]
    assert counter.asked == Counter({"abcd": 1, "abcdefgh": 1, "": 1})


async def test_a_summary_counts_each_text_once(store: SessionStore, tmp_path: Path) -> None:
    messages = strip_media(imported("newest-several-compactions", store, tmp_path))
    # many long prompts: the prompts section is cut to a common length, tried several times
    messages += [text_message("user", f"request {n}: " + "word " * 300) for n in range(60)]
    counter = CountingCounter()
    request = SummaryRequest(direction="all", messages=messages)
    body = await ExtractiveSummarizer(counter, max_tokens=2_000).summarize(request)
    assert counter(body) <= PROMPTS_MAX_TOKENS  # grown to keep every prompt visible
    counter.asked[body] -= 1  # the check just made
    assert max(counter.asked.values()) == 1


async def test_a_summarys_shared_counts_keep_no_draft_of_it_and_no_guess_at_a_cut(
    store: SessionStore, tmp_path: Path
) -> None:
    messages = strip_media(imported("newest-several-compactions", store, tmp_path))
    messages += [text_message("user", f"request {n}: " + "word " * 300) for n in range(60)]
    prompts = [m.text().strip() for m in messages if m.role == "user" and m.text().strip()]
    request = SummaryRequest(direction="all", messages=messages)
    with counts_shared() as shared:  # as a compaction writes its summary, for its ledger
        body = await ExtractiveSummarizer(CountingCounter(), max_tokens=2_000).summarize(request)
    kept = [text for known in shared.values() for text in (*known.counts, *known.bounds)]
    assert "characters cut ...]" in body  # prompts were cut to fit
    assert [text for text in kept if text.startswith("## 1.")] == []  # no draft of the whole
    guesses = {text for text in kept for p in prompts if text and p.startswith(text) != (text == p)}
    assert guesses == set()  # no head of a prompt tried for its cut


def test_a_ledger_counts_each_text_once() -> None:
    prompts = [f"request {n}: " + "word " * 200 for n in range(80)]
    counter = CountingCounter()
    ledger = write_ledger(prompts, ["/a/b.py", "/a/c.py"], ["ValueError: x"], 1_500, counter, None)
    assert counter(ledger) <= 1_500
    counter.asked[ledger] -= 1  # the check just made
    assert max(counter.asked.values()) == 1


# ---- copies for the summary request ------------------------------------------------------


def test_strip_media_passes_messages_without_media_as_they_are() -> None:
    source = {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    plain = text_message("user", "no media here")
    texts = Message(
        role="user",
        content=[ToolResultBlock(tool_use_id="t1", content=[{"type": "text", "text": "ok"}])],
    )
    picture = Message(role="user", content=[TextBlock(text="look"), ImageBlock(source=source)])
    stripped = strip_media([plain, texts, picture])
    assert stripped[0] is plain and stripped[1] is texts
    assert stripped[2] is not picture and stripped[2].id == picture.id
    assert [b.type for b in picture.content] == ["text", "image"]  # the original is untouched


async def test_a_compaction_counts_each_text_once_between_its_summary_and_its_ledger(
    store: SessionStore, estimator: Estimator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = import_claude_code(
        case("newest-several-compactions").write(tmp_path / "s.jsonl"), store
    )
    for n in range(150):  # prompts the summary has to cut and the ledger lists again, whole
        session.append([MessageInput(role="user", content=f"ask {n}: " + "detail " * 50)])
        session.append([MessageInput(role="assistant", content=f"answer {n}")])
    # the turns the file's compactions summarized are stored without counts; the summary's
    # bound counts what the summaries stand for (test_import_counts.py). Counted here first,
    # so what is looked at is the summary's and the ledger's own counting
    for message in session.messages.values():
        message.tokens = message.tokens or estimator.count_message(message)
    asked: Counter[str] = Counter()
    count_text = estimator.count_text

    def counted(text: str) -> int:
        asked[text] += 1
        return count_text(text)

    monkeypatch.setattr(estimator, "count_text", counted)
    summarizer = ExtractiveSummarizer(estimator.count_text, max_tokens=3_000)
    ctx = CompactContext(small_window(), estimator, summarizer)
    result = await compact(session, CompactRequest(direction="all"), ctx)
    assert result.summary is not None and "Fact ledger" in result.summary
    twice = {text for text, n in asked.items() if n > 1 and text != (session.system_prompt or "")}
    assert twice == set()


# ---- cuts ---------------------------------------------------------------------------------


def binary_search_head(text: str, max_tokens: int, count: CountText) -> int:
    """The search cuts used to make: one count per halving."""
    low, high = 0, min(len(text), max_tokens * MAX_CHARS_PER_TOKEN)
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[:middle]) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return low


def words(seed: int) -> str:
    rng = random.Random(seed)
    pieces = ["def", "parse_config(path):", "\n", "    ", "return", "ünïcödé", "👍", "x" * 90]
    pieces += ["the", "a", "request", "0123456789", "/home/dev/project/src/app.py", "\n\n"]
    return " ".join(rng.choice(pieces) for _ in range(3_000))


@pytest.mark.parametrize("max_tokens", [1, 7, 24, 300, 2_000])
def test_a_cut_finds_the_binary_searchs_head_in_fewer_counts(max_tokens: int) -> None:
    text = words(max_tokens)
    counter = CountingCounter()  # grows with length, like any sane counter
    searched = CountingCounter()
    assert longest_head(text, max_tokens, counter) == binary_search_head(text, max_tokens, searched)
    assert sum(counter.asked.values()) < sum(searched.asked.values())


@pytest.mark.parametrize("seed", range(6))
def test_a_cl100k_cut_fits_and_ends_within_a_token_of_the_binary_searchs(
    seed: int, estimator: Estimator
) -> None:
    text = words(seed)
    count = estimator.count_text
    for max_tokens in (1, 5, 24, 120, 900):
        head = cut_to_tokens(text, max_tokens, count)
        assert text.startswith(head) and count(head) <= max_tokens
        found = longest_head(text, max_tokens, count)
        reference = binary_search_head(text, max_tokens, count)
        assert count(text[:found]) <= max_tokens
        assert count(text[:found]) >= count(text[:reference]) - 1


def test_cut_with_marker_keeps_the_head_and_says_how_much_went(estimator: Estimator) -> None:
    text = "first line of the request\n" + "more words here " * 200
    cut = cut_with_marker(text, 40, estimator.count_text)
    assert estimator.count_text(cut) <= 40
    head, marker = cut.split(" [... ")
    assert text.startswith(head) and marker == f"{len(text) - len(head)} characters cut ...]"
    assert cut_with_marker("short", 40, estimator.count_text) == "short"


def test_remembered_counters_share_answers_only_inside_counts_shared() -> None:
    counter = CountingCounter()
    remembered(counter)("outside")
    remembered(counter)("outside")
    assert counter.asked["outside"] == 2
    with counts_shared():
        remembered(counter)("inside")
        remembered(counter)("inside")
        other = CountingCounter()
        remembered(other)("inside")  # another counting function keeps its own answers
    assert counter.asked["inside"] == 1 and other.asked["inside"] == 1


def test_a_ledger_far_over_its_budget_is_never_counted_whole() -> None:
    prompts = [f"request {n}: " + "word " * 80 for n in range(200)]
    full = write_ledger(prompts, [], [], 10**9, CountingCounter(), None)
    counter = CountingCounter()
    ledger = write_ledger(prompts, [], [], 2_000, counter, None)
    assert counter(ledger) <= 2_000 and full not in counter.asked
    assert write_ledger(prompts[:3], [], [], 2_000, CountingCounter(), None) == write_ledger(
        prompts[:3], [], [], 10**9, CountingCounter(), None
    )  # one that fits is still written whole


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_term_scan_finds_what_the_term_regex_finds(
    name: str, store: SessionStore, tmp_path: Path
) -> None:
    texts = [m.text() for m in imported(name, store, tmp_path)]
    texts += ["`a` b` c`", "éfoo_bar x_y", "fooBar_ __init__ a_b_c", "HTTPServer getX ÉtéX"]
    texts += ["caféBar naïveCase", "x1_2 9a_b", "`" + "x" * 70 + "` inner_word", "a`bc`d"]
    # lines are scanned apart: terms and quotes next to, across and after line breaks
    texts += ["`a\nb` c_d", "plain\n`quoted` here\n", "foo\nBar x\n_y", "a`b\nc`d_e\nf`g`"]
    texts += ["\n\nlast_line", "first_line\n\n", "no terms\r\nat all", "\r\nfooBar\r\n"]
    for text in texts:
        assert extractive._terms(text) == [m.group(1) or m.group(2) for m in _TERM.finditer(text)]


def test_the_block_classes_have_no_subclasses_so_passes_may_test_exact_types(
    store: SessionStore, tmp_path: Path
) -> None:
    for cls in typing.get_args(typing.get_args(ContentBlock)[0]):
        assert cls.__subclasses__() == [], cls
    for name in sorted(CASES):
        for message in imported(name, store, tmp_path):
            assert blocks.is_prompt(message) == message.is_user_prompt
            failed = sum(1 for r in message.tool_results() if r.is_error)
            assert blocks.failed_results(message.content) == failed
            assert blocks.only_results(message.content) == (
                bool(message.content)
                and all(isinstance(b, ToolResultBlock) for b in message.content)
            )


# ---- the prompts section when prompts are too many ----------------------------------------


async def test_too_many_prompts_list_the_first_and_latest_and_say_how_many_are_left_out(
    estimator: Estimator,
) -> None:
    prompts = [
        f"request {n}: please look at module_{n} and " + "weigh it " * 30 for n in range(900)
    ]
    messages = [
        m for p in prompts for m in (text_message("user", p), text_message("assistant", "ok"))
    ]
    request = SummaryRequest(direction="all", messages=messages)
    body = await ExtractiveSummarizer(estimator.count_text).summarize(request)
    assert estimator.count_text(body) <= 6_000
    section = body.split("## 6. All user messages\n", 1)[1].split("\n\n## 7.", 1)[0]
    note, *items = section.split("\n")
    match = re.fullmatch(
        r"([\d,]+) of 900 user messages left out for lack of room "
        r"\(the first and the latest are listed\):",
        note,
    )
    assert match is not None, note
    listed = summary_prompts(
        f"## 6. All user messages\n{section}"
    )  # as a later compaction reads it
    assert len(listed) == len(items) == 900 - int(match.group(1).replace(",", "")) > 100
    assert listed[0].startswith("request 0: ") and listed[-1].startswith("request 899: ")
    assert all(item.endswith("characters cut ...]") for item in items)


# ---- the commit's check ---------------------------------------------------------------------


async def test_the_commit_checks_only_the_new_view_when_it_keeps_the_api_rules(
    store: SessionStore, estimator: Estimator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = import_claude_code(
        case("newest-several-compactions").write(tmp_path / "s.jsonl"), store
    )
    checked: list[int] = []
    check = commit.invariant_violations

    def counted(messages: Any) -> list[str]:
        checked.append(len(messages))
        return check(messages)

    monkeypatch.setattr(commit, "invariant_violations", counted)
    ctx = CompactContext(small_window(), estimator, ExtractiveSummarizer(estimator.count_text))
    before = len(session.view)
    await compact(session, CompactRequest(direction="all"), ctx)
    assert checked == [len(session.view)] and len(session.view) < before


def test_the_commit_refuses_a_view_that_breaks_the_api_rules_in_a_new_way(
    store: SessionStore,
) -> None:
    session = store.create(title="t")
    session.append(
        [MessageInput(role="user", content="hi"), MessageInput(role="assistant", content="yo")]
    )
    stray = Message(role="user", content=[ToolResultBlock(tool_use_id="toolu_x", content="?")])
    snapshot = list(session.view)
    with pytest.raises(BatonError, match="toolu_x answers no tool_use"):
        commit._check(session, snapshot, [stray])
    assert commit._check(session, snapshot, session.view_messages()) == []
