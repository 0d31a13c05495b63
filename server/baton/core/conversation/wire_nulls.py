"""The wire's null policy: which None fields a model dumped without nulls still sends."""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel


def restore_required_nulls(model: BaseModel, out: dict[str, Any]) -> None:
    """Put back into `out` (the model dumped with exclude_none) the nulls it must keep."""
    for name, key, required in _null_plan(type(model)):
        value = getattr(model, name)
        if value is None:
            if required:
                out[key] = None
        elif isinstance(value, BaseModel) and isinstance(out.get(key), dict):
            restore_required_nulls(value, out[key])
        elif isinstance(value, list) and isinstance(out.get(key), list):
            for item, dumped in zip(value, out[key], strict=False):
                if isinstance(item, BaseModel) and isinstance(dumped, dict):
                    restore_required_nulls(item, dumped)


def keeps_no_null(cls: type[BaseModel]) -> bool:
    """Whether `cls` dumped with exclude_none is its wire form as it is (no null to put back)."""
    return not _null_plan(cls)


_PLANS: dict[type[BaseModel], tuple[tuple[str, str, bool], ...]] = {}


def _null_plan(cls: type[BaseModel]) -> tuple[tuple[str, str, bool], ...]:
    """The fields of `cls` the null policy must visit, worked out once per class: required
    fields that may be None, and fields whose type holds a model with such fields. Most
    models (messages, blocks) have none, so their wire form costs one model_dump."""
    plan = _PLANS.get(cls)
    if plan is None:
        _PLANS[cls] = ()  # a model that holds itself: no deeper visit while it is worked out
        plan = tuple(
            (name, info.serialization_alias or info.alias or name, info.is_required())
            for name, info in cls.model_fields.items()
            if (info.is_required() and _admits_none(info.annotation))
            or any(_null_plan(inner) for inner in _models_in(info.annotation))
        )
        _PLANS[cls] = plan
    return plan


def _admits_none(annotation: Any) -> bool:
    """True when a value of this type may be None: None, Any, or a union (or an Annotated
    type) with such a member; a container's element types do not count."""
    if annotation is None or annotation is type(None) or annotation is Any:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _admits_none(get_args(annotation)[0])
    if origin is Union or origin is UnionType:
        return any(_admits_none(arg) for arg in get_args(annotation))
    return False


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _models_in(arg)]
