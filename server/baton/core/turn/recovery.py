"""What a reply that fails leaves behind: what arrived before it stopped, kept and marked
interrupted (and set aside when the reply is asked for again); a reply the API refused,
set aside; the calibration a prompt-too-long error's real size gives; the output that fits
beside a prompt whose max_tokens the API refused; the prompt a refused reply answered. And
the API id a reply is recorded with, failed or not: its own."""

from __future__ import annotations

import logging
import re

from baton.core.compaction import engine
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.invariants import unanswered_tool_uses
from baton.core.conversation.messages import Message, TextBlock
from baton.core.conversation.session import Session
from baton.core.errors import ApiError, BatonError
from baton.core.model_api.client import ModelReply, partial_reply
from baton.core.tools.calls import block
from baton.core.tools.registry import ToolResult
from baton.core.turn.prompt_input import interrupted_last
from baton.core.turn.tool_loop import REFUSED, loop_answers
from baton.core.usage.budget import MIN_CALIBRATION_SAMPLE
from baton.core.usage.estimator import Estimator

log = logging.getLogger(__name__)
_OVER_WINDOW = re.compile(
    r"input length and `?max_tokens`? exceed context limit:\s*(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)",
    re.IGNORECASE,
)


def keep_partial(
    session: Session,
    message_id: str,
    exc: BaseException,
    streamed: list[str],
    model: str,
    mark: str,
) -> None:
    """Append what arrived before the reply stopped, marked interrupted."""
    partial = partial_reply(exc)
    if partial is None and streamed:
        partial = ModelReply(content=[TextBlock(text="".join(streamed))])
    if partial is None or not partial.content:
        return
    message = own_api_id(session, partial.message(message_id, model, mark, interrupted=True))
    try:
        session.append([message])
    except BatonError as error:  # never hide the original failure behind this one
        log.warning("could not keep the interrupted reply: %s", error.message)


def set_aside_interrupted(session: Session) -> Boundary | None:
    """Before a send with no content: the interrupted reply that ends the view, taken out
    of it as a rewind takes a reply to retry it (kept in the transcript, back on the
    rewind's undo), so the reply is made again after the user's turn. Continuing it
    instead would send it as a prefill, which newer models refuse, and a cut tool call or
    text ending in blanks the API refuses whatever the model."""
    partial = interrupted_last(session.view_messages())
    return None if partial is None else engine.rewind(session, partial.id)


def set_aside_refused(session: Session, message: Message) -> Boundary | None:
    """A reply the API refused (`stop_reason` refusal: its streaming classifier stopped it),
    just recorded: its calls answered as refused (never run), then the reply and those
    answers taken out of the view as a rewind to it does. The API refuses every later
    request that carries the refused turn, until it is changed or removed; the transcript
    keeps it, as refused, and the rewind's undo puts it back. None when it cannot go (a
    compaction running): it stays, and its calls are answered as refused all the same."""
    waiting = {use.id for use in unanswered_tool_uses(session.view_messages())}
    refused = ToolResult(REFUSED, is_error=True, summary=REFUSED, status="failed")
    answers = [block(use.id, refused) for use in message.tool_uses() if use.id in waiting]
    try:
        if answers:
            session.append([loop_answers(answers)])
        return engine.rewind(session, message.id)
    except BatonError as error:
        log.warning("the refused reply stays in the view: %s", error.message)
        return None


def refused_set_aside(session: Session) -> Message | None:
    """The reply the API refused that `set_aside_refused` took out of the view, when
    nothing changed the view since: the view ends where it stood (after its prompt, or
    after the tool results of the round before it). None otherwise."""
    if not session.active:
        return None
    latest = session.boundaries[session.active[-1]]
    if latest.direction != "rewind" or latest.view_after != session.view:
        return None
    taken = session.messages.get(latest.summarized_ids[0]) if latest.summarized_ids else None
    return taken if taken is not None and taken.stop_reason == "refusal" else None


def refused_prompt(session: Session) -> Message | None:
    """The user's prompt that ends the view when the API refused its reply and nothing
    changed the view since (`set_aside_refused` left it there): the turn the API asks to be
    changed or removed before the conversation goes on. None otherwise, and when the
    refused reply came after tool results (the user's prompt is further back)."""
    if not session.view or refused_set_aside(session) is None:
        return None
    prompt = session.messages[session.view[-1]]
    if prompt.role != "user" or prompt.kind != "message" or prompt.tool_results():
        return None
    return prompt


def own_api_id(session: Session, message: Message) -> Message:
    """`message`, a reply about to be recorded, without an API message id that a message
    of the session holds already: records sharing one are one response's (parallel tool
    calls), so a gateway that gives every response the same id merged the reply into an
    earlier one's turn, or had it refused as that response's records out of order."""
    api_id = message.api_message_id
    if api_id and any(m.api_message_id == api_id for m in session.messages.values()):
        return message.model_copy(update={"api_message_id": None})
    return message


def output_fit(exc: ApiError) -> tuple[int, int] | None:
    """(the prompt's real size, the output that fits beside it in the window) when `exc`
    is the API's 'input length and `max_tokens` exceed context limit: P + M > W' (models
    before Claude 4.5 refuse a request whose max_tokens does not fit beside its prompt;
    Baton's room for the reply is the window less its estimate, which may fall short)."""
    found = _OVER_WINDOW.search(exc.message)
    if found is None:
        return None
    prompt, window = int(found[1]), int(found[3])
    return (prompt, window - prompt) if window > prompt else None


def learn_from_overflow(
    session: Session,
    estimator: Estimator,
    view: list[Message],
    besides: int,
    actual: int | None,
) -> None:
    """An error stating the prompt's real size (too long, or too long for the output asked
    beside it), `actual`: calibrate on it, against the
    estimate of what that request sent: the system prompt, `besides` (its tools, the budget
    note) and `view` without the thinking the request left out (a compaction's kept turns,
    a reply that ended in its thinking), which its stored counts hold."""
    if actual is None or [m.id for m in view] != session.view:
        return  # no figure, or the view changed meanwhile: not the request's any more
    raw = estimator.count_text(session.system_prompt or "") + besides
    raw += session.tokens_in_view(0, len(view), estimator.count_message)
    raw -= estimator.thinking_of(session.messages, session.thinking_left_out(0))
    # images and documents are counted in the API's units: the factor is learned without them
    media = session.media_tokens_in_view(0, len(view), estimator.count_message_media)
    if raw - media >= MIN_CALIBRATION_SAMPLE:
        estimator.observe(raw, actual, media)
