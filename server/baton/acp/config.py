"""Session config options: the session's model, thinking, and the auto-compact threshold.

The model is the session's own (`set_model`); thinking and the threshold are settings of
the agent process, so they apply to every session it serves."""

from __future__ import annotations

from typing import Any

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from baton.acp.errors import invalid
from baton.core.models.windows import MODELS
from baton.core.service.service import BatonService

MODEL, THINKING, AUTO_COMPACT = "model", "thinking", "auto_compact"
PROCESS_WIDE = frozenset({THINKING, AUTO_COMPACT})  # the others are the session's own
DEFAULT = "default"
THINKING_VALUES = (DEFAULT, "off", "adaptive", "4096", "16384", "32768")
THRESHOLDS = (DEFAULT, "off", "50", "60", "70", "80", "90", "95")


def _choices(
    values: list[str], labels: dict[str, str] | None = None
) -> list[SessionConfigSelectOption]:
    names = labels or {}
    return [SessionConfigSelectOption(value=v, name=names.get(v, v)) for v in values]


def _current_thinking(service: BatonService) -> str:
    value = service.settings.thinking
    return DEFAULT if value is None else str(value)


def _current_threshold(service: BatonService) -> str:
    auto = service.settings.auto_compact
    if not auto.enabled:
        return "off"
    if auto.threshold_percent is None:
        return DEFAULT
    return f"{auto.threshold_percent:g}"


def _with(values: tuple[str, ...], current: str) -> list[str]:
    return list(values) if current in values else [*values, current]


def _models(service: BatonService, session_id: str) -> tuple[str, list[str]]:
    """The session's model and the models offered: it, the settings' one, the known ones."""
    model = service.session(session_id).model or service.settings.model
    return model, list(dict.fromkeys([model, service.settings.model, *MODELS]))


def config_options(service: BatonService, session_id: str) -> list[SessionConfigOptionSelect]:
    model, models = _models(service, session_id)
    thinking = _current_thinking(service)
    threshold = _current_threshold(service)
    return [
        SessionConfigOptionSelect(
            id=MODEL,
            name="Model",
            category="model",
            type="select",
            current_value=model,
            options=_choices(models),
        ),
        SessionConfigOptionSelect(
            id=THINKING,
            name="Thinking",
            description="Off, adaptive, or a budget of thinking tokens (every session)",
            category="thought_level",
            type="select",
            current_value=thinking,
            options=_choices(_with(THINKING_VALUES, thinking), {DEFAULT: "Model default"}),
        ),
        SessionConfigOptionSelect(
            id=AUTO_COMPACT,
            name="Auto-compact at",
            description="Percent of the effective window (every session)",
            type="select",
            current_value=threshold,
            options=_choices(
                _with(THRESHOLDS, threshold),
                {DEFAULT: "Window minus margin", "off": "Never (off)"}
                | {v: f"{v}%" for v in THRESHOLDS[2:]},
            ),
        ),
    ]


def apply(service: BatonService, session_id: str, config_id: str, value: str | bool) -> str | None:
    """Set one option; an unknown option or value is `invalid_params` and changes nothing.
    A model switch answers its warning (over the new model's limit, or past its auto-compact
    point), else None."""
    if not isinstance(value, str):
        raise invalid(f"{config_id} takes one of its listed values")
    if config_id == MODEL:
        _, models = _models(service, session_id)
        if value not in models:  # a select's values are the ones it lists
            raise invalid(f"model takes one of {', '.join(models)}")
        return service.set_model(session_id, value)[2]
    raw: dict[str, Any]
    # the values each lists: the usual ones, and the current one the settings gave
    if config_id == THINKING:
        listed = _with(THINKING_VALUES, _current_thinking(service))
        if value not in listed:
            raise invalid(f"thinking takes one of {', '.join(listed)}")
        raw = {"thinking": None if value == DEFAULT else (int(value) if value.isdigit() else value)}
    elif config_id == AUTO_COMPACT:
        listed = _with(THRESHOLDS, _current_threshold(service))
        if value not in listed:
            raise invalid(f"auto_compact takes one of {', '.join(listed)}")
        if value == "off":
            raw = {"autoCompact": {"enabled": False}}
        else:
            percent = None if value == DEFAULT else float(value)
            raw = {"autoCompact": {"enabled": True, "thresholdPercent": percent}}
    else:
        raise invalid(f"unknown config option {config_id!r}")
    service.session(session_id)  # an unknown session fails before anything is set
    service.configure(raw)
    return None
