"""Fixtures shared by every test layer: the fake Anthropic API and a guard against the real one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from fake_anthropic import FakeAnthropic

if TYPE_CHECKING:
    from baton.core.llm import AnthropicClient

FAKE_KEY = "sk-ant-test-SECRET-123"  # distinctive, so tests can prove it leaks nowhere

# Nothing listens on the discard port: a test that forgets the fake fails fast instead of
# reaching api.anthropic.com.
UNREACHABLE_API = "http://127.0.0.1:9"


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
    from baton.core.llm import AnthropicClient

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
