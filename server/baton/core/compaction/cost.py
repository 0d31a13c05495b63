"""What a compaction costs and saves (`DraftCost` on the wire): the summary request's
tokens, whether the prompt cache's prefix survives and what the next request pays to write
it again, the next request with and without the compaction, in dollars when the model's
price is known (`core/models/prices.py`).

The next request is priced as the API bills it: what it shares with the request before
(tools, system prompt, and for `from` / `range` the messages before the span that a
request sent as they are now: not those another compaction left after its summary with no
reply since) is read from the cache; the rest is written to it. Without the compaction the
whole context would be read from the cache (it was the previous request's prefix).
"""

from __future__ import annotations

from baton.core.compaction.engine import CompactContext
from baton.core.compaction.figures import estimate
from baton.core.compaction.prepared_summary import PreparedSummary
from baton.core.compaction.prompts import SUMMARY_SYSTEM, summary_prompt
from baton.core.conversation.messages import ApiUsage
from baton.core.conversation.recorded_usage import response_start
from baton.core.conversation.session import Session
from baton.core.conversation.thinking_sent import has_thinking
from baton.core.conversation.wire_model import WireModel
from baton.core.models.prices import dollars, price_of
from baton.core.usage.overhead import carried_tokens

OFFLINE = ("extractive", "memory")  # summarizers that ask no model


class ModelPrice(WireModel):
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


class DraftCost(WireModel):
    model: str
    summary_offline: bool  # no model was asked for the summary (nothing to pay)
    summary_input_tokens: int  # the API's usage when a model wrote it, else an estimate
    summary_output_tokens: int  # likewise: the API's output tokens, or the summary counted
    # the summary request's usage as the API reported it (absent: the figures are estimates)
    summary_usage: ApiUsage | None = None
    cache_prefix_survives: bool  # the messages before the span stay cached (`from`, `range`)
    cached_prefix_tokens: int  # the next request reads these from the prompt cache
    cache_write_tokens: int  # and writes these to it again
    next_request_tokens: int  # the context the next request sends with the compaction
    next_request_tokens_without: int  # and without it
    price: ModelPrice | None = None  # when the model's family is in the table
    summary_dollars: float | None = None
    next_request_dollars: float | None = None
    next_request_dollars_without: float | None = None
    text: str = ""


def draft_cost(
    session: Session,
    prepared: PreparedSummary,
    ctx: CompactContext,
    *,
    model: str,
    pre_tokens: int,
    post_tokens: int,
) -> DraftCost:
    """The cost figures of committing `prepared` now, with `post_tokens` the context it
    leaves (the figure the commit reports)."""
    by_id = {m.id: m for m in prepared.messages}
    plan = prepared.plan
    count_text = ctx.estimator.count_text
    offline = prepared.summarizer in OFFLINE
    summary_in = summary_out = 0
    if not offline:
        asked = [by_id[mid] for mid in (*plan.keep_before, *plan.summarize)]
        summary_in = count_text(SUMMARY_SYSTEM) + count_text(
            summary_prompt(plan.direction, prepared.instructions)
        )
        summary_in += sum(m.tokens or ctx.estimator.count_message(m) for m in asked)
        summary_out = count_text(prepared.body)
    used = prepared.summary_usage
    if used is not None:  # the model was asked: what the API billed, not an estimate
        summary_in = (
            used.input_tokens + used.cache_creation_input_tokens + used.cache_read_input_tokens
        )
        summary_out = used.output_tokens
    head = [by_id[mid] for mid in plan.keep_before]
    head = head[: _sent(session, len(head))]
    carried = carried_tokens(session, ctx.estimator, ctx.tools_tokens)
    cached = min(post_tokens, max(0, estimate(session, ctx, head) + carried))
    cost = DraftCost(
        model=model,
        summary_offline=offline,
        summary_input_tokens=summary_in,
        summary_output_tokens=summary_out,
        summary_usage=used,
        cache_prefix_survives=bool(head),
        cached_prefix_tokens=cached,
        cache_write_tokens=max(0, post_tokens - cached),
        next_request_tokens=post_tokens,
        next_request_tokens_without=pre_tokens,
    )
    found = price_of(model)
    if found is not None:
        price = ModelPrice(
            input=found.input,
            output=found.output,
            cache_write=found.cache_write,
            cache_read=found.cache_read,
        )
        cost = cost.model_copy(
            update={
                "price": price,
                "summary_dollars": _summary_dollars(summary_in, summary_out, used, price),
                "next_request_dollars": dollars(cost.cached_prefix_tokens, price.cache_read)
                + dollars(cost.cache_write_tokens, price.cache_write),
                "next_request_dollars_without": dollars(pre_tokens, price.cache_read),
            }
        )
    return cost.model_copy(update={"text": cost_text(cost)})


def _sent(session: Session, head: int) -> int:
    """How many of the view's first `head` messages a request sent as they are now, so
    the prompt cache holds them: those before the last reply whose view before it is
    unchanged (the view its request sent). The messages a compaction left after its
    summary, with no reply since, were sent after another view: none of them is cached as
    it is now. What a reply's request sent is known from the replies Baton fingerprints
    (those with the API's usage, or thinking); with none in the view (a client that
    appends its own replies without their usage), the messages are taken as sent."""
    view = session.view
    known = False
    for index in range(len(view) - 1, -1, -1):
        message = session.messages[view[index]]
        if message.role != "assistant" or not (message.anchors_usage or has_thinking(message)):
            continue
        known = True
        if session.unchanged_before(index):
            return min(head, response_start(session.messages, view, index))
    return 0 if known else head


def _summary_dollars(
    tokens_in: int, tokens_out: int, used: ApiUsage | None, price: ModelPrice
) -> float:
    """The summary request's price: as billed (cache reads and writes at their own rates)
    when the API's usage is known, else every input token at the input rate."""
    if used is None:
        return dollars(tokens_in, price.input) + dollars(tokens_out, price.output)
    return (
        dollars(used.input_tokens, price.input)
        + dollars(used.cache_creation_input_tokens, price.cache_write)
        + dollars(used.cache_read_input_tokens, price.cache_read)
        + dollars(used.output_tokens, price.output)
    )


def _usd(value: float | None) -> str:
    return "" if value is None else f" (${value:.4f})"


def cost_text(cost: DraftCost) -> str:
    """The figures in two sentences, for the hover, the panel and the command line."""
    if cost.summary_offline:
        summary = "The summary was written offline (no model request)."
    else:
        about = "" if cost.summary_usage is not None else "~"
        summary = (
            f"The summary request: {about}{cost.summary_input_tokens:,} tokens in, "
            f"{cost.summary_output_tokens:,} out{_usd(cost.summary_dollars)}."
        )
    if cost.cache_prefix_survives:
        cache = f"the cached prefix survives ({cost.cached_prefix_tokens:,} tokens read)"
    else:
        cache = "the cached prefix is rewritten"
    nxt = (
        f" The next request sends {cost.next_request_tokens:,} tokens instead of "
        f"{cost.next_request_tokens_without:,}; {cache} and it writes "
        f"{cost.cache_write_tokens:,} tokens to the cache{_usd(cost.next_request_dollars)}"
    )
    if cost.next_request_dollars_without is not None:
        nxt += f", against ${cost.next_request_dollars_without:.4f} without compacting"
    return summary + nxt + "."
