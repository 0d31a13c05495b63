"""Settings: defaults, camelCase keys, per-key fallback on bad values, data dir precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.core.settings import Settings
from baton.core.settings_read import parse_settings


def test_nested_camel_case_keys_set_their_fields() -> None:
    settings = parse_settings(
        {
            "model": "claude-opus-4-6",
            "contextWindow": 500_000,
            "autoCompact": {"enabled": False, "thresholdPercent": 80},
            "keepWindow": {"minTokens": 2_000},
            "restore": {"maxFiles": 2, "exclude": ["*.log"]},
        }
    )
    assert settings.model == "claude-opus-4-6"
    assert settings.context_window == 500_000
    assert settings.auto_compact.enabled is False
    assert settings.auto_compact.threshold_percent == 80
    assert settings.keep_window.min_tokens == 2_000
    assert settings.keep_window.max_tokens == Settings().keep_window.max_tokens
    assert settings.restore.max_files == 2 and settings.restore.exclude == ["*.log"]


def test_each_bad_value_warns_once_and_takes_its_default() -> None:
    warnings: list[str] = []
    settings = parse_settings(
        {
            "contextWindow": "huge",
            "summarizer": "magic",
            "autoCompact": {"thresholdPercent": 500, "enabled": False},
            "model": "claude-opus-4-6",
        },
        warnings.append,
    )
    defaults = Settings()
    assert settings.context_window == defaults.context_window
    assert settings.summarizer == defaults.summarizer
    assert settings.auto_compact.threshold_percent == defaults.auto_compact.threshold_percent
    assert settings.auto_compact.enabled is False  # its good neighbour still applies
    assert settings.model == "claude-opus-4-6"
    assert len(warnings) == 3
    assert all("using the default" in w for w in warnings)


def test_unknown_keys_are_ignored_without_a_warning() -> None:
    warnings: list[str] = []
    settings = parse_settings({"colour": "blue", "autoCompact": {"speed": 3}}, warnings.append)
    assert settings == Settings()
    assert warnings == []


def test_a_partial_change_keeps_what_it_does_not_name() -> None:
    first = parse_settings({"contextWindow": 50_000, "model": "claude-opus-4-6"})
    second = parse_settings({"model": "claude-sonnet-5-5"}, base=first)
    assert second.context_window == 50_000
    assert second.model == "claude-sonnet-5-5"


def test_a_bad_value_after_a_good_one_goes_back_to_the_default_not_the_previous() -> None:
    first = parse_settings({"contextWindow": 50_000, "keepWindow": {"minTokens": 1_000}})
    warnings: list[str] = []
    second = parse_settings(
        {"contextWindow": "junk", "keepWindow": {"minTokens": -1}}, warnings.append, base=first
    )
    assert second.context_window is None
    assert second.keep_window.min_tokens == Settings().keep_window.min_tokens
    assert len(warnings) == 2


def test_settings_that_are_not_an_object_warn_and_keep_the_defaults() -> None:
    warnings: list[str] = []
    assert parse_settings(["not", "an", "object"], warnings.append) == Settings()  # type: ignore[arg-type]
    assert len(warnings) == 1


def test_the_data_dir_setting_wins_over_the_environment_which_wins_over_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BATON_DATA_DIR", raising=False)
    platform_default = Settings().resolved_data_dir()
    assert platform_default.name == "baton"
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path / "env"))
    assert Settings().resolved_data_dir() == tmp_path / "env"
    chosen = parse_settings({"dataDir": str(tmp_path / "setting")})
    assert chosen.resolved_data_dir() == tmp_path / "setting"


@pytest.mark.parametrize("blank", ["", "  ", " \t "])
def test_a_blank_data_dir_is_not_given_as_an_empty_one_is(
    blank: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BATON_DATA_DIR="  " (or the setting) made a folder named "  " in the current
    directory and kept the sessions there, while an empty one is not given."""
    monkeypatch.delenv("BATON_DATA_DIR", raising=False)
    platform_default = Settings().resolved_data_dir()
    monkeypatch.setenv("BATON_DATA_DIR", blank)
    assert Settings().resolved_data_dir() == platform_default
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path / "env"))
    assert parse_settings({"dataDir": blank}).resolved_data_dir() == tmp_path / "env"


def test_one_bad_key_of_an_inner_group_resets_that_key_alone() -> None:
    """A bad `edit` level once reset every permission, switching `read_file: off` back on."""
    warnings: list[str] = []
    settings = parse_settings(
        {"tools": {"permissions": {"read_file": "off", "edit": "bogus"}}}, warnings.append
    )
    permissions = settings.tools.permissions
    assert permissions.read_file == "off"
    assert permissions.edit == Settings().tools.permissions.edit
    assert len(warnings) == 1 and warnings[0].startswith("baton.tools.permissions.edit:")


@pytest.mark.parametrize(
    ("raw", "field", "why"),
    [
        ({"contextWindow": True}, "context_window", "a number, not true or false"),
        ({"autoCompact": {"thresholdPercent": True}}, "auto_compact", "a number"),
        ({"restore": {"maxFiles": False}}, "restore", "a number"),
        ({"autoCompact": {"enabled": "no"}}, "auto_compact", "a switch takes true or false"),
        ({"autoCompact": {"enabled": "off"}}, "auto_compact", "true or false"),
        ({"tools": {"enabled": "0"}}, "tools", "true or false"),
        ({"budgetNote": {"enabled": 0}}, "budget_note", "true or false"),
        ({"exactCounts": "yes"}, "exact_counts", "true or false"),
        ({"previewBeforeCompact": 1}, "preview_before_compact", "true or false"),
        ({"idleCompact": {"enabled": None}}, "idle_compact", "true or false"),
        ({"model": ""}, "model", "a model is named"),
        ({"model": "   "}, "model", "a model is named"),
        ({"summaryModel": " "}, "summary_model", "a model is named"),
        ({"models": ["claude-opus-4-6", ""]}, "models", "a model is named"),
        ({"models": ["claude-x\nhi"]}, "models", "one line without control characters"),
        ({"anthropicBaseUrl": "localhost:8080"}, "anthropic_base_url", "an http:// or https://"),
        ({"anthropicBaseUrl": "api.example.com/v1"}, "anthropic_base_url", "https:// URL"),
        ({"anthropicBaseUrl": "https://"}, "anthropic_base_url", "https:// URL"),
        ({"model": "claude-x\nhi"}, "model", "one line without control characters"),
        ({"model": "claude-x\r"}, "model", "one line without control characters"),
        ({"summaryModel": "a\u2028b"}, "summary_model", "one line without control"),
        ({"model": "claude-" + "x" * 300}, "model", "at most 200 characters"),
        ({"models": ["claude-x", "y" * 201]}, "models", "at most 200 characters"),
        ({"summaryModel": " " + "z" * 201 + " "}, "summary_model", "at most 200 characters"),
        ({"dataDir": "/tmp/a\x00b"}, "data_dir", "no NUL"),
        ({"compactInstructions": "keep \ud800 facts"}, "compact_instructions", "lone surrogate"),
        ({"systemPrompt": "be \ud800 brief"}, "system_prompt", "lone surrogate"),
        ({"models": ["claude-x", "\udc00"]}, "models", "lone surrogate"),
        ({"restore": {"maxTokensPerFile": 10**20}}, "restore", "less than or equal"),
        ({"restore": {"totalTokens": 10**10}}, "restore", "less than or equal"),
        ({"microcompact": {"gapMinutes": 10**30}}, "microcompact", "less than or equal"),
        ({"contextWindow": 10**40}, "context_window", "less than or equal"),
        ({"contextWindow": 10**400}, "context_window", "less than or equal"),
        ({"budget": {"blockingMargin": 10**40}}, "budget", "less than or equal"),
        ({"budget": {"autoCompactMargin": 10**40}}, "budget", "less than or equal"),
        ({"budget": {"warningMargin": 10**40}}, "budget", "less than or equal"),
        ({"budget": {"errorMargin": 10**40}}, "budget", "less than or equal"),
        ({"budget": {"reservedSummaryOutput": 10**40}}, "budget", "less than or equal"),
        ({"keepWindow": {"minTokens": 10**40}}, "keep_window", "less than or equal"),
        ({"keepWindow": {"maxTokens": 10**40}}, "keep_window", "less than or equal"),
        ({"budgetNote": {"startTokens": 10**40}}, "budget_note", "less than or equal"),
        ({"thinking": 10**20}, "thinking", "at most 1,000,000 tokens"),
        ({"thinking": "1000001"}, "thinking", "at most 1,000,000 tokens"),
    ],
)
def test_values_that_would_be_taken_for_something_else_warn_and_keep_the_default(
    raw: dict[str, object], field: str, why: str
) -> None:
    """`true` read as 1, "no" read as false (where "nope" warned), an empty model, a path
    no file system takes, text no transcript can hold, a budget no window holds: each
    failed later, far from its setting, or was taken without a word."""
    warnings: list[str] = []
    settings = parse_settings(raw, warnings.append)
    assert getattr(settings, field) == getattr(Settings(), field)
    assert len(warnings) == 1 and why in warnings[0] and "using the default" in warnings[0]


@pytest.mark.parametrize(
    "raw",
    [
        {"model": "claude-" + "x" * 100_000 + "\n"},
        {"thinking": "9" * 5_000},
        {"thinking": "x" * 100_000},  # its reason quoted the value too
        {"restore": {"exclude": ["*.log"] * 50_000 + [5]}},
    ],
)
def test_a_warning_quotes_a_long_bad_value_cut(raw: dict[str, object]) -> None:
    """The warning quoted the whole value: a model name of 100,000 characters made a
    warning line as long, logged and shown to the user."""
    warnings: list[str] = []
    parse_settings(raw, warnings.append)
    assert len(warnings) == 1 and len(warnings[0]) < 400, len(warnings[0])
    assert "... (" in warnings[0]
    assert warnings[0].endswith("using the default")


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ({"model": ""}, "baton.model: invalid value '' (a model is named, not empty)"),
        (
            {"anthropicBaseUrl": "localhost:8080"},
            "baton.anthropicBaseUrl: invalid value 'localhost:8080' (an http:// or https:// URL "
            "(null: env ANTHROPIC_BASE_URL))",
        ),
        (
            {"thinking": "often"},
            "baton.thinking: invalid value 'often' (thinking must be 'off', 'adaptive' or a "
            "token budget, not 'often')",
        ),
        ({"summaryModel": " "}, "baton.summaryModel: invalid value ' ' (a model is named, not "),
    ],
)
def test_a_warning_gives_the_reason_in_the_check_s_own_words(
    raw: dict[str, object], said: str
) -> None:
    """It began "Value error, ", pydantic's name for what a check refused, before the reason."""
    warnings: list[str] = []
    parse_settings(raw, warnings.append)
    assert len(warnings) == 1 and warnings[0].startswith(said), warnings
