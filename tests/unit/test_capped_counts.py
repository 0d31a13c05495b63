"""Counts capped at a figure: exact up to it, a long text told apart by a head of it, and the
summary's and ledger's sections unchanged for it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from baton.core.compaction.cuts import count_within, cut_with_marker, remembered
from baton.core.compaction.retention.ledger_text import write_ledger
from baton.core.compaction.summary.user_messages import prompts_section
from baton.core.conversation.messages import Message
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_claude_code
from baton.core.usage import cl100k as cl100k_module
from baton.core.usage.cl100k import CAPPED_HEAD_CHARS, Cl100k, Encoder, piece_end
from baton.core.usage.estimator import CHUNK_CHARS, Estimator
from baton_testkit.claude_code_gen import CASES, case
from baton_testkit.claude_code_text import Text

TRICKY = [
    "they'll go and it's fine, I'M here, dog's  bone, we'VE seen it",
    "café au lait, naïve test, 日本語 text, Ünïcödé word end",
    "abc 123 a1 b 12345 x9 y",
    "word   word  word \n word\t word \r\n word ",
    "trailing spaces   ",
    "   leading spaces and a a a a a a a a a",
    "end. Next, (paren) [bracket] {brace} a-b a_b a.b a/b",
    "lone \ud800 surrogate and \udfff another one here",
    "emoji 😀 x 👍🏽 y and e\u0301 combining x",
    "a" + " " * 300 + "b c d",
    "path/to/some_file.py line 10 in function_name raise ValueError x",
]


def session_texts(store: SessionStore, tmp_path: Path) -> list[str]:
    """The prompts, replies, tool inputs and results of some generated sessions."""
    texts: list[str] = []
    for name in sorted(CASES)[:6]:
        session = import_claude_code(case(name).write(tmp_path / f"{name}.jsonl"), store)
        texts += [_message_text(m) for m in session.view_messages()]
    return [t for t in texts if t]


def _message_text(message: Message) -> str:
    parts = [message.text()]
    parts += [str(r.content) for r in message.tool_results()]
    parts += [str(u.input) for u in message.tool_uses()]
    return "\n".join(parts)


def random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = "aZq  '\n\t.,-_9é日😀\u0301sStTlLvVrReEdDmM\r"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))) for _ in range(count)]


def splits(text: str) -> list[int]:
    """Every position piece_end may answer: a space after an ASCII letter."""
    return [
        p
        for p in range(1, len(text))
        if text[p] == " " and text[p - 1].isascii() and text[p - 1].isalpha()
    ]


def test_a_text_counts_as_its_parts_at_every_split_piece_end_may_choose(
    cl100k: Encoder, store: SessionStore, tmp_path: Path
) -> None:
    assert isinstance(cl100k, Cl100k)
    texts = TRICKY + random_texts(3_000, seed=5) + session_texts(store, tmp_path)
    checked = 0
    for text in texts:
        text = text[:3_000]
        whole = cl100k.count(text)
        for p in splits(text)[:60]:
            assert cl100k.count(text[:p]) + cl100k.count(text[p:]) == whole, (text, p)
            checked += 1
    assert checked > 5_000


def test_piece_end_is_the_last_split_in_the_upper_half_of_the_limit() -> None:
    text = "alpha beta, gamma  delta é epsilon"
    for limit in range(1, len(text)):
        found = [p for p in splits(text) if limit // 2 < p <= limit]
        assert piece_end(text, limit) == (found[-1] if found else 0), limit
        for start in range(len(text) - limit):
            found = [p for p in splits(text) if start + limit // 2 < p <= start + limit]
            assert piece_end(text, limit, start) == (found[-1] if found else 0), (limit, start)


@pytest.mark.parametrize("piece", [16, 64, 500])
def test_a_long_text_counted_a_piece_at_a_time_counts_as_encoded_whole(
    cl100k: Encoder,
    store: SessionStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    piece: int,
) -> None:
    assert isinstance(cl100k, Cl100k)
    texts = TRICKY + random_texts(500, seed=piece) + session_texts(store, tmp_path)
    texts += ["\n".join(texts), " ".join(TRICKY) * 40, "x" * 5_000 + " y" * 300]
    whole = [len(cl100k.encode(text)) for text in texts]
    monkeypatch.setattr(cl100k_module, "COUNT_PIECE_CHARS", piece)
    assert [cl100k.count(text) for text in texts] == whole
    assert sum(len(t) > 2 * piece and bool(piece_end(t, piece)) for t in texts) >= 5


@pytest.mark.parametrize("cap", [0, 1, 5, 22, 23, 40])
def test_a_capped_count_is_exact_up_to_the_cap_and_above_it_otherwise(
    cl100k: Encoder, cap: int, store: SessionStore, tmp_path: Path
) -> None:
    assert isinstance(cl100k, Cl100k)
    text = Text(random.Random(cap))
    texts = TRICKY + session_texts(store, tmp_path)
    texts += [text.paragraph(n) for n in range(1, 12)] + ["word " * 200, " " * 2_000 + "x"]
    for sample in texts:
        whole = cl100k.count(sample)
        capped = cl100k.count_capped(sample, cap)
        if whole <= cap:
            assert capped == whole
        else:
            assert cap < capped <= whole


class SpyCl100k(Cl100k):
    """cl100k that records every text it counts."""

    def __init__(self, inner: Cl100k) -> None:
        super().__init__(inner._core)
        self.seen: list[str] = []

    def count(self, text: str) -> int:
        self.seen.append(text)
        return super().count(text)


def test_an_estimator_counts_only_a_head_of_a_long_text_to_tell_it_is_over_a_cap(
    cl100k: Encoder,
) -> None:
    assert isinstance(cl100k, Cl100k)
    spy = SpyCl100k(cl100k)
    estimator = Estimator(encoder=spy)
    long = Text(random.Random(3)).paragraph(30)
    assert estimator.count_capped(long, 23) > 23
    assert spy.seen and all(len(seen) <= 23 * CAPPED_HEAD_CHARS for seen in spy.seen)
    assert estimator.count_capped("a short one", 23) == estimator.count_text("a short one")
    counter = remembered(estimator.count_text)
    spy.seen.clear()
    assert count_within(long, 23, counter) > 23 and count_within(long, 10, counter) > 10
    assert len(spy.seen) == 1 and len(spy.seen[0]) < len(long)  # the bound is remembered
    assert count_within(long, 10**6, counter) == estimator.count_text(long)  # then counted
    plain = remembered(lambda text: estimator.count_text(text))
    spy.seen.clear()
    assert count_within(long, 23, plain) == estimator.count_text(long)
    assert long in spy.seen  # any other counter counts the text whole


def test_a_text_longer_than_a_chunk_is_counted_only_until_it_passes_the_cap(
    cl100k: Encoder,
) -> None:
    """Past CHUNK_CHARS a text counts as the sum of its chunks: a capped count stops at
    the chunk that passes the cap (a 20 MB paste is not counted whole to learn that it
    does not fit), and is the count itself when that is within the cap."""
    assert isinstance(cl100k, Cl100k)
    spy = SpyCl100k(cl100k)
    estimator = Estimator(encoder=spy)
    paragraph = Text(random.Random(5)).paragraph(40) + "\n"
    long = paragraph * (3 * CHUNK_CHARS // len(paragraph) + 1)
    assert len(long) > 3 * CHUNK_CHARS
    whole = estimator.count_text(long)
    spy.seen.clear()
    capped = estimator.count_capped(long, 500)
    assert 500 < capped <= whole
    assert sum(len(seen) for seen in spy.seen) <= CHUNK_CHARS
    assert estimator.count_capped(long, whole) == whole
    assert estimator.count_capped(long, whole - 1) > whole - 1


def test_without_cl100k_a_capped_count_is_the_count(tmp_path: Path) -> None:
    estimator = Estimator(bpe_path=tmp_path / "missing.tiktoken")
    text = "word " * 500
    assert not estimator.exact
    assert estimator.count_capped(text, 3) == estimator.count_text(text) == len(text) // 4


def prompt_sets() -> list[list[str]]:
    text = Text(random.Random(11))
    varied = [text.paragraph(random.Random(n).randint(1, 9)) for n in range(120)]
    varied += [f"short {n}" for n in range(40)] + ["x" * 900, "y " * 400]
    many = [f"request {n}: module_{n} " + text.paragraph(4) for n in range(700)]
    return [varied, many, varied[:10]]


@pytest.mark.parametrize("budget", [0, 50, 400, 1_500, 3_000, 8_000, 10**6])
def test_the_prompts_section_and_the_ledger_are_those_of_a_plain_count(
    cl100k: Encoder, budget: int
) -> None:
    estimator = Estimator(encoder=cl100k)
    for prompts in prompt_sets():
        assert prompts_section(prompts, budget, remembered(estimator.count_text)) == (
            prompts_section(prompts, budget, remembered(lambda t: estimator.count_text(t)))
        )
        paths = [f"/src/pkg/module_{n}.py" for n in range(len(prompts) // 3)]
        errors = [f"ValueError: bad value {n} in " + "x" * n for n in range(len(prompts) // 5)]
        assert write_ledger(prompts, paths, errors, budget, estimator.count_text, "t.jsonl") == (
            write_ledger(
                prompts, paths, errors, budget, lambda t: estimator.count_text(t), "t.jsonl"
            )
        )
    long = "word " * 300
    for cap in (0, 5, 23, 200, 2_000):
        assert cut_with_marker(long, cap, remembered(estimator.count_text)) == cut_with_marker(
            long, cap, lambda t: estimator.count_text(t)
        )


def test_too_many_prompts_are_not_counted_whole(cl100k: Encoder) -> None:
    assert isinstance(cl100k, Cl100k)
    spy = SpyCl100k(cl100k)
    estimator = Estimator(encoder=spy)
    text = Text(random.Random(2))
    # longer than any cut reads (a cut's search counts heads of up to 24 characters a token)
    prompts = [f"request {n}: " + text.paragraph(16) for n in range(600)]
    assert min(map(len, prompts)) > 24 * 24
    section = prompts_section(prompts, 3_000, remembered(estimator.count_text))
    assert "of 600 user messages left out" in section.split("\n", 1)[0]
    assert not ({f"- {p}" for p in prompts} | set(prompts)) & set(spy.seen)
    ledger = write_ledger(prompts, [], [], 2_000, estimator.count_text, None)
    assert "Left out for lack of room" in ledger
    assert not {p[:500] for p in prompts} & {seen[2:502] for seen in spy.seen if len(seen) > 502}
