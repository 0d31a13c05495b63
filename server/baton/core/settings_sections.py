"""The groups inside Baton's settings, each a model with its defaults: budget, compaction, tools.

Auto-compact, the budget's margins, the kept window, restore, microcompact, idle compaction,
the budget note and the workspace tools. `Settings` (settings.py) holds one of each and
re-exports them, so callers import them from there.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from baton.core.conversation.wire_model import WireModel
from baton.core.settings_lists import DEFAULT_EXCLUDES, DEFAULT_MICROCOMPACT_TOOLS

RESTORE_TOKENS_MAX = 1_000_000  # no context window holds more
TOKENS_MAX = 10_000_000  # a window, a margin: ten times the largest window (1M) a model has
GAP_MINUTES_MAX = 1_000_000_000  # some 1,900 years, well inside what a timedelta holds


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
        le=TOKENS_MAX,
        description="Tokens held back from the window for a summary's output "
        "(never more than the model's maximum output).",
    )
    auto_compact_margin: int = Field(
        default=13_000,
        ge=0,
        le=TOKENS_MAX,
        description="How far below the effective window auto-compact starts, in tokens.",
    )
    warning_margin: int = Field(
        default=20_000,
        ge=0,
        le=TOKENS_MAX,
        description="How far below the auto-compact threshold the warning state starts, in tokens.",
    )
    error_margin: int = Field(
        default=0,
        ge=0,
        le=TOKENS_MAX,
        description="How far below the auto-compact threshold the error state starts, "
        "in tokens (0: at the threshold).",
    )
    blocking_margin: int = Field(
        default=3_000,
        ge=0,
        le=TOKENS_MAX,
        description="How far below the effective window sending is refused, in tokens.",
    )


class KeepWindowSettings(WireModel):
    min_tokens: int = Field(
        default=10_000,
        ge=0,
        le=TOKENS_MAX,
        description="`all` keeps at least this many recent tokens verbatim.",
    )
    min_text_messages: int = Field(
        default=5, ge=0, description="`all` keeps at least this many recent messages with text."
    )
    max_tokens: int = Field(
        default=40_000,
        ge=0,
        le=TOKENS_MAX,
        description="`all` stops widening the kept window at this size.",
    )


class RestoreSettings(WireModel):
    max_files: int = Field(
        default=5, ge=0, description="Editor files restored after a compaction, at most."
    )
    max_tokens_per_file: int = Field(
        default=5_000,
        ge=0,
        le=RESTORE_TOKENS_MAX,
        description="Each restored file is cut to this many tokens.",
    )
    total_tokens: int = Field(
        default=50_000,
        ge=0,
        le=RESTORE_TOKENS_MAX,
        description="All restored files together, at most this many tokens.",
    )
    exclude: list[str] = Field(
        default_factory=lambda: list(DEFAULT_EXCLUDES),
        description="Glob patterns of files never restored (credentials by default).",
    )


class MicrocompactSettings(WireModel):
    gap_minutes: int = Field(
        default=60,
        ge=0,
        le=GAP_MINUTES_MAX,
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
        le=TOKENS_MAX,
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
