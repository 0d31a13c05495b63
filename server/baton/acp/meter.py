"""The meter as ACP sees it: a `usage_update` with the same figure `baton/usage` gives, and
the session's cost when the price of every reply's model is known."""

from __future__ import annotations

import weakref

from acp.schema import Cost, UsageUpdate

from baton.core.conversation.session import Session
from baton.core.models.prices import cost_usd, price_of
from baton.core.usage.budget import Usage

_memo: weakref.WeakKeyDictionary[Session, tuple[tuple[int, str], float | None]] = (
    weakref.WeakKeyDictionary()
)


def session_cost(session: Session) -> float | None:
    """What the session's replies cost in US dollars (every message ever recorded, the
    compacted ones too), or None when a reply's model has no known price. Worked out
    again only when the session holds more messages, or another model, than last time."""
    key = (len(session.messages), session.model)
    known = _memo.get(session)
    if known is not None and known[0] == key:
        return known[1]
    cost = _cost(session)
    _memo[session] = (key, cost)
    return cost


def _cost(session: Session) -> float | None:
    total = 0.0
    for message in session.messages.values():
        if message.role != "assistant" or message.usage is None or not message.usage.is_real:
            continue
        if message.is_synthetic:
            continue
        price = price_of(message.model or session.model)
        if price is None:
            return None
        usage = message.usage
        total += cost_usd(
            price,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            cache_read_input_tokens=usage.cache_read_input_tokens,
        )
    if total == 0.0 and price_of(session.model) is None:
        return None  # no reply yet, and the price of what would reply is not known
    return round(total, 6)


def usage_update(usage: Usage, session: Session | None) -> UsageUpdate:
    """`used` is the usage's tokens in context, `size` the model's context window."""
    cost = session_cost(session) if session is not None else None
    return UsageUpdate(
        session_update="usage_update",
        used=usage.used_tokens,
        size=usage.context_window,
        cost=Cost(amount=cost, currency="USD") if cost is not None else None,
    )
