"""A load learns a session's newest usage once, from the view as it stood when that usage
came, and learns what the session learned as it was written."""

from __future__ import annotations

import random

import pytest
from conversations import Convo, char_count, reload, summary_boundary

from baton.core.conversation import replayed_view
from baton.core.conversation.messages import ApiUsage, Message, TextBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore

COUNT = char_count


def usage(n: int) -> ApiUsage:
    return ApiUsage(input_tokens=1_000 + 10 * n, output_tokens=5)


def tool_turn(convo: Convo, n: int, thinking: str | None = None) -> None:
    """A response calling two tools in parallel, each of its records with its usage."""
    for message in convo.tools("Read", "Grep", thinking=thinking):
        if message.role == "assistant":
            message.usage = usage(n)


def test_a_load_works_out_where_the_newest_reply_starts_once(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = store.create()
    convo = Convo()
    for n in range(30):
        convo.user(f"prompt {n}")
        if n % 3:
            tool_turn(convo, n)
        else:
            convo.reply(usage=usage(n))
    session.append(convo.messages)
    store.close()
    starts = _response_starts(monkeypatch)
    loaded = store.get(session.session_id)
    newest = [m for m in convo.messages if m.usage is not None][-1]
    assert loaded.last_usage is not None
    assert loaded.last_usage.message_id == newest.id
    assert starts == [loaded.view.index(newest.id)]  # the newest usage record only


def test_records_kept_as_they_were_between_turns_do_not_make_a_load_learn_a_usage(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = store.create()
    convo = Convo()
    for n in range(10):  # an imported session: records of another kind between its turns
        start = len(convo.messages)
        convo.user(f"prompt {n}")
        convo.reply(usage=usage(n))
        session.append(convo.messages[start:])
        session.transcript.append({"type": "opaque", "record": {"type": "system", "n": n}})
    store.close()
    starts = _response_starts(monkeypatch)
    loaded = store.get(session.session_id)
    assert len(loaded.opaque) == 10
    assert loaded.last_usage is not None
    assert loaded.last_usage.message_id == convo.messages[-1].id
    assert starts == [len(loaded.view) - 1]  # the newest usage record only


def _step(session: Session, convo: Convo, r: random.Random, n: int) -> None:
    """One change a live session may see: a turn (its usage on some records), a reply
    written again, a compaction, its undo, a pin."""
    choice = r.random()
    if choice < 0.5 or len(session.view) < 4:
        start = len(convo.messages)
        convo.user(f"prompt {n}")
        if r.random() < 0.5:
            tool_turn(convo, n, thinking="hm" if r.random() < 0.5 else None)
        convo.reply(f"reply {n}", thinking="so" if r.random() < 0.3 else None, usage=usage(n))
        session.append(convo.messages[start:])
    elif choice < 0.65:
        replies = [m for m in session.view_messages() if m.role == "assistant"]
        if replies:
            old = r.choice(replies)
            new = old.model_copy(update={"content": [TextBlock(text=f"again {n}")]})
            session.replace_message(new)
    elif choice < 0.8:
        view = session.view
        cut = r.randint(1, max(1, len(view) // 2))
        session.commit_boundary(summary_boundary(session, view[:cut]))
    elif choice < 0.9 and session.active:
        session.uncompact()
    else:
        session.set_pinned(r.choice(session.view), r.random() < 0.5)


@pytest.mark.parametrize("seed", range(6))
def test_a_load_learns_the_usage_the_session_learned_as_it_was_written(
    store: SessionStore, seed: int
) -> None:
    r = random.Random(seed)
    session = store.create()
    convo = Convo()
    for n in range(25):
        _step(session, convo, r, n)
        assert reload(session).last_usage == session.last_usage


def _response_starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The view indexes a load works a response's start out from (learning a usage), as
    it asks them from now on."""
    starts: list[int] = []
    real = replayed_view.response_start

    def counted(messages: dict[str, Message], view: list[str], index: int) -> int:
        starts.append(index)
        return real(messages, view, index)

    monkeypatch.setattr(replayed_view, "response_start", counted)
    return starts
