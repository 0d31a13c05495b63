"""pydantic's per-instance bookkeeping shared between stored models of the same shape.

pydantic keeps, per instance, the set of the names of the fields it was given
(`model_fields_set`) and, for a model with extra fields, a dict of them. A million-token
session holds ~11,000 messages, usages and blocks: ~4.4 MB of such sets in a few dozen
distinct shapes, and ~6,000 empty extras dicts. `share` gives a model that was just
validated the one set of its shape and one empty extras dict for all. pydantic's copies
(`model_copy`, `copy`, `deepcopy`) copy them; an assignment that would add to a shared set
or dict first gives the instance its own copy (`Shared.__setattr__`), so a change to one
instance never reaches another, and every instance reads as it would without the sharing.

The instance dict pydantic-core builds holds its own table of keys; `share` rebuilds it,
same keys in the same order, as the interpreter builds an instance's dict, one that shares
its keys with every other instance of the class (PEP 412): ~1.8 MB less for the same
session. Any later change to it is an ordinary dict change. Whether the interpreter shares
the keys is its own affair: a process that has made these classes' dicts in other ways
(the unit tests' process, for one) may be given ordinary dicts, as correct, not smaller.
"""

from __future__ import annotations

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


def share(model: Shared) -> None:
    """Let `model` (just validated, seen by nothing else yet) use the shared bookkeeping."""
    names = model.__pydantic_fields_set__
    key = frozenset(names)
    shared = _SHAPES.get(key)
    if shared is None and len(_SHAPES) < MAX_SHAPES:
        shared = _SHAPES[key] = set(names)
    if shared is not None:
        object.__setattr__(model, "__pydantic_fields_set__", shared)
    if model.__pydantic_extra__ == {}:
        object.__setattr__(model, "__pydantic_extra__", _NO_EXTRAS)
    values = model.__dict__
    object.__delattr__(model, "__dict__")
    for name, value in values.items():  # the instance's dict made anew, by the interpreter
        object.__setattr__(model, name, value)
