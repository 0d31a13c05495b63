"""Baton's settings: one model with defaults; a bad value warns once and keeps the default."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import Field, ValidationError, field_validator

from baton.core.conversation.messages import WireModel
from baton.core.models.thinking import ThinkingSetting, parse_thinking
from baton.core.settings_lists import DEFAULT_EXCLUDES, DEFAULT_MICROCOMPACT_TOOLS

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MODELS = ("claude-opus-5", "claude-sonnet-5-5", "claude-haiku-4-5")


class AutoCompactSettings(WireModel):
    enabled: bool = Field(
        default=True, description="Compact automatically when usage reaches the threshold."
    )
    threshold_percent: float | None = Field(
        default=None,
        ge=1,
        le=100,
        description="The auto-compact threshold as a percentage of the effective window "
        "(null: the window minus a fixed margin).",
    )
    background_percent: float | None = Field(
        default=None,
        ge=0,
        lt=100,
        description="Start writing the auto-compaction's summary in the background once "
        "usage reaches this percentage of the auto-compact threshold, and commit it when "
        "the threshold is reached (null: 80 for summaries a model writes, off for the "
        "offline extractive and memory summarizers; 0: off).",
    )


class BudgetSettings(WireModel):
    """The fixed figures of the context budget, in tokens, for windows of 100,000 and more.

    Below 100,000 tokens each one shrinks in proportion to the window (BEHAVIOR.md §2).
    """

    reserved_summary_output: int = Field(
        default=20_000,
        ge=0,
        description="Tokens held back from the window for a summary's output "
        "(never more than the model's maximum output).",
    )
    auto_compact_margin: int = Field(
        default=13_000,
        ge=0,
        description="How far below the effective window auto-compact starts, in tokens.",
    )
    warning_margin: int = Field(
        default=20_000,
        ge=0,
        description="How far below the auto-compact threshold the warning state starts, in tokens.",
    )
    error_margin: int = Field(
        default=0,
        ge=0,
        description="How far below the auto-compact threshold the error state starts, "
        "in tokens (0: at the threshold).",
    )
    blocking_margin: int = Field(
        default=3_000,
        ge=0,
        description="How far below the effective window sending is refused, in tokens.",
    )


class KeepWindowSettings(WireModel):
    min_tokens: int = Field(
        default=10_000, ge=0, description="`all` keeps at least this many recent tokens verbatim."
    )
    min_text_messages: int = Field(
        default=5, ge=0, description="`all` keeps at least this many recent messages with text."
    )
    max_tokens: int = Field(
        default=40_000, ge=0, description="`all` stops widening the kept window at this size."
    )


class RestoreSettings(WireModel):
    max_files: int = Field(
        default=5, ge=0, description="Editor files restored after a compaction, at most."
    )
    max_tokens_per_file: int = Field(
        default=5_000, ge=0, description="Each restored file is cut to this many tokens."
    )
    total_tokens: int = Field(
        default=50_000, ge=0, description="All restored files together, at most this many tokens."
    )
    exclude: list[str] = Field(
        default_factory=lambda: list(DEFAULT_EXCLUDES),
        description="Glob patterns of files never restored (credentials by default).",
    )


class MicrocompactSettings(WireModel):
    gap_minutes: int = Field(
        default=60,
        ge=0,
        description="Idle minutes since the last reply after which old tool results are cleared.",
    )
    keep_recent: int = Field(
        default=5, ge=0, description="The most recent tool results idle clearing keeps."
    )
    tools: list[str] = Field(
        default_factory=lambda: list(DEFAULT_MICROCOMPACT_TOOLS),
        description="Tools whose old results idle clearing may clear.",
    )


class IdleCompactSettings(WireModel):
    enabled: bool = Field(
        default=False,
        description="Compact a session in the background once it has been idle past the "
        "prompt cache's lifetime (5 minutes, or 1 hour when the request asked for it), "
        "when it is above `percent` of its window: the next request pays for its prefix "
        "anyway. Never while a reply, a compaction or a draft is open.",
    )
    percent: float = Field(
        default=50,
        ge=1,
        le=100,
        description="The share of the context window, in percent, above which an idle "
        "session is compacted.",
    )


class BudgetNoteSettings(WireModel):
    enabled: bool = Field(
        default=True,
        description="Near the thresholds, tell the model in each request how much of its "
        "context is used, what is left and where auto-compact fires (never stored in the "
        "transcript).",
    )
    start_tokens: int | None = Field(
        default=None,
        ge=0,
        description="The context size, in tokens, from which the note is sent (null: the "
        "warning threshold).",
    )


Level = Literal["auto", "ask", "off"]


class ToolPermissions(WireModel):
    """Each workspace tool's level, keyed by the tool's name (`edit`: every edit command)."""

    read_file: Level = Field(default="auto", alias="read_file", description="Reading a file.")
    list_dir: Level = Field(default="auto", alias="list_dir", description="Listing a folder.")
    find_files: Level = Field(
        default="auto", alias="find_files", description="Finding files by glob."
    )
    search_text: Level = Field(
        default="auto", alias="search_text", description="Searching text in the workspace."
    )
    edit: Level = Field(default="ask", description="Editing or creating a file.")


class ToolsSettings(WireModel):
    enabled: bool = Field(
        default=True,
        description="Offer the workspace tools (read, list, find, search, edit) on a send "
        "that brings no tools of its own.",
    )
    permissions: ToolPermissions = Field(default_factory=ToolPermissions)
    review_edits: bool = Field(
        default=False,
        description="Apply edits with needsConfirmation, so the editor shows them for review.",
    )
    max_steps: int = Field(
        default=25, ge=1, le=500, description="Tool rounds one send runs, at most."
    )


SummarizerName = Literal["auto", "anthropic", "extractive", "memory", "server"]


class Settings(WireModel):
    data_dir: str | None = Field(
        default=None,
        description="Where transcripts live (null: env BATON_DATA_DIR, else the platform's "
        "user data directory).",
    )
    model: str = Field(default=DEFAULT_MODEL, description="The model replies come from.")
    context_window: int | None = Field(
        default=None, gt=0, description="Override the model's context window (tokens)."
    )
    models: list[str] = Field(
        default_factory=lambda: list(DEFAULT_MODELS),
        description="The models the chat panel's model picker offers when the Models API "
        "cannot be asked (no API key, or it failed); `model` is always offered too.",
    )
    auto_compact: AutoCompactSettings = Field(default_factory=AutoCompactSettings)
    budget: BudgetSettings = Field(
        default_factory=BudgetSettings,
        description="The context budget's reserve and margins, in tokens.",
    )
    summarizer: SummarizerName = Field(
        default="auto",
        description="Who writes summaries; `server`: the API's own compaction (for `all` "
        "and `up_to`; otherwise, or when it fails, anthropic); `auto`: server when an API "
        "key is set and the Models API lists compaction for the model, else anthropic with "
        "a key, else extractive.",
    )
    summary_model: str | None = Field(
        default=None, description="The model summaries come from (null: `model`)."
    )
    compact_instructions: str = Field(
        default="", description="Instructions always added to summary requests."
    )
    preview_before_compact: bool = Field(
        default=False,
        description="Compact Up To Here / From Here first offer a preview: the summary in an "
        "editable editor and its cost, applied only when you choose Apply.",
    )
    keep_window: KeepWindowSettings = Field(default_factory=KeepWindowSettings)
    restore: RestoreSettings = Field(default_factory=RestoreSettings)
    microcompact: MicrocompactSettings = Field(default_factory=MicrocompactSettings)
    idle_compact: IdleCompactSettings = Field(default_factory=IdleCompactSettings)
    budget_note: BudgetNoteSettings = Field(default_factory=BudgetNoteSettings)
    anthropic_base_url: str | None = Field(
        default=None,
        description="The API endpoint (null: env ANTHROPIC_BASE_URL, else Anthropic's).",
    )
    exact_counts: bool = Field(
        default=False,
        description="With an API key: once changes settle, ask the API's count_tokens "
        "endpoint for the exact size of the view and publish it as the usage.",
    )
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    system_prompt: str = Field(
        default="", description="Added to Baton's default system prompt of new sessions."
    )
    # str | int on the wire: the schema must not put the two words' enum on the budget too
    thinking: str | int | None = Field(
        default=None,
        description="Thinking for replies: `off`, `adaptive` or a token budget (at least "
        "1024), sent in the form the reply's model takes (null: the model's own default).",
    )

    @field_validator("thinking", mode="before")
    @classmethod
    def _check_thinking(cls, value: object) -> ThinkingSetting:
        return parse_thinking(value)

    def thinking_setting(self) -> ThinkingSetting:
        return parse_thinking(self.thinking)

    def resolved_data_dir(self) -> Path:
        """The setting wins over BATON_DATA_DIR, which wins over the platform default."""
        if self.data_dir:
            return Path(self.data_dir).expanduser()
        env = os.environ.get("BATON_DATA_DIR")
        if env:
            return Path(env).expanduser()
        return Path(platformdirs.user_data_dir("baton", appauthor=False))

    def resolved_base_url(self) -> str | None:
        return self.anthropic_base_url or os.environ.get("ANTHROPIC_BASE_URL") or None

    def resolved_summary_model(self) -> str:
        return self.summary_model or self.model


DEFAULTS = Settings()


def parse_settings(
    raw: Mapping[str, Any] | None,
    warn: Callable[[str], None] | None = None,
    base: Settings | None = None,
) -> Settings:
    """Settings from a client's `baton` section; each bad value warns and takes its default.

    `base` supplies the values to keep for keys the client did not send (so a partial
    `didChangeConfiguration` changes only what it names); a key it sends with a bad value
    goes back to the default, as PROTOCOL.md says, not to whatever was set before.
    """
    result = (base or Settings()).model_copy(deep=True)
    if not raw:
        return result
    if not isinstance(raw, Mapping):
        if warn:
            warn(f"baton settings must be an object, got {type(raw).__name__}; using defaults")
        return result
    fields = Settings.model_fields
    by_alias = {(info.alias or name): name for name, info in fields.items()}
    for key, value in raw.items():
        name = by_alias.get(key, key if key in fields else None)
        if name is None:
            continue  # unknown keys are ignored
        current = getattr(result, name)
        if isinstance(current, WireModel) and isinstance(value, Mapping):
            setattr(result, name, _merge_nested(current, value, f"{key}", warn))
            continue
        try:
            checked = Settings.model_validate({**result.model_dump(), name: value})
        except ValidationError as exc:
            if warn:
                warn(
                    f"baton.{key}: invalid value {value!r} ({_first_error(exc)}); using the default"
                )
            setattr(result, name, getattr(DEFAULTS, name))
            continue
        setattr(result, name, getattr(checked, name))
    return result


def _merge_nested(
    current: WireModel, raw: Mapping[str, Any], prefix: str, warn: Callable[[str], None] | None
) -> WireModel:
    model_cls = type(current)
    values = current.model_dump()
    by_alias = {(info.alias or name): name for name, info in model_cls.model_fields.items()}
    for key, value in raw.items():
        name = by_alias.get(key, key if key in model_cls.model_fields else None)
        if name is None:
            continue
        try:
            checked = model_cls.model_validate({**values, name: value})
        except ValidationError as exc:
            if warn:
                warn(
                    f"baton.{prefix}.{key}: invalid value {value!r} ({_first_error(exc)}); "
                    "using the default"
                )
            values[name] = getattr(model_cls(), name)
            continue
        values[name] = getattr(checked, name)
    return model_cls.model_validate(values)


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    return str(errors[0]["msg"]) if errors else "invalid"
