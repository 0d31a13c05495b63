"""A huge message worked without one long C call or a Python loop per character (issue 26,
item 8): the compaction's normalizing and searching go a slice at a time (`slices`), with
the same answers as the single calls, and the session document measures a 20 MB line
without visiting its characters one by one on the event loop. Seeded; nothing is timed."""

from __future__ import annotations

import random
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from baton.core.compaction import slices
from baton.core.compaction.cuts import head_of
from baton.core.compaction.retention.facts import normalize
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


def test_a_compaction_splits_no_text_longer_than_a_slice(tmp_path: Any) -> None:
    """The extractive summary of a session holding a 3 MB message: no `str.split` over more
    than a slice (each one holds the GIL, and so every other session, while it runs)."""
    from baton.core.compaction import engine
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
    words = ["alpha", "beta", "file.py", "error:", "x=1"]
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
    import asyncio

    with _calls_seen(every_thread=True) as seen:
        result = asyncio.run(engine.compact(session, request, ctx))
    assert result.post_tokens < result.pre_tokens
    assert 0 < _longest_split(seen) <= 2 * slices.SLICE_CHARS  # a slice runs to a space
