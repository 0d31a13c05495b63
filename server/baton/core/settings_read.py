"""A client's settings read onto the model key by key: each bad value warned of once and
set to its default, the rest kept."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, get_args

from pydantic import ValidationError

from baton.core.conversation.wire_model import WireModel
from baton.core.settings import DEFAULTS, Settings


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
            _refuse_unfit(fields[name].annotation, value)
            checked = Settings.model_validate({**result.model_dump(), name: value})
        except (ValidationError, ValueError) as exc:
            if warn:
                why = _reason(exc)
                warn(f"baton.{key}: invalid value {_quoted(value)} ({why}); using the default")
            setattr(result, name, getattr(DEFAULTS, name))
            continue
        setattr(result, name, getattr(checked, name))
    return result


def _merge_nested(
    current: WireModel, raw: Mapping[str, Any], prefix: str, warn: Callable[[str], None] | None
) -> WireModel:
    """`current` with the keys of `raw` applied one by one: a group within the group (the
    tools' permissions) is merged key by key too, so one bad key never resets its siblings."""
    model_cls = type(current)
    fields = model_cls.model_fields
    values = {name: getattr(current, name) for name in fields}
    by_alias = {(info.alias or name): name for name, info in fields.items()}
    for key, value in raw.items():
        name = by_alias.get(key, key if key in fields else None)
        if name is None:
            continue
        inner = values[name]
        if isinstance(inner, WireModel) and isinstance(value, Mapping):
            values[name] = _merge_nested(inner, value, f"{prefix}.{key}", warn)
            continue
        try:
            _refuse_unfit(fields[name].annotation, value)
            checked = model_cls.model_validate({**values, name: value})
        except (ValidationError, ValueError) as exc:
            if warn:
                warn(
                    f"baton.{prefix}.{key}: invalid value {_quoted(value)} ({_reason(exc)}); "
                    "using the default"
                )
            values[name] = getattr(model_cls(), name)
            continue
        values[name] = getattr(checked, name)
    return model_cls.model_validate(values)


def _refuse_unfit(annotation: Any, value: Any) -> None:
    """ValueError for what pydantic would take but means something else: `true` for a
    number (it would read as 1), a word or number for a switch (pydantic reads "no", "off"
    and 0 as false, but "nope" is refused: a switch takes true or false alone), and text no
    transcript or request can hold (a lone surrogate, which then fails every create or
    compaction that carries it)."""
    kinds = get_args(annotation) or (annotation,)
    if isinstance(value, bool) and bool not in kinds and (int in kinds or float in kinds):
        raise ValueError("a number, not true or false")
    if kinds == (bool,) and not isinstance(value, bool):
        raise ValueError("a switch takes true or false")
    texts = value if isinstance(value, list) else [value]
    for text in texts:
        if isinstance(text, str):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("text with a lone surrogate") from None


QUOTED_CHARS = 80  # of a bad value in its warning, and twice that of the reason: cut


def _quoted(value: Any) -> str:
    return _cut(repr(value), QUOTED_CHARS)


def _reason(exc: ValidationError | ValueError) -> str:
    if isinstance(exc, ValidationError):
        error = next(iter(exc.errors()), None)
        text = str(error["msg"]) if error else "invalid"
        if error and error["type"] == "value_error":  # the check's words, not "Value error, ..."
            text = str(error.get("ctx", {}).get("error", text))
    else:
        text = str(exc)  # it may quote the value
    return _cut(text, 2 * QUOTED_CHARS)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
