"""The benchmark's session generator: seeded, sized by Baton's own count, within the API rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message
from baton.core.conversation.store import SessionStore
from baton.core.usage.estimator import default_estimator
from baton_testkit.bench_modules import bench_module

sessions = bench_module("sessions")

SHAPES = {
    "thinking",
    "parallel-interleaved",
    "parallel-grouped",
    "error-result",
    "code-in-reply",
    "prompt-with-code",
    "prompt-with-error",
}


Counter = Callable[[Message], int]


@pytest.fixture(scope="module")
def count() -> Counter:
    return default_estimator().count_message


@pytest.mark.parametrize("size", [1_000, 10_000, 100_000])
def test_a_session_lands_within_two_percent_of_its_size(size: int, count: Counter) -> None:
    built = sessions.build(size, 3, count)
    assert abs(built.tokens - size) <= size * 0.02
    assert built.tokens == sum(count(m) for m in built.messages)
    assert not invariant_violations(built.messages)


def test_a_100k_session_holds_every_shape(count: Counter) -> None:
    built = sessions.build(100_000, 5, count)
    assert set(built.shapes) >= SHAPES
    assert any(m.tool_uses() and len(m.tool_uses()) > 1 for m in built.messages)


def test_one_seed_gives_one_byte_stream(tmp_path: Path, count: Counter) -> None:
    paths = [
        sessions.write(sessions.build(10_000, seed, count), tmp_path / name)
        for seed, name in ((7, "a"), (7, "b"), (8, "c"))
    ]
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()


def test_the_store_opens_a_written_session(tmp_path: Path, count: Counter) -> None:
    built = sessions.build(10_000, 9, count)
    sessions.write(built, tmp_path)
    store = SessionStore(tmp_path, count)
    session = store.get(built.session_id)
    assert [m.id for m in session.view_messages()] == [m.id for m in built.messages]
    assert sum(m.tokens for m in session.view_messages()) == built.tokens
    assert not session.damage.describe()
    store.close()
