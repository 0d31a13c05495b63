"""The usage line's hover words auto-compact as the headline above it does: with auto-compact
off (or paused) it names no point at which it runs, and says what a compaction now would
do, not what auto-compact would."""

from __future__ import annotations

import pytest

from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.settings import Settings
from baton.core.settings_sections import AutoCompactSettings
from baton.core.usage.budget import Usage
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage
from baton.lsp.session_document.hover import usage_hover


def _usage(
    store: SessionStore, estimator: Estimator, enabled: bool, paused: bool = False
) -> tuple[Session, Usage]:
    session = store.create(model="claude-sonnet-4-5")
    session.append([MessageInput(role="user", content="question " * 300)])
    session.append([MessageInput(role="assistant", content="answer " * 300)])
    settings = Settings(auto_compact=AutoCompactSettings(enabled=enabled))
    return session, compute_usage(session, settings, estimator, auto_paused=paused)


@pytest.mark.parametrize(
    ("enabled", "paused", "said"), [(False, False, "off"), (True, True, "paused")]
)
def test_off_or_paused_the_hover_names_no_auto_compact_point(
    store: SessionStore, estimator: Estimator, enabled: bool, paused: bool, said: str
) -> None:
    session, usage = _usage(store, estimator, enabled, paused)
    assert f"auto-compact {said}" in usage.text.headline
    plan = (session.view[:1], session.view[1:])
    text = usage_hover(usage, plan, {m.id: m for m in session.view_messages()})
    assert f"auto-compact at {usage.auto_compact_threshold:,}" not in text
    assert "Auto-compact now would" not in text
    assert "A compaction now would summarize 1 message" in text
    assert f"blocked at {usage.blocking_limit:,}" in text


def test_on_the_hover_says_where_and_what_auto_compact_would_do(
    store: SessionStore, estimator: Estimator
) -> None:
    session, usage = _usage(store, estimator, enabled=True)
    plan = (session.view[:1], session.view[1:])
    text = usage_hover(usage, plan, {m.id: m for m in session.view_messages()})
    assert f"auto-compact at {usage.auto_compact_threshold:,}" in text
    assert "Auto-compact now would summarize 1 message" in text
    assert "Auto-compact would have nothing to summarize now." in usage_hover(usage, None, {})
