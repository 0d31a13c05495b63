"""A session's Usage worked out: the used figure and its breakdown, once per change."""

from __future__ import annotations

from collections.abc import Sequence

from baton.core.conversation.media import MAX_REQUEST_BYTES
from baton.core.conversation.messages import ApiUsage
from baton.core.conversation.session import Session
from baton.core.conversation.turn_framing import reply_framing_unsent
from baton.core.models.windows import ModelLimits
from baton.core.settings import Settings
from baton.core.usage.budget import (
    Breakdown,
    RequestSize,
    Usage,
    budget_for,
    percent_left,
    usage_state,
)
from baton.core.usage.budget_note import next_note_tokens
from baton.core.usage.estimator import Estimator
from baton.core.usage.overhead import context_figure, note_of, own_anchor
from baton.core.usage.usage_memo import UsageMemo
from baton.core.usage.wording import (
    CATEGORY_LABELS,
    PausedBy,
    UsageText,
    bytes_warning,
    unattributed_label,
)


def _split(total: int, parts: Sequence[int]) -> list[int]:
    """`total` divided in proportion to `parts`, as integers that add up to `total`."""
    weight = sum(parts)
    if weight <= 0:
        return [0] * len(parts)
    exact = [total * p / weight for p in parts]
    out = [int(x) for x in exact]
    by_remainder = sorted(range(len(parts)), key=lambda i: exact[i] - out[i], reverse=True)
    for i in by_remainder[: total - sum(out)]:
        out[i] += 1
    return out


def _attribute(total: int, estimate: int, parts: Sequence[int]) -> list[int]:
    """`total` over the system prompt, the tools and the view's parts (`parts`, raw).

    Up to the calibrated `estimate` each part takes its share of it. What the figure holds
    beyond the estimate is put on the conversation (messages, summary, attachments), where
    an estimate can miss (images, documents, another tokenizer's way with code), never on
    the system prompt or the tools, which are counted whole: a short system prompt must not
    read as 200K tokens that no compaction can free because the API's figure ran ahead.
    """
    shares = _split(min(total, estimate), parts)
    beyond = total - sum(shares)
    if beyond > 0:
        conversation = parts[2:]
        if sum(conversation) > 0:
            for i, extra in enumerate(_split(beyond, conversation), start=2):
                shares[i] += extra
        else:
            shares[2] += beyond
    return shares


def compute_usage(
    session: Session,
    settings: Settings,
    estimator: Estimator,
    *,
    tools_tokens: int = 0,
    auto_paused: bool = False,
    api_limits: ModelLimits | None = None,
    paused_by: PausedBy | None = None,
    memo: UsageMemo | None = None,
) -> Usage:
    """Used tokens = the last valid API usage + estimates of what came after it.

    With no valid usage (a new session, most compactions) everything is estimated, plus
    what the last real usage showed besides the estimate of the view it covered (the
    client's own system prompt and tools, which an imported file never shows), carried
    until a newer usage arrives. Usages are never added across turns: only one anchors.
    The breakdown divides the used figure in proportion to the estimates up to the
    estimate; an excess beyond it goes to the conversation (`_attribute`), except that an
    imported session's excess over the estimate of its view is `unattributed`, not folded
    into the messages. `paused_by` says why auto-compact is paused (`auto_paused`).

    `memo` (the session's, from its runtime; by default the estimator's for the session)
    shares one computation among the readers of one change (one per distinct set of
    inputs: the meter's, auto-compact's).
    """
    if memo is None:
        memo = estimator.usage_memo(session)
    key = (
        session.revision,
        settings,
        estimator,
        estimator.factor,
        estimator.fallback_reason,
        estimator.exact,
        tools_tokens,
        auto_paused,
        api_limits,
        paused_by,
    )
    usage = memo.find(key)
    if usage is None:
        if auto_paused and paused_by is None:
            paused_by = "failures"
        usage = _compute_usage(
            session, settings, estimator, tools_tokens, api_limits, paused_by, memo
        )
        memo.keep(key, usage)
    return usage


def _compute_usage(
    session: Session,
    settings: Settings,
    estimator: Estimator,
    tools_tokens: int,
    api_limits: ModelLimits | None,
    paused_by: PausedBy | None,
    memo: UsageMemo,
) -> Usage:
    model = session.model or settings.model
    budget, budget_warning = budget_for(model, settings, api_limits)
    count = estimator.count_message
    declared = session.client_context
    system_now = _system_tokens(session, estimator, memo)
    system_raw = system_now + declared.system_tokens
    by_kind = session.tokens_by_kind(count)
    anchor = own_anchor(session)
    # the thinking the next request leaves out is in the stored counts, not in what it sends;
    # the meter estimates the request a new prompt starts (no tool loop goes on from here)
    start = anchor[0] + 1 if anchor is not None else 0
    left_out = session.thinking_left_out(start, continued=False)
    unsent = estimator.thinking_of(session.messages, left_out)
    after = None
    if anchor is not None:
        after = session.tokens_in_view(anchor[0] + 1, len(session.view), count) - unsent
        # the usage's output holds the reply's framing: not sent when no turn opens with it
        after -= reply_framing_unsent(session.messages[session.view[anchor[0]]])
        # and what its usage holds that the next request leaves out (a stale tool loop's)
        dropped = session.thinking_dropped(anchor[0], continued=False)
        after -= estimator.thinking_of(session.messages, dropped)
        # and the system prompt made again since (a load elsewhere) in place of the one it held
        then = _system_then(session, session.view[anchor[0]], estimator)
        after += system_now - then if then is not None else 0
    else:
        by_kind["message"] -= unsent
    parts = [system_raw, tools_tokens + declared.tools_tokens, by_kind["message"]]
    parts += [by_kind["summary"], by_kind["attachment"]]
    system_then = None  # without an anchor: the prompt the last usage's request carried
    if anchor is None and session.last_usage is not None:
        then = _system_then(session, session.last_usage.message_id, estimator)
        system_then = then + declared.system_tokens if then is not None else None
    figure = context_figure(session, estimator, parts, after, system_then)
    if not settings.auto_compact.enabled:
        paused_by = "user"
    auto_paused = paused_by in ("failures", "thrashing")
    # the budget note the next request carries when due: the figure is that request's
    fires = paused_by if auto_paused else None
    used = figure.used
    if anchor is None:
        used += next_note_tokens(used, budget, settings, fires, model, estimator.count_text)
    elif then := note_of(session, anchor[0]):
        # the anchoring usage holds its request's note, which stands for the next one's
        # while the note is due; once it is not (turned off, its start moved), it goes
        due = next_note_tokens(used - then, budget, settings, fires, model, estimator.count_text)
        used = used if due else max(0, used - then)
    unattributed = 0
    carried = anchor is None and figure.basis == "compacted"
    if (session.imported_from is not None or carried) and figure.extra > 0:
        # what the client sent besides the messages Baton knows (an imported file never
        # shows it), or what the last usage showed besides them, carried over a change
        unattributed = min(figure.extra, used)
    system, tools, messages, summary, attachments = _attribute(
        used - unattributed, figure.estimate, parts
    )
    labels = dict(CATEGORY_LABELS)
    if unattributed:
        labels["unattributed"] = unattributed_label(_asked_by_baton(session, anchor))
    size = request_size(session, model)
    warnings = [w for w in (budget_warning, estimator.fallback_reason) if w]
    if size is not None and size.near:
        warnings.append(bytes_warning(size))
    return Usage(
        session_id=session.session_id,
        model=model,
        context_window=budget.context_window,
        effective_window=budget.effective_window,
        auto_compact_threshold=budget.auto_compact_threshold,
        warning_threshold=budget.warning_threshold,
        error_threshold=budget.error_threshold,
        blocking_limit=budget.blocking_limit,
        used_tokens=used,
        percent_used=round(min(100.0, max(0.0, 100 * used / budget.context_window)), 1),
        percent_left=percent_left(used, budget, settings.auto_compact.enabled),
        state=usage_state(used, budget, auto_paused, size),
        estimated=figure.basis != "api",
        auto_compact_enabled=settings.auto_compact.enabled,
        auto_compact_paused=auto_paused,
        breakdown=Breakdown(
            system=system,
            tools=tools,
            messages=messages,
            summary=summary,
            attachments=attachments,
            unattributed=unattributed,
            free=max(0, budget.context_window - used),
        ),
        estimator_exact=estimator.exact,
        warnings=warnings,
        auto_compact_paused_by=paused_by,
        basis=figure.basis,
        text=UsageText(labels=labels),
        request_size=size,
    ).worded()


def request_size(session: Session, model: str) -> RequestSize | None:
    """The bytes of the request the session's view makes, when its images and documents
    pass half the API's limit (their tally is kept as the view grows); None short of that,
    where the rest of a request, text the window holds, could not take it near the limit
    (a million tokens of text are some 4 MB). Each message is measured once (`request_bytes`)."""
    images, documents, media = session.media_in_view()
    if media <= MAX_REQUEST_BYTES // 2:
        return None
    size = session.request_bytes(model)
    return RequestSize(
        request_bytes=size,
        limit=MAX_REQUEST_BYTES,
        images=images,
        documents=documents,
        media_bytes=media,
    )


def _asked_by_baton(session: Session, anchor: tuple[int, ApiUsage] | None) -> bool:
    """Whether the usage behind the figure answered a request Baton made itself (a reply it
    asked for keeps the fingerprint of its request): what that usage holds beyond the
    estimate is then no client's prompt or tools, but what Baton's estimate missed."""
    if anchor is not None:
        message_id = session.view[anchor[0]]
    elif session.last_usage is not None:
        message_id = session.last_usage.message_id
    else:
        return False
    message = session.messages.get(message_id)
    return message is not None and message.prefix_hash is not None


def _system_then(session: Session, message_id: str, estimator: Estimator) -> int | None:
    """The raw tokens of the system prompt the request `message_id` answered was sent with,
    when it is not the one in force now (made again for another folder since); None when
    it is. Looked for only in a session whose prompt ever changed."""
    changes = session.system_prompts
    if len(changes) < 2 or message_id not in session.messages:
        return None
    index = list(session.messages).index(message_id)
    sent = [prompt for known, prompt in changes if known <= index][-1]
    return None if sent == session.system_prompt else estimator.count_text(sent or "")


def _system_tokens(session: Session, estimator: Estimator, memo: UsageMemo) -> int:
    """The system prompt's tokens, counted once per prompt and estimator."""
    text = session.system_prompt or ""
    known = memo.system_tokens(text, estimator)
    if known is None:
        known = estimator.count_text(text)
        memo.system = (text, estimator, known)
    return known
