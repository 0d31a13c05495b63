"""Shared fixtures for the core unit tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

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
def store(tmp_path: Path, estimator: Estimator) -> Iterator[SessionStore]:
    sessions = SessionStore(tmp_path, estimator.count_message)
    yield sessions
    sessions.close()
