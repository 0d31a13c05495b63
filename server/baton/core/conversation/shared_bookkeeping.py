"""pydantic's per-instance bookkeeping shared between stored models of the same shape.

pydantic keeps, per instance, the set of the names of the fields it was given
(`model_fields_set`) and, for a model with extra fields, a dict of them. A million-token
session holds ~11,000 messages, usages and blocks: ~4.4 MB of such sets in a few dozen
distinct shapes, and ~6,000 empty extras dicts. `share` gives a model that was just
validated the one set of its shape and one empty extras dict for all, and its fields a dict
that shares its keys with the others' of its class and holds its values alone (`share_keys`:
a message's 1.7 -> 0.74 MB for that session's 3,722 messages; a block's or a usage's dict of
184 bytes is 88-104, 9 MB less for a session of 100,000 messages). pydantic's copies
(`model_copy`, `copy`, `deepcopy`) copy them; an assignment that would add to a shared set
or dict first gives the instance its own copy (`Shared.__setattr__`), so a change to one
instance never reaches another, and every instance reads as it would without the sharing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

_NO_EXTRAS: dict[str, Any] = {}  # shared, never written to
# the setters of pydantic's slots of an instance (of its `__dict__` too), which
# object.__setattr__ finds and calls: called themselves, they cost a third as much
SET_DICT = vars(BaseModel)["__dict__"].__set__
SET_FIELDS_SET = vars(BaseModel)["__pydantic_fields_set__"].__set__
SET_EXTRA = vars(BaseModel)["__pydantic_extra__"].__set__
SET_PRIVATE = vars(BaseModel)["__pydantic_private__"].__set__
_SHAPES: dict[frozenset[str], set[str]] = {}  # the shared fields set of each shape
MAX_SHAPES = 4096  # extra fields come from files: past this many shapes, nothing new is shared


class Shared(BaseModel):
    """A model whose bookkeeping `share` may share with others of its shape."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self.__pydantic_fields_set__:
            SET_FIELDS_SET(self, set(self.__pydantic_fields_set__))
        if self.__pydantic_extra__ is _NO_EXTRAS and name not in type(self).__pydantic_fields__:
            SET_EXTRA(self, {})
        super().__setattr__(name, value)


# Per model class, a dict of its instances' fields whose keys CPython shares among them
# (a key-sharing dict, as an instance's own attributes make: each copy holds its values
# alone), or None where that is no smaller than pydantic's dict. A model allowing extra
# fields keeps them in its extras dict, never in this one.
_KEYED: dict[type[BaseModel], dict[str, Any] | None] = {}
_UNSEEN: dict[str, Any] = {}
SPARE_KEYS = 32  # CPython's room for keys an instance adds to its class's shared ones is 30


def _keyed_like(cls: type[BaseModel], fields: dict[str, Any]) -> dict[str, Any] | None:
    # A class of its own holds the keys: no other object's attributes add to them. CPython
    # gives each copy room for the keys its class's instances may still add, one fewer for
    # each instance made (down to one): instances made after the keys, the copies are tight.
    holder = type(f"{cls.__name__}Fields", (), {})
    blank = holder()
    for name in fields:
        setattr(blank, name, None)
    for _ in range(SPARE_KEYS):
        holder()
    keyed: dict[str, Any] = blank.__dict__
    return keyed if sys.getsizeof(keyed.copy()) < sys.getsizeof(fields) else None


def share_keys(model: Shared | None) -> None:
    """pydantic gives each instance a dict of its fields with keys of its own (a Message's
    17 fields: 464 bytes, a TextBlock's 2: 184); the same fields in a copy of a key-sharing
    dict of its class's fields hold their values alone (208 and 88 bytes). Its instances'
    dicts hold every declared field, in the order declared (pydantic writes them so, and no
    other: extra fields go to the extras dict); one that holds other keys is left as it is."""
    if model is None:
        return
    cls = type(model)
    keyed = _KEYED.get(cls, _UNSEEN)
    fields = model.__dict__
    if keyed is _UNSEEN:
        keyed = _KEYED[cls] = _keyed_like(cls, fields)
    if keyed is None or len(fields) != len(keyed):
        return
    own = keyed.copy()
    own.update(fields)
    if len(own) == len(fields):  # the same keys
        SET_DICT(model, own)


def keyed_fields(cls: type[Shared], values: dict[str, Any]) -> dict[str, Any]:
    """`values`, every declared field of `cls` in the order declared, in a dict sharing its
    keys with the others' of the class as `share_keys` makes them (a plain copy where that
    is no smaller): a copy of it is an instance's dict that needs no `share_keys`."""
    keyed = _KEYED.get(cls, _UNSEEN)
    if keyed is _UNSEEN:
        keyed = _KEYED[cls] = _keyed_like(cls, values)
    if keyed is None or list(keyed) != list(values):
        return dict(values)
    own = keyed.copy()
    own.update(values)
    return own


def shared_set(names: set[str]) -> set[str]:
    """The one fields set of the shape of `names` that `share` gives a model of that shape
    (`names` itself once MAX_SHAPES shapes are known): a model made with it needs no `share`."""
    key = frozenset(names)
    shared = _SHAPES.get(key)
    if shared is None and len(_SHAPES) < MAX_SHAPES:
        shared = _SHAPES[key] = set(names)
    return names if shared is None else shared


def share(models: Iterable[Shared | None]) -> None:
    """Let `models` (just validated, seen by nothing else yet) use the shared bookkeeping."""
    shapes = _SHAPES
    for model in models:
        if model is None:
            continue
        names = model.__pydantic_fields_set__
        key = frozenset(names)
        shared = shapes.get(key)
        if shared is None and len(shapes) < MAX_SHAPES:
            shared = shapes[key] = set(names)
        if shared is not None:
            SET_FIELDS_SET(model, shared)
        if model.__pydantic_extra__ == {}:
            SET_EXTRA(model, _NO_EXTRAS)
