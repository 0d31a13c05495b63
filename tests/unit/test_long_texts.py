"""A huge message worked without one long C call or a Python loop per character (issue 26,
item 8): the compaction's normalizing and searching go a slice at a time (`slices`), with
the same answers as the single calls, and the session document measures a 20 MB line
without visiting its characters one by one on the event loop. Seeded; nothing is timed."""

from __future__ import annotations

import random
import re
import sys
import threading
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from baton.cli.message_table import preview
from baton.core.compaction import slices
from baton.core.compaction.cuts import head_of
from baton.core.compaction.retention.facts import normalize
from baton.core.conversation.messages import Message, TextBlock
from baton.lsp.session_document.markdown import code_units

SPACES = [" ", "\n", "\t", "\r\n", "\u00a0", "\u2003", "\x0b", "  \n "]
WORDS = ["alpha", "beta_gamma", "camelCase", "x=1", "é", "😀", "`q`", "AbCd", "z" * 40]


def _text(rng: random.Random, words: int) -> str:
    out: list[str] = []
    for _ in range(words):
        out.append(rng.choice(WORDS) if rng.random() < 0.9 else "w" * rng.randint(50, 400))
        out.append(rng.choice(SPACES))
    if rng.random() < 0.5:
        out.insert(0, rng.choice(SPACES))
    return "".join(out)


@pytest.mark.parametrize("seed", range(12))
def test_normalize_in_slices_equals_the_single_call(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(slices, "SLICE_CHARS", rng.choice([7, 16, 64, 300]))
    text = _text(rng, rng.randint(0, 400))
    assert slices.normalize(text) == " ".join(text.split())
    assert normalize(text) == " ".join(text.split())


def test_normalize_of_one_word_longer_than_many_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slices, "SLICE_CHARS", 10)
    for text in ("x" * 95, " " + "x" * 95 + " y", "a " + "x" * 95, " \n " * 40):
        assert slices.normalize(text) == " ".join(text.split())


@pytest.mark.parametrize("seed", range(12))
def test_search_in_slices_finds_what_the_single_search_finds(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(100 + seed)
    monkeypatch.setattr(slices, "SLICE_CHARS", rng.choice([5, 13, 50]))
    capital = re.compile(r"[A-Z](?<=[a-z0-9][A-Z])")
    for _ in range(30):
        letters = "abcXYZ019 _\n"
        text = "".join(rng.choice(letters) for _ in range(rng.randint(0, 300)))
        found, expected = slices.search(capital, text, 1), capital.search(text)
        assert (found and found.span()) == (expected and expected.span())
        word = re.compile(r"[a-c]{3}")  # a match longer than one character, cut by a slice
        found, expected = slices.search(word, text, 3), word.search(text)
        assert (found and found.span()) == (expected and expected.span())


def test_head_of_is_unchanged_by_the_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    texts = [_text(rng, 300) for _ in range(5)]
    whole = [head_of(t, 120) for t in texts]
    monkeypatch.setattr(slices, "SLICE_CHARS", 31)
    assert [head_of(t, 120) for t in texts] == whole


@pytest.mark.parametrize("seed", range(6))
def test_code_units_counts_utf16_units_as_before(seed: int) -> None:
    rng = random.Random(200 + seed)
    alphabet = ["a", "é", "\u4e2d", "😀", "\U0010ffff", "\ud800", "\udfff", "\n"]
    for _ in range(50):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert code_units(text) == len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
        assert code_units(text, "utf-32") == len(text)


@contextmanager
def _calls_seen(every_thread: bool = False) -> Iterator[list[tuple[str, Any]]]:
    """Each Python-level call and each C call made meanwhile, with what the C call is bound
    to (a `str.split`'s string)."""
    seen: list[tuple[str, Any]] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append(("call", frame.f_code.co_name))
        elif event == "c_call":
            seen.append((getattr(arg, "__qualname__", ""), getattr(arg, "__self__", None)))

    sys.setprofile(profile)
    if every_thread:
        threading.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def test_code_units_of_a_long_line_is_no_loop_per_character() -> None:
    line = "é" + "word " * 200_000  # 1 MB, not ASCII
    with _calls_seen() as seen:
        units = code_units(line)
    assert units == len(line)
    assert len(seen) < 20, f"{len(seen)} calls for one line"


def _longest_split(seen: list[tuple[str, Any]]) -> int:
    return max(
        (len(bound) for name, bound in seen if name == "str.split" and isinstance(bound, str)),
        default=0,
    )


LINE_BREAKS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\n\n"]
PROSE = ["Never", "touch", "it.", "Always", "run", "tests!", "why?", "(see", '"quoted"', "`x`"]
GAPS = [" ", "  ", "\n", " \n ", "\t", "\n\n", "\u2003"]


@pytest.mark.parametrize("seed", range(12))
def test_lines_in_slices_are_the_lines_of_the_text(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(300 + seed)
    monkeypatch.setattr(slices, "SLICE_CHARS", rng.choice([3, 8, 40]))
    for _ in range(20):
        parts = [rng.choice(["ab", "", "x" * 60, " "]) for _ in range(rng.randint(0, 40))]
        text = "".join(part + rng.choice(LINE_BREAKS) for part in parts) + rng.choice(["", "z"])
        assert list(slices.lines(text)) == text.splitlines()


@pytest.mark.parametrize("seed", range(12))
def test_sentence_split_in_slices_equals_the_single_split(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.core.compaction.retention.standing import _SENTENCE_END

    rng = random.Random(400 + seed)
    monkeypatch.setattr(slices, "SLICE_CHARS", rng.choice([4, 9, 33]))
    for _ in range(20):
        words = [rng.choice(PROSE) for _ in range(rng.randint(0, 80))]
        text = "".join(word + rng.choice(GAPS) for word in words)
        assert slices.split(_SENTENCE_END, text) == _SENTENCE_END.split(text)


@pytest.mark.parametrize("seed", range(12))
def test_tags_are_taken_out_as_the_single_substitution_does(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.core.compaction.retention import standing

    rng = random.Random(500 + seed)
    monkeypatch.setattr(slices, "SLICE_CHARS", 5)
    pieces = ["<a>", "</a>", "<ide_opened_file>", "</ide_opened_file>", "<B>", "<", ">", "</"]
    for _ in range(40):
        text = "".join(rng.choice([*pieces, "text ", "\n"]) for _ in range(rng.randint(0, 30)))
        assert standing._without_tags(text) == standing._TAG.sub(" ", text)


def test_sentences_of_a_long_prompt_are_unchanged_by_the_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from baton.core.compaction.retention.standing import sentences, standing_instructions

    rng = random.Random(11)
    blocks = [
        "Never edit the migrations. ",
        "the log says: error. ",
        "<ide_opened_file>Never open this.</ide_opened_file> ",
        "```\nnever in code. Always\n```\n",
        "    Always indented code.\n",
        "From now on answer in German!\n",
        "Don't push to main, ok?",
    ]
    prompt = "".join(rng.choice(blocks) + rng.choice(GAPS) for _ in range(300))
    whole_sentences, whole_rules = sentences(prompt), standing_instructions([prompt])
    monkeypatch.setattr(slices, "SLICE_CHARS", 17)
    assert sentences(prompt) == whole_sentences
    assert standing_instructions([prompt]) == whole_rules
    assert whole_rules[:1] and all("open this" not in rule for rule in whole_rules)


class _Measured:
    """A compiled pattern that notes the length of each text it is given."""

    def __init__(self, pattern: re.Pattern[str], lengths: list[int]) -> None:
        self.pattern, self.lengths = pattern, lengths

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.pattern, name)

        def measured(text: str, *args: Any) -> Any:
            self.lengths.append(len(text) if not args else min(len(text), args[-1] - args[0]))
            return method(text, *args)

        return measured


def _huge_session(tmp_path: Any) -> tuple[Any, Any, Any]:
    """A session holding a 3 MB message, an extractive compaction context and a request
    that summarizes the message."""
    from baton.core.compaction.engine import CompactContext
    from baton.core.compaction.result import CompactRequest
    from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
    from baton.core.conversation.messages import MessageInput
    from baton.core.conversation.store import SessionStore
    from baton.core.settings import Settings
    from baton.core.usage.estimator import Estimator

    estimator = Estimator()
    store = SessionStore(tmp_path, estimator.count_message)
    session = store.create("huge", "claude-sonnet-4-5", None)
    rng = random.Random(3)
    words = ["alpha", "beta", "file.py", "error:", "x=1", "Never.", "<b>", "</b>"]
    huge = " ".join(rng.choice(words) for _ in range(500_000))
    turns = [MessageInput(role="user", content=huge), MessageInput(role="assistant", content="ok")]
    for i in range(3):
        turns += [
            MessageInput(role="user", content=f"question {i}"),
            MessageInput(role="assistant", content=f"answer {i}"),
        ]
    appended = session.append(turns)
    settings = Settings.model_validate({"summarizer": "extractive"})
    summarizer = ExtractiveSummarizer(estimator.count_text)
    ctx = CompactContext(settings=settings, estimator=estimator, summarizer=summarizer)
    request = CompactRequest(direction="up_to", pivot_message_id=appended.message_ids[1])
    return session, ctx, request


@pytest.mark.parametrize("newline", ["x\n", "x"])  # many lines, or one line of 3 MB
def test_standing_instructions_of_a_huge_prompt_take_no_long_call(
    monkeypatch: pytest.MonkeyPatch, newline: str
) -> None:
    """The standing instructions of a 3 MB prompt: no regular expression call is given more
    than a slice's text or two, and neither is `str.splitlines`."""
    from baton.core.compaction.retention import standing

    rng = random.Random(5)
    words = ["Never", "push.", "<b>", "</b>", newline, "ok"]
    prompt = " ".join(rng.choice(words) for _ in range(600_000))
    slice_chars = slices.SLICE_CHARS
    monkeypatch.setattr(slices, "SLICE_CHARS", len(prompt) + 1)  # one call each
    whole = standing.standing_instructions([prompt])
    monkeypatch.setattr(slices, "SLICE_CHARS", slice_chars)
    lengths: list[int] = []
    # (`_FENCE` is left out: anchored at a line's start, it reads its leading spaces only)
    for name in ("_TAG", "_OPENING_TAG", "_SENTENCE_END"):
        monkeypatch.setattr(standing, name, _Measured(getattr(standing, name), lengths))
    with _calls_seen() as seen:
        rules = standing.standing_instructions([prompt])
    assert rules == whole and len(rules) > 100
    lines = [len(b) for name, b in seen if name == "str.splitlines" and isinstance(b, str)]
    assert 0 < max(lengths) <= 2 * slices.SLICE_CHARS
    assert 0 < max(lines) <= 2 * slices.SLICE_CHARS


def test_a_compaction_splits_no_text_longer_than_a_slice(tmp_path: Any) -> None:
    """The extractive summary of a session holding a 3 MB message: no `str.split` over more
    than a slice (each one holds the GIL, and so every other session, while it runs)."""
    from baton.core.compaction import engine

    session, ctx, request = _huge_session(tmp_path)
    import asyncio

    with _calls_seen(every_thread=True) as seen:
        result = asyncio.run(engine.compact(session, request, ctx))
    assert result.post_tokens < result.pre_tokens
    assert 0 < _longest_split(seen) <= 2 * slices.SLICE_CHARS  # a slice runs to a space


def test_the_commit_on_the_loop_normalizes_no_huge_prompt(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compaction's summary is made in a thread and committed on the server's loop: the
    commit finds the summarized facts' normalized forms made (`SpanFacts.unique_prompts`)
    and normalizes nothing as long as the 3 MB prompt, which would stop the loop."""
    import asyncio

    from baton.core.compaction import engine
    from baton.core.compaction.prepared_summary import check_retention

    session, ctx, request = _huge_session(tmp_path)
    prepared = asyncio.run(engine.summarize(session, request, ctx, session.view_messages()))
    prepared.retained = check_retention(prepared, ctx, str(session.transcript.path))
    lengths: list[int] = []
    normalize_whole = slices.normalize

    def measured(text: str) -> str:
        lengths.append(len(text))
        return normalize_whole(text)

    monkeypatch.setattr(slices, "normalize", measured)
    result = engine.commit_summary(session, prepared, ctx)
    assert result.post_tokens < result.pre_tokens
    assert lengths and max(lengths) < 100_000, f"the commit normalized {max(lengths)} characters"


def test_a_compaction_does_not_count_a_huge_prompt_whole(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The summary needs to know that the 3 MB prompt does not fit, not its exact count:
    what the compaction counts is a small part of it (it was counted whole twice, seconds
    of a 20 MB message's compaction)."""
    import asyncio

    from baton.core.compaction import engine
    from baton.core.usage.estimator import Estimator

    counted: list[int] = []
    count_text = Estimator.count_text

    def measured(self: Estimator, text: str) -> int:
        counted.append(len(text))
        return count_text(self, text)

    monkeypatch.setattr(Estimator, "count_text", measured)
    session, ctx, request = _huge_session(tmp_path)
    huge = max(len(m.text()) for m in session.view_messages())
    counted.clear()  # the append's count: the compaction's alone from here
    result = asyncio.run(engine.compact(session, request, ctx))
    assert result.post_tokens < result.pre_tokens
    assert 0 < sum(counted) < huge // 2, f"{sum(counted)} characters counted"


@pytest.mark.parametrize("seed", range(4))
def test_first_words_are_the_start_of_the_normalized_text(seed: int) -> None:
    rng = random.Random(seed)
    texts = [_text(rng, rng.randint(0, 30)) for _ in range(rng.randint(1, 4))]
    texts.append(rng.choice(SPACES) * 3)
    whole = " ".join(" ".join(texts).split())
    for chars in (0, 1, 10, 60, 5_000):
        start = slices.first_words(texts, chars)
        assert whole.startswith(start) and len(start) >= min(len(whole), chars + 1)


def test_a_preview_of_a_huge_message_splits_only_its_start() -> None:
    """`baton show` of a session holding a 50 MB message peaked at 720 MB: its one-line
    preview split the whole text into its millions of words to show sixty characters."""
    text = _text(random.Random(7), 400_000)  # some 3 MB
    message = Message(role="user", content=[TextBlock(text=text)])
    tracemalloc.start()
    try:
        shown = preview(message)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert shown == " ".join(text.split())[:59] + "…"
    assert peak < 100_000
