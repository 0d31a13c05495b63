"""The budget note: near the thresholds the reply request tells the model its context used,
left and where auto-compact fires, as context-awareness tags or a system note; counted,
never stored, off by a setting. On the fake API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import BudgetNoteSettings, Settings
from baton.core.turn.chat import ChatContext, send
from baton.core.usage.budget_note import context_aware
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic

MakeClient = Callable[..., AnthropicClient]


def words(count: int) -> str:
    return " ".join(f"lorem{i % 10}" for i in range(count))


def filled(store: SessionStore, model: str, turns: int) -> Session:
    session = store.create("note", model, "You are careful.")
    for turn in range(turns):
        session.append(
            [
                MessageInput(role="user", content=f"step {turn}: " + words(480)),
                MessageInput(role="assistant", content=f"did {turn}: " + words(480)),
            ]
        )
    return session


def settings(**note: Any) -> Settings:
    # a 20,000-token window: threshold 13,400, warning from 9,400 (see BEHAVIOR.md)
    return Settings(context_window=20_000, budget_note=BudgetNoteSettings(**note))


async def ask(
    fake: FakeAnthropic, make: MakeClient, session: Session, estimator: Estimator, s: Settings
) -> dict[str, Any]:
    fake.reply("ok")
    ctx = ChatContext(settings=s, estimator=estimator, client=make())
    await send(session, content="go on", tools=None, ctx=ctx)
    return fake.message_requests()[-1].body


def all_text(body: dict[str, Any]) -> str:
    parts = [str(body.get("system", ""))]
    for message in body["messages"]:
        content = message["content"]
        parts += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return "\n".join(parts)


async def test_a_context_aware_model_gets_the_usage_tags_in_the_last_user_turn(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    session = filled(store, "claude-haiku-4-5", 5)  # ~10,000 tokens: past the warning
    body = await ask(fake_anthropic, anthropic_client, session, estimator, settings())
    last = body["messages"][-1]
    assert last["role"] == "user"
    note = last["content"][-1]["text"]
    assert note.startswith("<system_warning>Token usage: ")
    used, window = note.removeprefix("<system_warning>Token usage: ").split(";")[0].split("/")
    assert int(window) == 20_000 and 9_000 < int(used) < 13_400
    assert "Auto-compact summarizes the conversation at 13,400 tokens." in note
    # never stored: the transcript's prompt is what the user sent
    stored = [m for m in session.view_messages() if m.role == "user"][-1]
    assert stored.text() == "go on"
    assert "system_warning" not in (session.transcript.path.read_text())


async def test_other_models_get_a_plain_note_and_the_system_prompt_stays_as_it_is(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    assert not context_aware("claude-3-5-haiku-20241022")
    session = filled(store, "claude-3-5-haiku-20241022", 5)
    body = await ask(fake_anthropic, anthropic_client, session, estimator, settings())
    assert body["system"] in ("You are careful.", [{"type": "text", "text": "You are careful."}])
    note = body["messages"][-1]["content"][-1]["text"]
    assert note.startswith("[Context budget: ") and "auto-compact summarizes" in note
    assert "system_warning" not in all_text(body)


async def test_no_note_below_the_start_or_when_off(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    small = filled(store, "claude-haiku-4-5", 1)  # ~2,000 tokens: far below the warning
    body = await ask(fake_anthropic, anthropic_client, small, estimator, settings())
    assert "Token usage" not in all_text(body)
    big = filled(store, "claude-haiku-4-5", 5)
    body = await ask(fake_anthropic, anthropic_client, big, estimator, settings(enabled=False))
    assert "Token usage" not in all_text(body) and "Context budget" not in all_text(body)
    early = settings(start_tokens=1_000)
    fresh = filled(store, "claude-haiku-4-5", 1)
    body = await ask(fake_anthropic, anthropic_client, fresh, estimator, early)
    assert "Token usage" in all_text(body)


def test_a_paused_auto_compact_is_said_paused_and_why_never_that_it_will_fire(
    store: SessionStore, estimator: Estimator
) -> None:
    from baton.core.usage.budget_note import note_text
    from baton.core.usage.draft import _verdict
    from baton.core.usage.session_usage import compute_usage

    s = settings()
    usage = compute_usage(filled(store, "claude-sonnet-4-5", 4), s, estimator)
    assert "summarizes the conversation at" in note_text(usage, s, "claude-sonnet-4-5")
    for by, why in (("failures", "paused after repeated failures"),
                    ("thrashing", "stopped: the working set does not fit")):  # fmt: skip
        pause = {"auto_compact_paused": True, "auto_compact_paused_by": by}
        paused = usage.model_copy(update=pause)
        note = note_text(paused, s, "claude-sonnet-4-5")
        assert f"Auto-compact is {why}." in note and "summarizes the conversation at" not in note
        verdict, message = _verdict(paused, paused.blocking_limit + 1, 10, 0)
        assert verdict == "compactFirst" and f"auto-compact is {why};" in str(message)
