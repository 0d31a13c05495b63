"""Fixtures shared by every test layer: the fake Anthropic API and a guard against the real one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fake_anthropic import FakeAnthropic

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
