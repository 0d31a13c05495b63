"""The ACP meter's cost follows the session's model."""

from __future__ import annotations

from pathlib import Path

from conversations import ten_per_block

from baton.acp.meter import session_cost
from baton.core.conversation.store import SessionStore


def test_the_cost_follows_a_model_switch_before_any_reply(tmp_path: Path) -> None:
    """The cost was worked out again only when the session held more messages: switched
    from a model with no known price to a priced one, the cost stayed absent until the next
    message (and the other way round, a price stayed for a model that has none)."""
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create(model="some-model-without-a-price")
    assert session_cost(session) is None
    session.set_meta(model="claude-sonnet-4-5")
    assert session_cost(session) == 0.0
    session.set_meta(model="some-model-without-a-price")
    assert session_cost(session) is None
    store.close()
