"""The server settings as flat `baton.<dotted.name>` properties, and the package.json merge.

VS Code's `contributes.configuration` wants one property per leaf setting with its type,
default, enum, bounds and description; the same map is the schema's `settings.properties`.
The merge replaces only those properties and keeps everything else in package.json.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Literal

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from baton import __version__
from baton.core.settings import Settings

Json = dict[str, Any]
SECTION = "baton"
_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _type_of(annotation: Any) -> tuple[list[str], Json]:
    """(JSON types, extra keywords: enum, items) of a leaf setting's annotation."""
    if annotation is None or annotation is types.NoneType:
        return ["null"], {}
    if annotation in _JSON_TYPES:
        return [_JSON_TYPES[annotation]], {}
    origin = typing.get_origin(annotation)
    if origin is Literal:
        values = list(typing.get_args(annotation))
        return ["string"], {"enum": values}
    if origin is list:
        (item,) = typing.get_args(annotation)
        item_types, item_extra = _type_of(item)
        return ["array"], {"items": {"type": item_types[0], **item_extra}}
    if origin in (typing.Union, types.UnionType):
        kinds: list[str] = []
        extra: Json = {}
        for arg in typing.get_args(annotation):
            arg_types, arg_extra = _type_of(arg)
            kinds.extend(t for t in arg_types if t not in kinds)
            extra.update(arg_extra)
        return kinds, extra
    alias = getattr(annotation, "__value__", None)  # a `type X = ...` alias
    if alias is not None:
        return _type_of(alias)
    raise TypeError(f"no JSON type for setting annotation {annotation!r}")


def _bounds(info: FieldInfo, kinds: list[str]) -> Json:
    out: Json = {}
    for meta in info.metadata:
        if isinstance(meta, Ge):
            out["minimum"] = meta.ge
        elif isinstance(meta, Gt):
            if "integer" in kinds and isinstance(meta.gt, int):
                out["minimum"] = meta.gt + 1
            else:
                out["exclusiveMinimum"] = meta.gt
        elif isinstance(meta, Le):
            out["maximum"] = meta.le
        elif isinstance(meta, Lt):
            out["exclusiveMaximum"] = meta.lt
    return out


def _leaves(model: type[BaseModel], instance: BaseModel, prefix: str) -> Json:
    out: Json = {}
    for name, info in model.model_fields.items():
        key = f"{prefix}.{info.alias or name}"
        value = getattr(instance, name)
        if isinstance(value, BaseModel):
            out.update(_leaves(type(value), value, key))
            continue
        if not info.description:
            raise ValueError(f"setting {key} has no description: add Field(description=...)")
        kinds, extra = _type_of(info.annotation)
        prop: Json = {"type": kinds[0] if len(kinds) == 1 else kinds}
        prop.update(extra)
        prop["default"] = value
        prop.update(_bounds(info, kinds))
        if isinstance(info.json_schema_extra, dict):  # what the field's checks take, in JSON
            prop.update(info.json_schema_extra)
        prop["description"] = info.description
        out[key] = prop
    return out


def settings_properties() -> Json:
    """Every server setting as `baton.<dotted.name>` -> its VS Code property schema."""
    return _leaves(Settings, Settings(), SECTION)


MINIMAL_MANIFEST: Json = {
    "name": "baton",
    "publisher": "baton",
    "version": "0.1.0",
    "engines": {"vscode": "^1.95.0"},
    "contributes": {"configuration": {"title": "Baton", "properties": {}}},
}


def merged_manifest(current: str | None) -> str:
    """package.json with its server-derived settings and its version (Baton's, so that the
    extension and `baton --version` agree) rebuilt; the rest kept as it was."""
    manifest: Json = json.loads(current) if current else json.loads(json.dumps(MINIMAL_MANIFEST))
    manifest["version"] = __version__
    contributes = manifest.setdefault("contributes", {})
    configuration = contributes.setdefault("configuration", {"title": "Baton"})
    if isinstance(configuration, list):  # VS Code allows an array of categories
        configuration = next((c for c in configuration if "properties" in c), configuration[0])
    derived = settings_properties()
    existing: Json = configuration.get("properties", {})
    kept = {k: v for k, v in existing.items() if k not in derived}
    configuration["properties"] = {**kept, **derived}
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
