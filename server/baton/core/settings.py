"""Baton's settings: one model with defaults (a client's values read onto it, each bad one
warned of and set to its default: `settings_read.py`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, field_validator
from pydantic.config import JsonDict

from baton.core.conversation.wire_model import WireModel
from baton.core.environment import is_http_url
from baton.core.models.thinking import THINKING_FORM, ThinkingSetting, parse_thinking
from baton.core.models.windows import MODEL_NAME_PATTERN, MODEL_NAME_RULE, model_name_problem
from baton.core.settings_sections import (
    TOKENS_MAX,
    AutoCompactSettings,
    BudgetNoteSettings,
    BudgetSettings,
    IdleCompactSettings,
    KeepWindowSettings,
    Level,
    MicrocompactSettings,
    RestoreSettings,
    ToolPermissions,
    ToolsSettings,
)

__all__ = [  # the groups (settings_sections.py) are read from here, with the model they fill
    "DEFAULTS", "DEFAULT_MODEL", "DEFAULT_MODELS", "AutoCompactSettings", "BudgetNoteSettings",
    "BudgetSettings", "IdleCompactSettings", "KeepWindowSettings", "Level",
    "MicrocompactSettings", "RestoreSettings", "Settings", "SummarizerName", "ToolPermissions",
    "ToolsSettings",
]  # fmt: skip

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MODELS = ("claude-opus-5", "claude-sonnet-5-5", "claude-haiku-4-5")
SummarizerName = Literal["auto", "anthropic", "extractive", "memory", "server"]
BASE_URL = "an http:// or https:// URL (null: env ANTHROPIC_BASE_URL)"
# What the settings manifest says of a value beyond its type, so that VS Code's Settings
# editor marks what the checks below refuse (patterns that Python and JavaScript read alike).
MODEL_NAME: JsonDict = {"pattern": MODEL_NAME_PATTERN, "patternErrorMessage": MODEL_NAME_RULE}
BASE_URL_FORM: JsonDict = {
    "pattern": r"^[hH][tT][tT][pP][sS]?://([^/?#@]*@)?[^/?#@:]",
    "patternErrorMessage": BASE_URL,
}


class Settings(WireModel):
    data_dir: str | None = Field(
        default=None,
        description="Where transcripts live (null: env BATON_DATA_DIR, else the platform's "
        "user data directory).",
        json_schema_extra={"pattern": r"^[^\u0000]*$", "patternErrorMessage": "no NUL character"},
    )
    model: str = Field(
        default=DEFAULT_MODEL,
        description="The model replies come from.",
        json_schema_extra=MODEL_NAME,
    )
    context_window: int | None = Field(
        default=None,
        gt=0,
        le=TOKENS_MAX,
        description="Override the model's context window (tokens).",
    )
    models: list[str] = Field(
        default_factory=lambda: list(DEFAULT_MODELS),
        description="The models the chat panel's model picker offers when the Models API "
        "cannot be asked (no API key, or it failed); `model` is always offered too.",
        json_schema_extra={"items": {"type": "string", **MODEL_NAME}},
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
        default=None,
        description="The model summaries come from (null: `model`).",
        json_schema_extra=MODEL_NAME,
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
        json_schema_extra=BASE_URL_FORM,
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
        description="Thinking for replies: `off`, `adaptive` or a token budget (1024 to "
        "1000000), sent in the form the reply's model takes (null: the model's own default).",
        json_schema_extra=THINKING_FORM,
    )

    @field_validator("model", "models")
    @classmethod
    def _check_model(cls, value: str | list[str]) -> str | list[str]:
        # `models` are offered in the model picker, where setModel would refuse a bad name
        for model in [value] if isinstance(value, str) else value:
            problem = model_name_problem(model)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("summary_model")
    @classmethod
    def _check_summary_model(cls, value: str | None) -> str | None:
        problem = None if value is None else model_name_problem(value)
        if problem:
            raise ValueError(f"{problem} (null: `model`)")
        return value

    @field_validator("anthropic_base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value and not is_http_url(value):
            raise ValueError(BASE_URL)
        return value

    @field_validator("data_dir")
    @classmethod
    def _check_data_dir(cls, value: str | None) -> str | None:
        if value is not None and "\0" in value:
            raise ValueError("a path holds no NUL character")
        return value

    @field_validator("thinking", mode="before")
    @classmethod
    def _check_thinking(cls, value: object) -> ThinkingSetting:
        return parse_thinking(value)

    def thinking_setting(self) -> ThinkingSetting:
        return parse_thinking(self.thinking)

    def resolved_data_dir(self) -> Path:
        """The setting wins over BATON_DATA_DIR, which wins over the platform default. A
        blank one is not given, as an empty one is: Path("  ") is a folder of blanks in
        whatever directory the process runs in."""
        if self.data_dir and self.data_dir.strip():
            return Path(self.data_dir).expanduser()
        env = os.environ.get("BATON_DATA_DIR")
        if env and env.strip():
            return Path(env).expanduser()
        return Path(platformdirs.user_data_dir("baton", appauthor=False))

    def resolved_base_url(self) -> str | None:
        return self.anthropic_base_url or os.environ.get("ANTHROPIC_BASE_URL") or None

    def resolved_summary_model(self) -> str:
        return self.summary_model or self.model


DEFAULTS = Settings()
