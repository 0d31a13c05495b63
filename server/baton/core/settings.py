"""Baton's settings: one model with defaults; a bad value warns once and keeps the default."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import Field, ValidationError

from baton.core.messages import WireModel

DEFAULT_MODEL = "claude-sonnet-5-5"
# Files that hold credentials, never restored into the model's view (matched against the
# path relative to its workspace folder and against the file name, ignoring case).
DEFAULT_EXCLUDES = [
    ".env*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
    "credentials.json",
    "**/.aws/credentials",
    "**/.ssh/**",
    "**/.gnupg/**",
    "**/.docker/config.json",
    "**/.kube/config",
    "**/secrets/**",
]
DEFAULT_MICROCOMPACT_TOOLS = [
    "Read",
    "Bash",
    "Grep",
    "Glob",
    "WebFetch",
    "WebSearch",
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "read_file",
    "bash",
    "shell",
    "grep",
    "glob",
    "web_fetch",
    "web_search",
    "edit",
    "write",
]


class AutoCompactSettings(WireModel):
    enabled: bool = True
    threshold_percent: float | None = Field(default=None, ge=1, le=100)


class KeepWindowSettings(WireModel):
    min_tokens: int = Field(default=10_000, ge=0)
    min_text_messages: int = Field(default=5, ge=0)
    max_tokens: int = Field(default=40_000, ge=0)


class RestoreSettings(WireModel):
    max_files: int = Field(default=5, ge=0)
    max_tokens_per_file: int = Field(default=5_000, ge=0)
    total_tokens: int = Field(default=50_000, ge=0)
    exclude: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDES))


class MicrocompactSettings(WireModel):
    gap_minutes: int = Field(default=60, ge=0)
    keep_recent: int = Field(default=5, ge=0)
    tools: list[str] = Field(default_factory=lambda: list(DEFAULT_MICROCOMPACT_TOOLS))


SummarizerName = Literal["auto", "anthropic", "extractive", "memory"]


class Settings(WireModel):
    data_dir: str | None = None
    model: str = DEFAULT_MODEL
    context_window: int | None = Field(default=None, gt=0)
    auto_compact: AutoCompactSettings = Field(default_factory=AutoCompactSettings)
    summarizer: SummarizerName = "auto"
    summary_model: str | None = None
    compact_instructions: str = ""
    keep_window: KeepWindowSettings = Field(default_factory=KeepWindowSettings)
    restore: RestoreSettings = Field(default_factory=RestoreSettings)
    microcompact: MicrocompactSettings = Field(default_factory=MicrocompactSettings)
    anthropic_base_url: str | None = None
    exact_counts: bool = False

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
