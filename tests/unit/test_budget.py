"""Budget and usage: windows, thresholds, states, the anchor rule, breakdown, calibration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import (
    ApiUsage,
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_message,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_with_report
from baton.core.models.windows import ModelLimits
from baton.core.settings import Settings
from baton.core.settings_read import parse_settings
from baton.core.usage.budget import (
    UNATTRIBUTED_LABEL,
    Budget,
    budget_for,
    observe_response,
    percent_left,
    usage_state,
)
from baton.core.usage.estimator import MESSAGE_OVERHEAD, Encoder, Estimator
from baton.core.usage.session_usage import compute_usage

# ---- windows and thresholds ------------------------------------------------------------


def test_the_default_model_is_a_current_one_with_a_1m_window(settings: Settings) -> None:
    budget, warning = budget_for(settings.model, settings)
    assert warning is None
    assert budget.context_window == 1_000_000


def test_a_200k_model_gets_the_reference_thresholds(settings: Settings) -> None:
    budget, warning = budget_for("claude-sonnet-4-5-20250929", settings)
    assert warning is None
    assert budget.context_window == 200_000
    assert budget.reserved == 20_000
    assert budget.effective_window == 180_000
    assert budget.auto_compact_threshold == 167_000
    assert budget.warning_threshold == 147_000
    assert budget.error_threshold == 167_000
    assert budget.blocking_limit == 177_000


@pytest.mark.parametrize(
    "model",
    [
        "claude-sonnet-4-5[1m]",
        "claude-sonnet-4-1m",
        "claude-sonnet-4-5-20250929[1m]",
        "claude-sonnet-5-5",
        "claude-opus-4-6",
    ],
)
def test_a_1m_window_uses_the_same_rules_not_a_fraction_of_200k(
    model: str, settings: Settings
) -> None:
    budget, _ = budget_for(model, settings)
    assert budget.context_window == 1_000_000
    assert budget.effective_window == 980_000
    assert budget.auto_compact_threshold == 967_000
    assert budget.warning_threshold == 947_000
    assert budget.blocking_limit == 977_000


@pytest.mark.parametrize(
    ("model", "max_output"),
    [
        ("claude-opus-4-5-20251101", 64_000),
        ("claude-opus-4-1-20250805", 32_000),
        ("claude-opus-4-20250514", 32_000),
        ("claude-sonnet-4-20250514", 64_000),
        ("claude-haiku-4-5", 64_000),
        ("claude-3-7-sonnet-20250219", 64_000),
        ("us.anthropic.claude-opus-4-1-20250805-v1:0", 32_000),
    ],
)
def test_dated_and_provider_model_ids_find_their_family(
    model: str, max_output: int, settings: Settings
) -> None:
    budget, warning = budget_for(model, settings)
    assert warning is None
    assert (budget.context_window, budget.max_output) == (200_000, max_output)


def test_a_small_max_output_reserves_only_that_much(settings: Settings) -> None:
    budget, _ = budget_for("claude-3-5-haiku-20241022", settings)
    assert budget.reserved == 8_192
    assert budget.effective_window == 191_808
    assert budget.auto_compact_threshold == 178_808
    assert budget.blocking_limit == 188_808


def test_an_unknown_model_assumes_200k_and_says_so(settings: Settings) -> None:
    budget, warning = budget_for("claude-nonesuch-9", settings)
    assert budget.context_window == 200_000
    assert budget.auto_compact_threshold == 167_000
    assert warning is not None and "claude-nonesuch-9" in warning


def test_the_context_window_setting_beats_the_models_api_which_beats_the_table() -> None:
    limits = ModelLimits(max_input_tokens=300_000, max_tokens=8_000)
    from_api, _ = budget_for("claude-sonnet-4-5", Settings(), limits)
    assert (from_api.context_window, from_api.reserved, from_api.effective_window) == (
        300_000,
        8_000,
        292_000,
    )
    overridden, warning = budget_for("claude-nonesuch", Settings(context_window=150_000), limits)
    assert overridden.context_window == 150_000
    assert warning is None


def test_model_limits_read_the_sdk_object_or_its_json() -> None:
    class Info:
        max_input_tokens = 200_000
        max_tokens = 64_000

    assert ModelLimits.from_api(Info()) == ModelLimits(200_000, 64_000)
    assert ModelLimits.from_api({"max_input_tokens": 1_000_000}) == ModelLimits(1_000_000, None)
    assert ModelLimits.from_api({"max_input_tokens": "lots", "max_tokens": -1}) == ModelLimits()


def _with_percent(percent: float) -> Settings:
    return parse_settings({"autoCompact": {"thresholdPercent": percent}})


def test_the_percent_setting_can_lower_the_threshold() -> None:
    budget, _ = budget_for("claude-sonnet-4-5", _with_percent(50))
    assert budget.auto_compact_threshold == 90_000
    assert budget.error_threshold == 90_000
    assert budget.warning_threshold == 70_000


def test_the_percent_setting_can_raise_the_threshold_up_to_the_blocking_limit() -> None:
    raised, _ = budget_for("claude-sonnet-4-5", _with_percent(95))
    assert raised.auto_compact_threshold == 171_000
    capped, _ = budget_for("claude-sonnet-4-5", _with_percent(99.5))
    assert capped.auto_compact_threshold == 177_000 == capped.blocking_limit


def _figures(budget: Budget) -> tuple[int, int, int, int, int, int]:
    return (
        budget.reserved,
        budget.effective_window,
        budget.auto_compact_threshold,
        budget.warning_threshold,
        budget.error_threshold,
        budget.blocking_limit,
    )


@pytest.mark.parametrize(
    ("window", "figures"),
    [
        # (reserved, effective, threshold, warning, error, blocking): BEHAVIOR.md section 2
        (1_000_000, (20_000, 980_000, 967_000, 947_000, 967_000, 977_000)),
        (200_000, (20_000, 180_000, 167_000, 147_000, 167_000, 177_000)),
        (100_000, (20_000, 80_000, 67_000, 47_000, 67_000, 77_000)),
        # below 100K every figure shrinks by window / 100,000
        (50_000, (10_000, 40_000, 33_500, 23_500, 33_500, 38_500)),
        (8_000, (1_600, 6_400, 5_360, 3_760, 5_360, 6_160)),
    ],
)
def test_windows_of_100k_and_more_get_the_fixed_figures_smaller_ones_shrink(
    window: int, figures: tuple[int, ...]
) -> None:
    budget, _ = budget_for("claude-sonnet-4-5", Settings(context_window=window))
    assert _figures(budget) == figures


def test_every_budget_figure_is_a_setting() -> None:
    settings = parse_settings(
        {
            "contextWindow": 200_000,
            "budget": {
                "reservedSummaryOutput": 10_000,
                "autoCompactMargin": 30_000,
                "warningMargin": 15_000,
                "errorMargin": 5_000,
                "blockingMargin": 1_000,
            },
        }
    )
    budget, _ = budget_for("claude-sonnet-4-5", settings)
    assert _figures(budget) == (10_000, 190_000, 160_000, 145_000, 155_000, 189_000)
    assert usage_state(150_000, budget) == "warning"
    assert usage_state(155_000, budget) == "error"


def test_an_error_margin_at_the_warning_margin_leaves_no_warning_tier() -> None:
    settings = parse_settings({"budget": {"errorMargin": 20_000}})
    budget, _ = budget_for("claude-sonnet-4-5", settings)
    assert budget.error_threshold == budget.warning_threshold == 147_000
    assert usage_state(147_000, budget) == "error"


def test_margins_larger_than_the_window_never_go_negative() -> None:
    settings = parse_settings(
        {"budget": {"reservedSummaryOutput": 900_000, "autoCompactMargin": 900_000}}
    )
    budget, _ = budget_for("claude-3-opus", settings)  # 4,096 max output caps the reserve
    assert budget.reserved == 4_096
    tiers = (budget.warning_threshold, budget.auto_compact_threshold, budget.blocking_limit)
    assert tiers == (0, 0, 200_000 - 4_096 - 3_000)


def test_a_bad_budget_figure_warns_and_keeps_its_default() -> None:
    warnings: list[str] = []
    settings = parse_settings({"budget": {"warningMargin": -5}}, warnings.append)
    assert settings.budget.warning_margin == 20_000
    assert warnings and "budget.warningMargin" in warnings[0]


def test_a_tiny_window_keeps_its_tiers_in_order() -> None:
    budget, _ = budget_for("claude-sonnet-4-5", Settings(context_window=8_000))
    assert 0 < budget.effective_window < budget.context_window
    tiers = (budget.warning_threshold, budget.auto_compact_threshold, budget.blocking_limit)
    assert 0 <= tiers[0] < tiers[1] < tiers[2] <= budget.effective_window


# ---- state and percentages -------------------------------------------------------------


@pytest.mark.parametrize(
    ("used", "state"),
    [
        (0, "ok"),
        (146_999, "ok"),
        (147_000, "warning"),
        (166_999, "warning"),
        (167_000, "error"),
        (176_999, "error"),
        (177_000, "blocking"),
        (250_000, "blocking"),
    ],
)
def test_state_changes_at_each_boundary(used: int, state: str, settings: Settings) -> None:
    budget, _ = budget_for("claude-sonnet-4-5", settings)
    assert usage_state(used, budget) == state


def test_a_paused_auto_compact_is_an_error_even_when_nearly_empty(settings: Settings) -> None:
    budget, _ = budget_for("claude-sonnet-4-5", settings)
    assert usage_state(10, budget, auto_paused=True) == "error"
    assert usage_state(177_000, budget, auto_paused=True) == "blocking"


@pytest.mark.parametrize(
    ("used", "enabled", "left"),
    [
        (0, True, 100),
        (83_500, True, 50),
        (146_960, True, 12),
        (167_000, True, 0),
        (190_000, True, 0),
        (90_000, False, 50),
        (170_000, False, 6),
    ],
)
def test_percent_left_is_the_share_of_the_threshold_still_free(
    used: int, enabled: bool, left: int, settings: Settings
) -> None:
    budget, _ = budget_for("claude-sonnet-4-5", settings)
    assert percent_left(used, budget, enabled) == left


# ---- the anchor rule -------------------------------------------------------------------


def _user(text: str) -> MessageInput:
    return MessageInput(role="user", content=text)


def _assistant(
    api_id: str, blocks: list[TextBlock | ToolUseBlock], usage: ApiUsage
) -> MessageInput:
    return MessageInput(role="assistant", content=list(blocks), api_message_id=api_id, usage=usage)


def _result(tool_use_id: str, text: str) -> MessageInput:
    return MessageInput(
        role="user", content=[ToolResultBlock(tool_use_id=tool_use_id, content=text)]
    )


def _usage(inp: int, out: int, create: int = 0, read: int = 0) -> ApiUsage:
    return ApiUsage(
        input_tokens=inp,
        output_tokens=out,
        cache_creation_input_tokens=create,
        cache_read_input_tokens=read,
    )


def _tokens(session: Session, ids: list[str]) -> int:
    return sum(session.get(mid).tokens for mid in ids)


def test_a_split_response_anchors_on_its_first_record_and_counts_interleaved_results(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    early = _usage(3, 50, create=9_000, read=1_000)
    late = _usage(7, 120, create=2_000, read=12_000)
    ids = session.append(
        [
            _user("Please read both config files."),
            _assistant("api_1", [TextBlock(text="Reading them now.")], early),
            _user("Thanks. Now compare them."),
            _assistant(
                "api_2", [ToolUseBlock(id="t1", name="Read", input={"path": "a.toml"})], late
            ),
            _result("t1", "[a]\nkey = 1\n" * 200),
            _assistant(
                "api_2", [ToolUseBlock(id="t2", name="Read", input={"path": "b.toml"})], late
            ),
            _result("t2", "[b]\nkey = 2\n" * 300),
        ]
    ).message_ids
    usage = compute_usage(session, settings, estimator)
    assert not usage.estimated
    after_first_record = ids[4:]  # first result, second record, second result
    # the second record joins the response's turn, the second result the first one's
    joined = 2 * MESSAGE_OVERHEAD
    assert usage.used_tokens == late.context_tokens + _tokens(session, after_first_record) - joined
    # one anchor only: the earlier response's usage is never added in
    assert usage.used_tokens < late.context_tokens + early.context_tokens


def test_only_the_latest_real_usage_counts(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    first, second = _usage(10, 200, read=20_000), _usage(12, 300, read=21_000)
    session.append(
        [
            _user("one"),
            _assistant("api_1", [TextBlock(text="first answer")], first),
            _user("two"),
            _assistant("api_2", [TextBlock(text="second answer")], second),
        ]
    )
    usage = compute_usage(session, settings, estimator)
    assert usage.used_tokens == second.context_tokens


def test_synthetic_and_all_zero_records_never_anchor(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    real = _usage(5, 100, read=30_000)
    session.append([_user("start"), _assistant("api_1", [TextBlock(text="ok")], real)])
    later = [
        text_message("user", "go on"),
        Message(
            role="assistant",
            content=[TextBlock(text="API Error: overloaded")],
            model="<synthetic>",
            usage=_usage(900, 900, read=90_000),
        ),
        text_message("user", "again"),
        Message(
            role="assistant",
            content=[TextBlock(text="stand-in")],
            api_message_id="api_zero",
            usage=_usage(0, 0),
        ),
    ]
    session.append(later)
    usage = compute_usage(session, settings, estimator)
    assert not usage.estimated
    assert usage.used_tokens == real.context_tokens + _tokens(session, [m.id for m in later])


def test_a_session_without_real_usage_is_fully_estimated(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5", system_prompt="You are terse.")
    ids = session.append(
        [_user("hello there"), MessageInput(role="assistant", content="hi")]
    ).message_ids
    usage = compute_usage(session, settings, estimator, tools_tokens=321)
    assert usage.estimated
    system = estimator.count_text("You are terse.")
    assert usage.used_tokens == system + 321 + _tokens(session, ids)
    assert usage.breakdown.system == system
    assert usage.breakdown.tools == 321
    assert usage.breakdown.messages == _tokens(session, ids)
    assert usage.breakdown.free == 200_000 - usage.used_tokens


def _compacted_session(store: SessionStore) -> tuple[Session, list[str], ApiUsage]:
    session = store.create(model="claude-sonnet-4-5")
    usage = _usage(4, 400, read=50_000)
    ids = session.append(
        [
            _user("build the parser"),
            _assistant("api_1", [TextBlock(text="parser built")], usage),
            _user("now the printer"),
            _assistant("api_2", [TextBlock(text="printer built")], _usage(4, 500, read=60_000)),
        ]
    ).message_ids
    return session, ids, usage


def test_after_a_compaction_that_rewrote_the_prefix_the_usage_is_estimated(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session, ids, _ = _compacted_session(store)
    summary = text_message("user", "Summary: the parser exists.", kind="summary")
    summary.tokens = estimator.count_message(summary)
    session.commit_boundary(
        Boundary(
            direction="all",
            summary_id=summary.id,
            new_messages=[summary],
            stands_for={summary.id: ids[:2]},
            summarized_ids=ids[:2],
            kept_ids=ids[2:],
            view_before=list(ids),
            view_after=[summary.id, *ids[2:]],
        )
    )
    usage = compute_usage(session, settings, estimator)
    assert usage.estimated and usage.basis == "compacted"
    # what the last usage (60,504) saw besides the estimate of its view stays counted
    carried = 60_504 - _tokens(session, ids)
    joined = MESSAGE_OVERHEAD  # the prompt after the summary joins its turn
    assert usage.used_tokens == summary.tokens + _tokens(session, ids[2:]) - joined + carried
    assert usage.breakdown.summary == summary.tokens
    assert usage.breakdown.messages == _tokens(session, ids[2:]) - joined
    assert usage.breakdown.unattributed == carried
    assert "estimated until the next reply" in usage.text.headline


def test_a_from_compaction_keeps_the_prefix_usage_valid(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session, ids, prefix_usage = _compacted_session(store)
    summary = text_message("user", "Summary: the printer exists.", kind="summary")
    session.commit_boundary(
        Boundary(
            direction="from",
            summary_id=summary.id,
            new_messages=[summary],
            stands_for={summary.id: ids[2:]},
            summarized_ids=ids[2:],
            kept_ids=ids[:2],
            view_before=list(ids),
            view_after=[*ids[:2], summary.id],
        )
    )
    usage = compute_usage(session, settings, estimator)
    assert usage.used_tokens == prefix_usage.context_tokens + session.get(summary.id).tokens
    # the summary after the anchor is an estimate: the figure is until the next reply
    assert usage.estimated and usage.basis == "compacted"
    assert "Estimated since the conversation changed" in usage.text.basis


def test_an_anchored_breakdown_is_scaled_to_the_real_figure(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5", system_prompt="System rules. " * 100)
    session.append(
        [
            _user("question " * 50),
            _assistant("api_1", [TextBlock(text="answer")], _usage(6, 40, read=9_000)),
        ]
    )
    usage = compute_usage(session, settings, estimator, tools_tokens=2_000)
    parts = usage.breakdown
    assert parts.system + parts.tools + parts.messages + parts.summary + parts.attachments == (
        usage.used_tokens
    )
    assert parts.tools > parts.system > 0  # proportions of the estimates survive the scaling
    assert parts.free == 200_000 - usage.used_tokens


def test_an_anchored_excess_goes_to_the_conversation_not_the_system_prompt(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    # a real figure far beyond the estimate (300K against a few hundred tokens) is the
    # conversation's: the system prompt and tools keep their own counts, so a compaction's
    # floor (what it can never remove) stays the size of the prompt, not a share of 300K
    prompt = "Be brief and precise. " * 4
    session = store.create(model="claude-sonnet-4-5[1m]", system_prompt=prompt)
    session.append(
        [
            _user("read the whole repository"),
            _assistant("api_1", [TextBlock(text="Read.")], _usage(300_000, 20)),
        ]
    )
    usage = compute_usage(session, settings, estimator, tools_tokens=500)
    parts = usage.breakdown
    assert usage.used_tokens == 300_020
    assert parts.system == estimator.calibrated(estimator.count_text(prompt))
    assert parts.tools == estimator.calibrated(500)
    assert parts.messages == usage.used_tokens - parts.system - parts.tools
    assert parts.unattributed == 0


def test_an_anchored_figure_under_the_estimate_shrinks_every_part_alike(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5", system_prompt="System rules. " * 100)
    session.append(
        [
            _user("question " * 400),
            _assistant("api_1", [TextBlock(text="answer")], _usage(50, 10)),
        ]
    )
    usage = compute_usage(session, settings, estimator, tools_tokens=2_000)
    parts = usage.breakdown
    assert usage.used_tokens == 60
    assert parts.system + parts.tools + parts.messages == 60
    assert parts.tools > parts.messages > 0 and parts.system > 0


def _claude_code_file(
    path: Path, prompt: str, context_tokens: int, reply_at: str = "2025-03-04T09:00:05.000Z"
) -> Path:
    """A two-record Claude Code session whose reply's real usage is `context_tokens`."""
    records = [
        {
            "type": "user",
            "uuid": "u-1",
            "sessionId": "cc",
            "timestamp": "2025-03-04T09:00:00.000Z",
            "message": {"role": "user", "content": prompt},
        },
        {
            "type": "assistant",
            "uuid": "a-1",
            "parentUuid": "u-1",
            "sessionId": "cc",
            "timestamp": reply_at,
            "message": {
                "id": "msg_api_1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Done."}],
                "usage": {"input_tokens": context_tokens - 2, "output_tokens": 2},
            },
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_an_imported_sessions_usage_beyond_its_view_is_unattributed(
    store: SessionStore, settings: Settings, estimator: Estimator, tmp_path: Path
) -> None:
    source = _claude_code_file(tmp_path / "cc.jsonl", "Fix the parser. " * 50, 9_000)
    session, _ = import_with_report(source, store)
    usage = compute_usage(session, settings, estimator)
    view = sum(m.tokens for m in session.view_messages())
    assert not usage.estimated and usage.used_tokens == 9_000
    parts = usage.breakdown
    assert parts.messages == view  # the estimate of the view, not scaled up to the usage
    assert parts.unattributed == 9_000 - view > 0
    assert parts.system == parts.tools == 0
    assert parts.free == usage.context_window - 9_000
    assert UNATTRIBUTED_LABEL == "the original client's system prompt and tools"


def test_an_imported_session_under_its_estimate_has_nothing_unattributed(
    store: SessionStore, settings: Settings, estimator: Estimator, tmp_path: Path
) -> None:
    source = _claude_code_file(tmp_path / "cc.jsonl", "Fix the parser. " * 50, 20)
    session, _ = import_with_report(source, store)
    usage = compute_usage(session, settings, estimator)
    assert usage.breakdown.unattributed == 0
    assert usage.breakdown.messages == usage.used_tokens == 20


def test_a_native_sessions_excess_is_spread_not_unattributed(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5", system_prompt="Be brief.")
    session.append(
        [
            _user("Fix the parser. " * 50),
            _assistant("api_1", [TextBlock(text="Done.")], _usage(9_000, 2)),
        ]
    )
    parts = compute_usage(session, settings, estimator).breakdown
    assert parts.unattributed == 0
    assert parts.system + parts.messages == 9_002


def test_an_imported_session_begins_at_its_first_record(
    store: SessionStore, tmp_path: Path
) -> None:
    source = _claude_code_file(tmp_path / "cc.jsonl", "hello", 5_000)
    session, _ = import_with_report(source, store)
    assert session.created_at == "2025-03-04T09:00:00.000Z"
    assert session.updated_at == "2025-03-04T09:00:05.000Z"
    # a record stamped before the first one (clock skew, a joined file) moves nothing back
    skewed = _claude_code_file(tmp_path / "skew.jsonl", "hi", 5_000, "2025-03-04T08:59:00Z")
    early, _ = import_with_report(skewed, store)
    assert early.created_at == early.updated_at == "2025-03-04T09:00:00.000Z"


# ---- the Usage payload -----------------------------------------------------------------


def test_usage_carries_the_protocol_fields_on_the_wire(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    session.append([_user("hi")])
    wire = compute_usage(session, settings, estimator).wire()
    protocol = {
        "sessionId", "model", "contextWindow", "effectiveWindow", "autoCompactThreshold",
        "warningThreshold", "errorThreshold", "blockingLimit", "usedTokens", "percentUsed",
        "percentLeft", "state", "estimated", "autoCompactEnabled", "autoCompactPaused",
        "breakdown",
    }  # fmt: skip
    assert protocol <= set(wire)
    assert set(wire) - protocol <= {
        "estimatorExact", "warnings", "autoCompactPausedBy", "basis", "text"
    }  # fmt: skip
    assert set(wire["breakdown"]) == {
        "system",
        "tools",
        "messages",
        "summary",
        "attachments",
        "unattributed",
        "free",
    }
    assert wire["sessionId"] == session.session_id


def test_percent_used_is_rounded_to_one_decimal_and_state_follows(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    session.append(
        [_user("hi"), _assistant("api_1", [TextBlock(text="yo")], _usage(200, 0, read=168_000))]
    )
    usage = compute_usage(session, settings, estimator)
    assert usage.used_tokens == 168_200
    assert usage.percent_used == 84.1
    assert usage.percent_left == 0
    assert usage.state == "error"
    paused = compute_usage(session, settings, estimator, auto_paused=True)
    assert paused.auto_compact_paused and paused.state == "error"


def test_a_fallback_estimator_is_flagged_in_the_usage(
    store: SessionStore, settings: Settings, tmp_path: Path
) -> None:
    fallback = Estimator(bpe_path=tmp_path / "absent.tiktoken")
    session = store.create(model="claude-sonnet-4-5")
    session.append([_user("x" * 400)])
    usage = compute_usage(session, settings, fallback)
    assert usage.estimator_exact is False
    assert any("unavailable" in w for w in usage.warnings)


# ---- calibration -----------------------------------------------------------------------


def test_calibration_moves_the_estimate_toward_the_real_usage(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    prompt = "Explain the difference between a list and a tuple in Python. " * 40
    fresh = store.create(model="claude-sonnet-4-5", system_prompt="Be helpful.")
    fresh.append([_user(prompt)])
    session = store.create(model="claude-sonnet-4-5", system_prompt="Be helpful.")
    ids = session.append([_user(prompt)]).message_ids
    raw = estimator.count_text("Be helpful.") + _tokens(session, ids)
    actual = round(raw * 1.3)  # the real tokenizer saw 30% more than the local estimate
    reply = _assistant("api_1", [TextBlock(text="Lists are mutable.")], _usage(actual, 5))
    reply_id = session.append([reply]).message_ids[0]

    before = compute_usage(fresh, settings, estimator)
    observe_response(session, reply_id, estimator)
    after = compute_usage(fresh, settings, estimator)
    assert before.estimated and after.estimated
    assert before.used_tokens == raw
    assert abs(after.used_tokens - actual) < abs(before.used_tokens - actual)
    assert after.used_tokens <= actual  # moved toward the real figure, not past it


def test_calibration_compares_against_the_prompt_before_a_split_response(
    store: SessionStore, estimator: Estimator, cl100k: Encoder
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    prompt = _user("Read both files please. " * 100)
    prompt_id = session.append([prompt]).message_ids[0]
    prompt_raw = _tokens(session, [prompt_id])
    real = _usage(10, 99, read=prompt_raw * 2 - 10)  # the prompt side is twice the estimate
    ids = session.append(
        [
            _assistant("api_1", [ToolUseBlock(id="t1", name="Read", input={"p": "a"})], real),
            _result("t1", "x = 1\n" * 400),
            _assistant("api_1", [ToolUseBlock(id="t2", name="Read", input={"p": "b"})], real),
        ]
    ).message_ids
    observe_response(session, ids[2], estimator)
    reference = Estimator(encoder=cl100k)
    reference.observe(prompt_raw, prompt_raw * 2)
    # the interleaved result belongs to the response, not to the prompt it answered
    assert estimator.factor == reference.factor > 1.0


def test_records_without_real_usage_teach_nothing(
    store: SessionStore, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    ids = session.append(
        [_user("question " * 300), MessageInput(role="assistant", content="answer")]
    ).message_ids
    observe_response(session, ids[1], estimator)
    assert estimator.factor == 1.0
