"""The usage's sentences, written once: the status-bar meter, its tooltip, the chat panel's
usage line and the session document's diagnostic all show these (`Usage.text`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from baton.core.conversation.media import MAX_REQUEST_BYTES
from baton.core.conversation.request_bytes import MEDIA_WAY_OUT, are_word, held_words
from baton.core.conversation.wire_model import WireModel

if TYPE_CHECKING:
    from baton.core.usage.budget import RequestSize, Usage

PausedBy = Literal["failures", "thrashing", "user"]
"""Why auto-compact does not run: it failed repeatedly (the circuit breaker), its context
refilled right after each of its last compactions (the thrash guard), or the user turned
it off (`autoCompact.enabled` false)."""

UNATTRIBUTED_LABEL = "the original client's system prompt and tools"
# what a usage Baton asked for itself holds beyond its estimate of that request: no client
# sent anything Baton did not count, so this is the estimate's shortfall
OWN_UNATTRIBUTED_LABEL = "what the API counted beyond Baton's estimate of its request"
CATEGORY_LABELS = {
    "system": "System prompt",
    "tools": "Tools",
    "messages": "Messages",
    "summary": "Summary",
    "attachments": "Restored files",
    "unattributed": f"Unattributed ({UNATTRIBUTED_LABEL})",
    "free": "Free",
}


def unattributed_label(own_request: bool) -> str:
    """The `unattributed` label: whose tokens they are, as far as Baton knows."""
    return f"Unattributed ({OWN_UNATTRIBUTED_LABEL if own_request else UNATTRIBUTED_LABEL})"


def unattributed_note(usage: Usage) -> str:
    """What the `unattributed` label says the part is (the label's words in parentheses)."""
    label = usage.text.labels.get("unattributed", CATEGORY_LABELS["unattributed"])
    return label.removeprefix("Unattributed (").removesuffix(")")


class UsageText(WireModel):
    """The usage in words, for clients to show as they are."""

    meter: str = Field(
        default="",
        description='the status bar\'s figure: "62% 124K/200K" ("~" first while it is estimated)',
    )
    headline: str = Field(default="", description="the usage in one sentence (the diagnostic)")
    panel: str = Field(default="", description="the chat panel's usage line, short")
    auto_compact: str = Field(default="", description="where auto-compact stands")
    basis: str = Field(default="", description="where the figure comes from; 'estimated' or not")
    labels: dict[str, str] = Field(
        default_factory=lambda: dict(CATEGORY_LABELS), description="a label per breakdown key"
    )


def format_tokens(tokens: int) -> str:
    """124_300 -> "124K", 1_000_000 -> "1M", 950 -> "950".

    One decimal under 100K and under 10M, rounded half up on whole numbers (9_950 is "10K":
    9.95 as a float is 9.9499..., which formatting cut to "9.9"), in the unit the figure rounds
    to (999_600 is "1M", not "1000K").
    """
    n = max(0, tokens)
    if n < 1_000:
        return str(n)
    shown = _in_unit(n, 1_000, 100, "K") or _in_unit(n, 1_000_000, 10, "M")
    return shown or f"{(n + 500_000) // 1_000_000}M"


def _in_unit(n: int, unit: int, whole: int, suffix: str) -> str:
    """`n` in `unit`s, one decimal below `whole` of them; "" when it rounds to 1000 or more."""
    tenths = (n * 10 + unit // 2) // unit
    if tenths < whole * 10:
        units, tenth = divmod(tenths, 10)
        return f"{units}.{tenth}{suffix}" if tenth else f"{units}{suffix}"
    units = (n + unit // 2) // unit
    return f"{units}{suffix}" if units < 1_000 else ""


def describe(usage: Usage) -> UsageText:
    """Every sentence of `usage`, from its figures."""
    used, window = usage.used_tokens, usage.context_window
    percent = whole_percent(usage)
    rough = "~" if usage.estimated else ""
    size = usage.request_size
    # near the API's bytes (or over them), the request's size beside the tokens: "27.5/32 MB"
    request = f" · {request_mb(size)}" if size is not None and size.near else ""
    return UsageText(
        meter=f"{rough}{percent} {format_tokens(used)}/{format_tokens(window)}{request}",
        headline=headline(usage),
        panel=" · ".join(
            [
                f"{percent} used",
                f"{format_tokens(used)}/{format_tokens(window)}"
                + (" est." if usage.estimated else ""),
                _panel_auto(usage),
            ]
        )
        + request,
        auto_compact=auto_compact_sentence(usage),
        basis=basis_sentence(usage),
        labels=dict(usage.text.labels),  # set with the figures (whose `unattributed` is)
    )


def headline(usage: Usage) -> str:
    """ "Context 62% used (124,300 / 200,000) - 38% left until auto-compact"."""
    figures = f"{usage.used_tokens:,} / {usage.context_window:,}"
    if usage.estimated:
        figures += f", {estimated_until(usage)}"
    head = f"Context {whole_percent(usage)} used ({figures})"
    paused = usage.auto_compact_paused_by
    size = usage.request_size
    if size is not None and size.over:
        return f"{head} - {over_bytes(usage, size)}"
    if usage.state == "blocking":
        tail = f"blocked at {usage.blocking_limit:,}: {over_limit(usage)}"
    elif paused == "thrashing":
        tail = f"auto-compact {paused_why(paused)}"
    elif paused == "failures":
        tail = f"auto-compact {paused_why(paused)}: compact manually"
    elif not usage.auto_compact_enabled:
        tail = "auto-compact off"
    elif usage.used_tokens >= usage.auto_compact_threshold:
        tail = f"auto-compact at {usage.auto_compact_threshold:,}"
    else:
        tail = f"{usage.percent_left}% left until auto-compact"
    if size is not None and size.near:
        tail += f"; the request is {bytes_share(size)} of the API's {MAX_MB} ({held(size)})"
    return f"{head} - {tail}"


MAX_MB = f"{MAX_REQUEST_BYTES // (1024 * 1024)} MB"


def request_mb(size: RequestSize) -> str:
    """The request's size against the API's limit, in the MB the API counts (2 ** 20
    bytes): "27.5/32 MB" near it (one decimal, rounded down), "over 32 MB" past it (which
    one decimal could show as "32.0/32 MB")."""
    limit = f"{size.limit // (1024 * 1024)} MB"
    if size.over:
        return f"over {limit}"
    tenths = size.request_bytes * 10 // (1024 * 1024)
    return f"{tenths // 10}.{tenths % 10}/{limit}"


def held(size: RequestSize) -> str:
    """The images and documents a request holds, in words: "7 images"."""
    return held_words(size.images, size.documents)


def bytes_share(size: RequestSize) -> str:
    """How much of the API's limit on a whole request the request takes: "78%"."""
    return f"{math.floor(100 * size.request_bytes / size.limit + 0.5)}%"


def over_bytes(usage: Usage, size: RequestSize) -> str:
    """A request over the API's bytes, in the headline: what happens to the next send (its
    auto-compaction summarizes the span holding the media, when it can run)."""
    if auto_runs(usage):
        then = "the next send compacts the span holding them first"
    else:
        then = "compact the span holding them before the next send"
    return (
        f"the request is about {size.request_bytes:,} bytes, over the API's {MAX_MB} "
        f"whatever its tokens ({held(size)}): {then}"
    )


def bytes_warning(size: RequestSize) -> str:
    """A request near or over the API's bytes, as one of the usage's warnings: its size,
    what takes it there, and, over the limit, the way out."""
    media = f"the {held(size)} it holds {are_word(size.images + size.documents)}"
    media += f" {size.media_bytes:,} bytes of base64"
    limit = f"the API's limit of {size.limit:,} ({MAX_MB}) on a whole request, whatever its tokens"
    if size.over:
        return (
            f"The next request would be about {size.request_bytes:,} bytes, over {limit}: "
            f"{media}. {MEDIA_WAY_OUT}."
        )
    return (
        f"The next request is about {size.request_bytes:,} bytes, {bytes_share(size)} of "
        f"{limit}: {media}, and a request over the limit is refused."
    )


def estimated_until(usage: Usage) -> str:
    """How long an estimated figure stays one. Estimated over the API's own figure (its
    usage, its count), it is a draft's: the session's figure with the draft's estimate."""
    if usage.basis in ("api", "exact"):
        return "estimated with the draft"
    return "estimated until the next reply"


def auto_runs(usage: Usage) -> bool:
    """Whether auto-compact runs before a send that needs it: on, and not paused."""
    return usage.auto_compact_enabled and not usage.auto_compact_paused


def over_limit(usage: Usage) -> str:
    """What happens to a send over the limit, as a clause: auto-compact makes room first
    when it can run (a send compacts before its request goes out), else the user must;
    unless what no compaction takes away (the system prompt, the tools) reaches it."""
    if usage.breakdown.system + usage.breakdown.tools >= usage.blocking_limit:
        return "the system prompt and tools alone reach it"
    return "the next send compacts first" if auto_runs(usage) else "compact before the next send"


def whole_percent(usage: Usage) -> str:
    """The share used in whole percent, "63%" for 62.5: rounded half up, as token figures
    are and as a client rounds the same figure (formatting would give the even "62%")."""
    return f"{math.floor(share_used(usage) + 0.5)}%"


def share_used(usage: Usage) -> float:
    """The share of the window used, past 100 when the context is: `percentUsed` stops at 100."""
    if usage.used_tokens > usage.context_window > 0:
        return 100 * usage.used_tokens / usage.context_window
    return usage.percent_used


def paused_word(paused: PausedBy | None) -> str:
    """What auto-compact is while it does not run although it is on, in one word: the thrash
    guard stopped it (running again would not help), the breaker paused it."""
    return "stopped" if paused == "thrashing" else "paused"


def paused_why(paused: PausedBy | None) -> str:
    """Why auto-compact does not run although it is on, as a clause: the one wording of a
    pause, for the meter, the diagnostic, the panel, a draft's verdict and `baton usage`."""
    if paused == "thrashing":
        return f"{paused_word(paused)}: the working set does not fit"
    if paused == "failures":
        return f"{paused_word(paused)} after repeated failures"
    return paused_word(paused)


def auto_compact_sentence(usage: Usage) -> str:
    paused = usage.auto_compact_paused_by
    if not usage.auto_compact_enabled:
        return "Auto-compact is off."
    at = f"Auto-compact at {format_tokens(usage.auto_compact_threshold)}"
    at += f" ({usage.percent_left}% left)"
    if paused in ("thrashing", "failures"):
        return f"{at}; {paused_why(paused)}. Compact manually to resume."
    return f"{at}."


def _panel_auto(usage: Usage) -> str:
    paused = usage.auto_compact_paused_by
    if not usage.auto_compact_enabled:
        return "auto-compact off"
    if paused in ("thrashing", "failures"):
        return f"auto-compact {paused_word(paused)}"
    return f"compacts at {format_tokens(usage.auto_compact_threshold)}"


def basis_sentence(usage: Usage) -> str:
    carried = usage.breakdown.unattributed
    # without the tokenizer the estimator counts characters / 4 (`usage.warnings` says why)
    counted = "tiktoken" if usage.estimator_exact else "characters / 4"
    if usage.basis == "exact":
        if usage.estimated:  # a draft's
            return "Estimated: the API's count of the conversation as it is, plus the draft's."
        return "Exact (counted by the API for the conversation as it is)."
    if usage.basis == "api":
        if usage.estimated:  # a draft's
            return (
                "Estimated: the API's usage of the last reply, plus estimates of what came "
                "after it and of the draft."
            )
        return "From the API's usage of the last reply, plus estimates of what came after it."
    if usage.basis == "compacted":
        besides = f", with the {carried:,} tokens the API saw besides it" if carried else ""
        return (
            f"Estimated since the conversation changed ({counted}, calibrated){besides}; "
            "the next reply's usage confirms it."
        )
    return f"Estimated offline ({counted}, calibrated)."
