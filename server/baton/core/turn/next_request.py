"""The request a send asks its reply with, as the view stands when it is asked: the view
made ready for it (the prompt appended, or an interrupted reply set aside to be made
again), the thinking that goes back (`build_payload`) and the budget note near the
thresholds. The send builds it here, and `baton payload` shows it from here without
sending, so the two never differ."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import Message, MessageInput
from baton.core.conversation.session import Session
from baton.core.model_api.reply_request import Payload, build_payload
from baton.core.settings import Settings
from baton.core.turn import recovery
from baton.core.usage.budget import ModelLimits, Usage, budget_for
from baton.core.usage.budget_note import note_due, note_text, with_budget_note
from baton.core.usage.estimator import Estimator

REPLY_MAX_TOKENS = 32_000  # per reply, further capped by the model and the room left


@dataclass(frozen=True)
class NextRequest:
    """The `system`, `messages` and `max_tokens` a reply request sends (the note in the
    messages, when due), the view and payload they came from, and the note with its tokens
    (taken from the reply's room)."""

    view: list[Message]
    payload: Payload
    system: str | None
    messages: list[dict[str, Any]]
    max_tokens: int  # the reply's room: the cap, the model's output, what the window leaves
    note: str | None = None
    note_tokens: int = 0


def ready_view(
    session: Session, prompt: MessageInput | Message | None, attachments: Sequence[Message] = ()
) -> tuple[str | None, Boundary | None]:
    """The session made ready for a send: `prompt` appended after its `attachments` (its
    id returned), or, with no prompt, an interrupted reply that ends the view set aside
    (the boundary returned), so the reply is made again after the user's turn."""
    if prompt is not None:
        return session.append([*attachments, prompt]).message_ids[-1], None
    return None, recovery.set_aside_interrupted(session)


def next_request(
    session: Session,
    tools: list[dict[str, Any]] | None,
    usage: Usage,
    settings: Settings,
    model: str,
    estimator: Estimator,
    limits: ModelLimits | None = None,
    cap: int | None = None,
) -> NextRequest:
    """The request for the session's view under its system prompt and `tools`, with the
    budget note when `usage` is past its start (never stored: a text block after the last
    user turn's), and the output it leaves room for: `cap` (REPLY_MAX_TOKENS without one)
    within the model's `limits` (its table's without) and the window."""
    view, system = session.view_messages(), session.system_prompt
    payload = build_payload(view, system, tools)
    # a view the model ended is no send's request (a send brings a prompt first): no note
    users = bool(payload.messages) and payload.messages[-1]["role"] == "user"
    note = note_text(usage, settings, model) if users and note_due(usage, settings) else None
    note_tokens = estimator.count_text(note) if note is not None else 0
    budget, _ = budget_for(model, settings, limits)
    room = usage.context_window - usage.used_tokens - note_tokens
    max_tokens = max(1, min(cap or REPLY_MAX_TOKENS, budget.max_output, room))
    if note is None:
        return NextRequest(view, payload, system, payload.messages, max_tokens)
    sent_system, messages = with_budget_note(note, model, system, payload.messages)
    return NextRequest(view, payload, sent_system, messages, max_tokens, note, note_tokens)
