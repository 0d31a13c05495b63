"""The models an import makes of each record, made at the least cost that gives the very
model pydantic's own calls give: a message from values the converter checked, a usage by
the model's validator.

A message is made for most records of a Claude Code file (57,154 of the bench's 98,948),
from values that are of their field's type already: the id, the time, the API message id,
the model and the stop reason as strings (or None), the role, a usage and content blocks
that are models validated before. Its validation could change nothing, yet it cost more
than the rest of the making: it checks every block again, 0.7 us each. `message` makes it
as `model_construct` does (the declared defaults, then the fields given, as the fields
set), without that call's generic work either, its dict sharing its keys with the other
messages' from the start (`keyed_fields`) and its fields set the one its shape's messages
share (`shared_set`): the session keeps them so, and a dict and a set made of pydantic's
kind would be swapped for such ones as it is written (`share_bookkeeping`).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from baton.core.conversation.messages import ApiUsage, ContentBlock, Message, Role
from baton.core.conversation.shared_bookkeeping import (
    SET_DICT,
    SET_EXTRA,
    SET_FIELDS_SET,
    SET_PRIVATE,
    keyed_fields,
    share,
    share_keys,
    shared_set,
)

# each field's default, in the order the fields are declared (pydantic's own order for an
# instance's dict), in a key-sharing dict; the fields with a default factory (the id, the
# time) are always given
_DEFAULTS = keyed_fields(Message, {name: f.default for name, f in Message.model_fields.items()})
_NEW = Message.__new__  # its slots set as object.__setattr__ sets them, at a third of the cost
# the fields sets `share` gives, by the fields given besides the four always given: a
# message made with one needs no `share` as it is written (nor its usage: `usage`)
_GIVEN = ("id", "role", "content", "created_at")
_GIVEN_ONLY = shared_set(set(_GIVEN))
_GIVEN_WITH: dict[tuple[str, ...], set[str]] = {}


def message(
    *, id: str, role: Role, content: list[ContentBlock], created_at: str, **rest: Any
) -> Message:
    """Message(id=..., role=..., content=..., created_at=..., **rest) for values of their
    fields' types (`content`'s blocks validated models, `rest` among the API message id,
    usage, model and stop reason): the same fields, fields set and content list (a list of
    its own) the validator makes, without the validation; its dict shares its keys and its
    fields set is the one of its shape, as `share_bookkeeping` leaves a loaded message's
    (the import shares only its blocks' as it writes it)."""
    values = _DEFAULTS.copy()
    values["id"], values["role"], values["created_at"] = id, role, created_at
    values["content"] = list(content)
    given = _GIVEN_ONLY
    if rest:
        values.update(rest)
        shape = tuple(rest)  # the converter gives the same fields in the same order
        known = _GIVEN_WITH.get(shape)
        if known is None:
            names = {*_GIVEN, *rest}
            known = shared_set(names)
            if known is not names and len(_GIVEN_WITH) < _KNOWN_SHAPES:
                _GIVEN_WITH[shape] = known  # (a set of its own is not kept for others)
        given = known
    made = _NEW(Message)
    SET_DICT(made, values)
    SET_FIELDS_SET(made, given)
    SET_EXTRA(made, None)
    SET_PRIVATE(made, None)
    return made


# the validator itself: model_validate's Python wrapper costs more than the validation
_USAGE = ApiUsage.__pydantic_validator__.validate_python
_USAGE_FIELDS = tuple(ApiUsage.model_fields)
_USAGE_SETS: dict[tuple[str, ...], set[str]] = {}  # as `_GIVEN_WITH`
_KNOWN_SHAPES = 64
_ALL_FOUR = shared_set(set(_USAGE_FIELDS))
_USAGE_DEFAULTS = keyed_fields(ApiUsage, {n: f.default for n, f in ApiUsage.model_fields.items()})
_NEW_USAGE = ApiUsage.__new__


def usage(raw: Any) -> ApiUsage | None:
    """A record's usage, of the four fields that are whole numbers; None when it is no
    object or one of them is negative. Its dict shares its keys, as a message's does, and
    its fields set is the one of its shape (`message`). Made as the validator makes it
    when each field given is an int of at least 0, which the validator takes as it is
    (nearly every usage: 1.2 us, against 1.7 for the validator's and the copy of its
    dict), all four told at once when all four are (each looked at in a loop, the
    interpreter took some 200 steps); else by the validator."""
    if not isinstance(raw, dict):
        return None
    get = raw.get
    made_in, made_out = get("input_tokens"), get("output_tokens")
    written, read = get("cache_creation_input_tokens"), get("cache_read_input_tokens")
    if (  # nearly every usage: all four, each an int (not a bool) of at least 0
        type(made_in) is int
        and type(made_out) is int
        and type(written) is int
        and type(read) is int
        and made_in >= 0
        and made_out >= 0
        and written >= 0
        and read >= 0
    ):
        values = _USAGE_DEFAULTS.copy()
        values["input_tokens"], values["output_tokens"] = made_in, made_out
        values["cache_creation_input_tokens"], values["cache_read_input_tokens"] = written, read
        return _usage_made(values, _ALL_FOUR)
    given = {}  # a loop: a comprehension over the four fields costs more
    plain = True
    for name in _USAGE_FIELDS:
        value = raw.get(name)
        if isinstance(value, int):
            given[name] = value
            if type(value) is not int or value < 0:  # True (read as 1), or refused
                plain = False
    if not plain:
        try:
            made: ApiUsage = _USAGE(given)
        except ValidationError:
            return None
        share_keys(made)
        share((made,))
        return made
    values = _USAGE_DEFAULTS.copy()
    values.update(given)
    shape = tuple(given)
    names = _USAGE_SETS.get(shape)
    if names is None:
        own = set(given)
        names = shared_set(own)
        if names is not own and len(_USAGE_SETS) < _KNOWN_SHAPES:
            _USAGE_SETS[shape] = names
    return _usage_made(values, names)


def _usage_made(values: dict[str, Any], names: set[str]) -> ApiUsage:
    made = _NEW_USAGE(ApiUsage)
    SET_DICT(made, values)
    SET_FIELDS_SET(made, names)
    SET_EXTRA(made, None)
    SET_PRIVATE(made, None)
    return made
