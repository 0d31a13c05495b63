"""What a send accepts: the prompt's content, the tool definitions, and whether a send with
no content has anything to continue (or a broken reply to make again). Each check raises
InvalidParams and changes nothing."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from baton.core.conversation.invariants import unanswered_tool_uses
from baton.core.conversation.messages import Message, MessageInput
from baton.core.conversation.session import Session
from baton.core.errors import InvalidParams


def prompt_input(content: str | list[Any] | None) -> MessageInput | None:
    if content is None:
        return None
    if isinstance(content, str) and not content.strip():
        raise InvalidParams("content must not be empty (omit it to continue the conversation)")
    if isinstance(content, list) and not content:
        raise InvalidParams("content must have at least one block")
    try:
        return MessageInput.model_validate({"role": "user", "content": content})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidParams(f"invalid content: {first['msg']} at {where}") from None


def check_tools(tools: object) -> list[dict[str, Any]] | None:
    if tools is None:
        return None
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise InvalidParams("tools must be a list of tool definition objects")
    return tools or None


def interrupted_last(view: list[Message]) -> Message | None:
    """The reply that ends `view` when it was cut short (a broken stream, a cancel) after
    the user's turn: a send with no content makes that reply again."""
    if len(view) < 2 or view[-1].role != "assistant" or view[-2].role != "user":
        return None
    return view[-1] if view[-1].stop_reason == "interrupted" else None


def check_continuable(session: Session) -> None:
    """Continuing needs the view to end with the user's turn, every tool call answered, or
    with an interrupted reply after it (`interrupted_last`: it is set aside and made again)."""
    view = session.view_messages()
    if interrupted_last(view) is not None:
        view = view[:-1]
    if not view or view[-1].role != "user":
        raise InvalidParams(
            "nothing to continue: the conversation does not end with a user message "
            "(send content, or append tool results first)"
        )
    waiting = unanswered_tool_uses(view)
    if waiting:
        raise InvalidParams("tool calls still need results: " + ", ".join(u.id for u in waiting))
