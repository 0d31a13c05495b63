"""lsprotocol's attrs-generated methods: each class's copy of the module's globals trimmed to
the names its methods read.

attrs compiles each class's `__init__`, `__repr__`, `__eq__`... from source, with globals
that are a copy of the class's module namespace taken when the class was made (so that
`typing.get_type_hints(cls.__init__)` resolves names). lsprotocol.types makes ~550 such
classes, each copy a dict of up to ~700 names: ~5.5 MB that no lookup reads beyond a
dozen names per class. `trim` keeps, in each copy, the names its functions' code reads,
the dunder names, and the names the forward references of their annotations lead to, so
every method runs and `get_type_hints(cls.__init__)` answers as before.
"""

from __future__ import annotations

import gc
import sys
import types
import typing
from typing import Any

MODULE = "lsprotocol.types"


def trim(module_name: str = MODULE) -> int:
    """Trim the generated methods' globals of `module_name`'s classes; how many copies were
    trimmed (0 when the module is not imported, or when objects are frozen out of the
    collector's lists, where a function sharing a copy could go unseen)."""
    module = sys.modules.get(module_name)
    if module is None or gc.get_freeze_count():
        return 0
    namespace = vars(module)
    copies: dict[int, tuple[dict[str, Any], list[types.FunctionType]]] = {}
    # every function whose globals are a copy, not only those the classes hold
    for obj in gc.get_objects():
        if type(obj) is types.FunctionType:
            found = obj.__globals__
            if found is not namespace and found.get("__name__") == module_name:
                copies.setdefault(id(found), (found, []))[1].append(obj)
    dunders = {name for name in namespace if name.startswith("__") and name.endswith("__")}
    for copy, functions in copies.values():
        read = set(dunders)
        for function in functions:
            read |= code_names(function.__code__)
            read |= forward_names(function, copy)
        kept = {name: copy[name] for name in read if name in copy}
        copy.clear()  # a dict never shrinks its table on deletion: cleared, it holds a new one
        copy.update(kept)
    return len(copies)


def code_names(code: types.CodeType) -> set[str]:
    """The global (and attribute) names a code object and the code nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return names


def forward_names(function: types.FunctionType, namespace: dict[str, Any]) -> set[str]:
    """The names `typing.get_type_hints(function)` may look up in `namespace`: those of the
    string annotations, at any depth, and of those in what they name (an alias such as
    `Union["A", "B"]` names more)."""
    names: set[str] = set()
    pending: list[Any] = list(function.__annotations__.values())
    while pending:
        hint = pending.pop()
        text = hint if isinstance(hint, str) else getattr(hint, "__forward_arg__", None)
        if isinstance(text, str):
            try:
                found = code_names(compile(text, "<annotation>", "eval"))
            except SyntaxError:
                found = set()
            for name in found - names:
                names.add(name)
                if name in namespace:
                    pending.append(namespace[name])
        pending.extend(typing.get_args(hint))
    return names
