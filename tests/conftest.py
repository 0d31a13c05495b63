"""Fixtures shared by every test layer: the fake Anthropic API and a guard against the real one."""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from baton_testkit.fake_anthropic import FakeAnthropic

if TYPE_CHECKING:
    from baton.core.model_api.client import AnthropicClient

FAKE_KEY = "sk-ant-test-SECRET-123"  # distinctive, so tests can prove it leaks nowhere

# Nothing listens on the discard port: a test that forgets the fake fails fast instead of
# reaching api.anthropic.com.
UNREACHABLE_API = "http://127.0.0.1:9"

# The real transcript corpus is not part of the repository: its tests form an extra tier
# that runs only when BATON_CORPUS names the folder (CI sets it through .ci/run).
CORPUS_ENV = "BATON_CORPUS"
CORPUS_DESELECTED = pytest.StashKey[int]()


def corpus_folder() -> Path | None:
    named = os.environ.get(CORPUS_ENV, "")
    return Path(named).expanduser().resolve() if named else None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"corpus: reads the real transcript corpus (runs when {CORPUS_ENV} is set)"
    )
    folder = corpus_folder()
    if folder is not None and not folder.is_dir():
        raise pytest.UsageError(f"{CORPUS_ENV}={os.environ[CORPUS_ENV]} is not a folder")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:  # a test that reads the corpus is in its tier, marked or not
        if "corpus_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.corpus)
    if corpus_folder() is not None:
        return
    deselected = [item for item in items if item.get_closest_marker("corpus")]
    if deselected:
        items[:] = [item for item in items if not item.get_closest_marker("corpus")]
        config.hook.pytest_deselected(items=deselected)
    config.stash[CORPUS_DESELECTED] = len(deselected)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """What the tests left for the cyclic collector (failed requests' tracebacks holding
    their coroutines' frames) is collected before the plugins' end of run: hypothesis's
    summary imports hypothesis when no test did, through pytest's assertion rewriting, and
    a collection that runs inside that parse makes Python 3.11's AST conversion fail with
    "SystemError: AST constructor recursion depth mismatch", after every test passed (seen
    running tests/unit/test_cli_compact_draft.py with test_rpc_client_server_end.py)."""
    gc.collect()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    count = config.stash.get(CORPUS_DESELECTED, 0)
    if count:
        terminalreporter.write_line(
            f"corpus tier not selected ({count} tests deselected): to run it, set "
            f"{CORPUS_ENV} to the folder of real transcripts, e.g. "
            f"{CORPUS_ENV}=../shared/corpus bash scripts/test"
        )


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The real Claude Code transcripts named by BATON_CORPUS (read in place, never copied)."""
    folder = corpus_folder()
    assert folder is not None, f"a corpus test ran without {CORPUS_ENV}"
    return folder


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        help="run the reliability suites for hundreds of iterations (also BATON_LONG=1)",
    )


@pytest.fixture(autouse=True)
def _no_real_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees a developer's real key or the real endpoint."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", UNREACHABLE_API)


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A fake Messages API on an ephemeral local port; ANTHROPIC_BASE_URL points at it."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        yield fake


@pytest.fixture
async def anthropic_client(
    fake_anthropic: FakeAnthropic,
) -> AsyncIterator[Callable[..., AnthropicClient]]:
    """Makes AnthropicClients on the fake (key FAKE_KEY, few retries) and closes them after
    the test, while its event loop still runs."""
    from baton.core.model_api.client import AnthropicClient

    made: list[AnthropicClient] = []

    def make(**options: Any) -> AnthropicClient:
        options.setdefault("max_retries", 2)
        client = AnthropicClient(
            options.pop("api_key", FAKE_KEY), base_url=fake_anthropic.base_url, **options
        )
        made.append(client)
        return client

    yield make
    for client in made:
        await client.aclose()
