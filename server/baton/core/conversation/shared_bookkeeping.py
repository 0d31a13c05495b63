"""pydantic's per-instance bookkeeping shared between stored models of the same shape.

pydantic keeps, per instance, the set of the names of the fields it was given
(`model_fields_set`) and, for a model with extra fields, a dict of them. A million-token
session holds ~11,000 messages, usages and blocks: ~4.4 MB of such sets in a few dozen
distinct shapes, and ~6,000 empty extras dicts. `share` gives a model that was just
validated the one set of its shape and one empty extras dict for all. pydantic's copies
(`model_copy`, `copy`, `deepcopy`) copy them; an assignment that would add to a shared set
or dict first gives the instance its own copy (`Shared.__setattr__`), so a change to one
instance never reaches another, and every instance reads as it would without the sharing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

_NO_EXTRAS: dict[str, Any] = {}  # shared, never written to
_SHAPES: dict[frozenset[str], set[str]] = {}  # the shared fields set of each shape
MAX_SHAPES = 4096  # extra fields come from files: past this many shapes, nothing new is shared


class Shared(BaseModel):
    """A model whose bookkeeping `share` may share with others of its shape."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self.__pydantic_fields_set__:
            object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        if self.__pydantic_extra__ is _NO_EXTRAS and name not in type(self).__pydantic_fields__:
            object.__setattr__(self, "__pydantic_extra__", {})
        super().__setattr__(name, value)


def share(models: Iterable[Shared | None]) -> None:
    """Let `models` (just validated, seen by nothing else yet) use the shared bookkeeping."""
    shapes, set_ = _SHAPES, object.__setattr__
    for model in models:
        if model is None:
            continue
        names = model.__pydantic_fields_set__
        key = frozenset(names)
        shared = shapes.get(key)
        if shared is None and len(shapes) < MAX_SHAPES:
            shared = shapes[key] = set(names)
        if shared is not None:
            set_(model, "__pydantic_fields_set__", shared)
        if model.__pydantic_extra__ == {}:
            set_(model, "__pydantic_extra__", _NO_EXTRAS)
