"""A serving process lets its event loop's thread take the interpreter from a worker
thread (an import, a render, a compaction in a thread) within a millisecond, not Python's
five: each read and write of a request answered meanwhile waits that long."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from baton.acp import server as acp_server
from baton.core.background import SWITCH_S
from baton.core.errors import InvalidParams
from baton.lsp import server as lsp_server


class Started(Exception):
    """Raised where the server would start serving."""


@pytest.fixture(autouse=True)
def python_default() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield
    sys.setswitchinterval(before)


def test_the_language_server_sets_it_before_it_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    def started() -> None:
        assert sys.getswitchinterval() == pytest.approx(SWITCH_S)
        raise Started

    monkeypatch.setattr(lsp_server, "share_one_arena", lambda: False)
    monkeypatch.setattr(lsp_server, "configure_logging", lambda level: None)
    monkeypatch.setattr(lsp_server, "create_server", started)
    with pytest.raises(Started):
        lsp_server.serve()


def test_the_acp_agent_sets_it_before_it_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(acp_server, "read_settings", lambda path, warn: {})
    monkeypatch.setattr(acp_server, "stdio_problem", lambda: "not pipes")
    with pytest.raises(InvalidParams):
        acp_server.run()
    assert sys.getswitchinterval() == pytest.approx(SWITCH_S)
