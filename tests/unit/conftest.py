"""Shared fixtures for the core unit tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conversations import char_count

from baton.core.conversation.messages import Message
from baton.core.conversation.store import SessionStore
from baton.core.settings import Settings
from baton.core.usage.estimator import Encoder, Estimator, load_cl100k


@pytest.fixture(scope="session")
def cl100k() -> Encoder:
    """The offline cl100k_base encoding, loaded once for the whole run."""
    return load_cl100k()


@pytest.fixture
def estimator(cl100k: Encoder) -> Estimator:
    """A fresh estimator (its own cache and calibration) over the shared encoding."""
    return Estimator(encoder=cl100k)


@pytest.fixture
def settings() -> Settings:
    return Settings()


@pytest.fixture
def count_message(request: pytest.FixtureRequest, estimator: Estimator) -> Callable[[Message], int]:
    """How `store` counts a message: the module's own `COUNT` if it has one (a count to
    check by hand), else the estimator."""
    count: Callable[[Message], int] = getattr(request.module, "COUNT", estimator.count_message)
    return count


@pytest.fixture
def store(tmp_path: Path, count_message: Callable[[Message], int]) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, count_message)
    yield sessions
    sessions.close()


@pytest.fixture
def plain_store(tmp_path: Path) -> Iterator[SessionStore]:
    """A store under tmp_path/data counting with `char_count` (for structure, not figures)."""
    sessions = SessionStore(tmp_path / "data", char_count)
    yield sessions
    sessions.close()
