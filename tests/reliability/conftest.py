"""The crash suites' shared pieces: the warm launcher and how long to run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from servers import Launcher, launcher


@pytest.fixture(scope="session")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    """One warm launcher for every crash suite (its start costs what one server's would)."""
    with launcher(tmp_path_factory.mktemp("launcher")) as started:
        yield started
