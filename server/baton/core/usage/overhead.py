"""What the context holds besides the view: what a client declares it sends (its own system
prompt and tools), and what the API's last usage showed beyond the estimate, carried
across compactions, undo and pins until a newer usage arrives."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, Strict, model_validator

from baton.core.conversation.messages import ApiUsage
from baton.core.conversation.recorded_usage import LastUsage
from baton.core.conversation.session import Session
from baton.core.conversation.wire_model import WireModel
from baton.core.usage.estimator import Estimator

UsageBasis = Literal["api", "exact", "estimate", "compacted"]
"""Where `Usage.usedTokens` comes from: the last reply's real usage plus estimates after it
(`api`), the API's count of the view (`exact`), estimates alone with nothing learned from
the API yet (`estimate`), or estimates after a compaction (or an undo) changed the view
the last real usage covered, with what that usage showed besides the view carried over
(`compacted`) until the next reply's usage confirms it."""


class ClientContext(WireModel):
    """What a client sends to the model besides the messages Baton holds (its own system
    prompt and tool definitions), so that the usage counts it: each as a size in tokens,
    or as its text (the prompt; the tools' JSON definitions), which Baton counts. Only the
    sizes are kept."""

    system_tokens: Annotated[int, Strict()] | None = Field(
        default=None, ge=0, description="its system prompt's size"
    )
    tools_tokens: Annotated[int, Strict()] | None = Field(
        default=None, ge=0, description="its tool definitions' size"
    )
    system: str | None = Field(default=None, description="its system prompt, to be counted")
    tools: list[dict[str, Any]] | None = Field(default=None, description="its tool definitions")

    @model_validator(mode="after")
    def _one_of_each(self) -> ClientContext:
        if self.system_tokens is not None and self.system is not None:
            raise ValueError("give systemTokens or system, not both")
        if self.tools_tokens is not None and self.tools is not None:
            raise ValueError("give toolsTokens or tools, not both")
        return self

    def counted(self, estimator: Estimator) -> tuple[int, int]:
        """(system, tools) raw tokens."""
        system = self.system_tokens or 0
        if self.system is not None:
            system = estimator.count_text(self.system)
        tools = self.tools_tokens or 0
        if self.tools is not None:
            tools = estimator.count_json(self.tools) if self.tools else 0
        return system, tools


def declare(session: Session, declared: ClientContext | None, estimator: Estimator) -> bool:
    """Record a client's declaration on the session (a figure it leaves out keeps its
    last value); True when it changed what the session knew."""
    if declared is None:
        return False
    system, tools = declared.counted(estimator)
    known = session.client_context
    if declared.system_tokens is None and declared.system is None:
        system = known.system_tokens
    if declared.tools_tokens is None and declared.tools is None:
        tools = known.tools_tokens
    return session.declare_client_context(system, tools)


@dataclass(frozen=True)
class Context:
    """The used figure and where it comes from."""

    used: int
    estimate: int  # the calibrated estimate of everything Baton knows of
    extra: int  # what the API showed besides that estimate (may be negative)
    basis: UsageBasis


def context_figure(
    session: Session,
    estimator: Estimator,
    known: Sequence[int],
    count_after: int | None,
    system_then: int | None = None,
) -> Context:
    """`known`: raw tokens of the system prompt, the tools, then the view's parts.

    `count_after` is the raw estimate after a valid anchor (None without one);
    `system_then` the raw tokens of the system prompt the last usage's request carried,
    when it is not the one of now (None: it is). The images and documents of the view
    are in the API's units already: the factor leaves them as they are."""
    media = session.media_tokens_in_view(0, len(session.view), estimator.count_message_media)
    estimate = estimator.calibrated(sum(known), media)
    anchor = own_anchor(session)
    if anchor is not None and count_after is not None:
        index, api_usage = anchor
        after = len(session.view)
        media_after = session.media_tokens_in_view(index + 1, after, estimator.count_message_media)
        used = api_usage.context_tokens + estimator.calibrated(count_after, media_after)
        basis: UsageBasis = "compacted" if _changed_after(session, index) else "api"
        return Context(used, estimate, used - estimate, basis)
    last = session.last_usage
    if last is None or foreign(session, last.message_id):
        return Context(estimate, estimate, 0, "estimate")
    # the same prefix, as the estimator counts it now: system, tools, and the view it saw
    system = known[0] if system_then is None else system_then
    prefix = sent_prefix(session, estimator, last)
    then = estimator.calibrated(system + known[1] + prefix, sent_media(session, estimator, last))
    extra = last.usage.context_tokens - last.note_tokens - then
    return Context(max(0, estimate + extra), estimate, extra, "compacted")


def note_of(session: Session, index: int) -> int:
    """The tokens of the budget note the request of the reply at view[index] carried (its
    usage holds them), as the reply recorded them: 0 for one whose request carried none,
    an imported one, or one recorded before replies kept them."""
    return session.messages[session.view[index]].note_tokens or 0


def calibrated_part(session: Session) -> bool:
    """Whether the calibration factor reaches the session's figure: it does unless the
    figure is the last reply's real usage alone (that reply ends the view); a cheap test,
    so that a factor that moves skips the figures it cannot move without computing them."""
    anchor = own_anchor(session)
    return anchor is None or anchor[0] + 1 < len(session.view)


def own_anchor(session: Session) -> tuple[int, ApiUsage] | None:
    """The session's anchor (`ViewTokens.anchor`), but none that is `foreign`."""
    anchor = session.anchor()
    if anchor is not None and foreign(session, session.view[anchor[0]]):
        return None
    return anchor


def foreign(session: Session, message_id: str) -> bool:
    """Whether the usage of the reply `message_id` tells nothing of the session's next
    request: where every request is Baton's own (`own_requests`: `baton acp`'s), an
    imported reply's (one Baton did not ask for: it keeps no fingerprint of a request)
    counted its client's own system prompt and tools (Claude Code's: 15-25K tokens), which
    Baton's request does not carry. The figure is then estimated, as before any reply."""
    if not session.own_requests or session.imported_from is None:
        return False
    message = session.messages.get(message_id)
    return message is not None and message.prefix_hash is None


def _changed_after(session: Session, index: int) -> bool:
    """Whether the view changed after the response starting at view[index] anchored it: a
    compaction's message (a summary, an attachment) follows it, or a later reply's usage
    went stale (an undo brought back what its view had left out). Either way the figure
    is not the API's count anchored on the view's last reply."""
    view, messages = session.view, session.messages
    api_id = messages[view[index]].api_message_id
    for mid in view[index + 1 :]:
        message = messages[mid]
        if message.kind != "message":
            return True
        if message.anchors_usage and (api_id is None or message.api_message_id != api_id):
            return True  # a later response's usage: stale, or it would be the anchor
    return False


def carried_tokens(session: Session, estimator: Estimator, tools_tokens: int = 0) -> int:
    """What the session's last real usage showed besides the estimate of the view it
    covered (0 before any): the figure a compaction's estimate adds until the next reply."""
    last = session.last_usage
    if last is None or foreign(session, last.message_id):
        return 0
    declared = session.client_context
    known = estimator.count_text(session.system_prompt or "") + declared.system_tokens
    known += tools_tokens + declared.tools_tokens
    prefix = sent_prefix(session, estimator, last)
    media = sent_media(session, estimator, last)
    sent = last.usage.context_tokens - last.note_tokens  # the note goes only when due again
    return sent - estimator.calibrated(known + prefix, media)


def sent_prefix(session: Session, estimator: Estimator, last: LastUsage) -> int:
    """Raw tokens of the view the last usage covered, without the thinking its request
    left out (`conversation/thinking_sent.py`)."""
    return last.prefix_tokens - estimator.thinking_of(session.messages, last.thinking_left_out)


def sent_media(session: Session, estimator: Estimator, last: LastUsage) -> int:
    """The part of `sent_prefix` the images and documents of that view make."""
    return estimator.media_of(session.messages, last.media)
