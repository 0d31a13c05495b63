"""docs/protocol.schema.json: the protocol tables as JSON Schema (draft 2020-12).

pydantic writes each model's schema; this module names the shared types (`ContentBlock`,
`Direction`, ...), and states what the server sends: a model the server sends has every
field it always sends required, a field it leaves out when null (the one null policy,
`WireModel.wire`) optional and never null, and no field beyond those it names.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import models_json_schema

from baton import protocol as p
from baton.contract.generate.settings_block import settings_properties
from baton.core.conversation.boundary import BoundaryDirection, Direction, Trigger
from baton.core.conversation.messages import ContentBlock, Kind, Role
from baton.core.settings import Settings, SummarizerName
from baton.core.usage.budget import UsageState

Json = dict[str, Any]
DRAFT = "https://json-schema.org/draft/2020-12/schema"
REF = "#/$defs/{model}"
NAMED_TYPES: dict[str, Any] = {
    "Direction": Direction,
    "BoundaryDirection": BoundaryDirection,
    "Trigger": Trigger,
    "UsageState": UsageState,
    "Role": Role,
    "Kind": Kind,
    "ChangeReason": p.ChangeReason,
    "SummarizerName": SummarizerName,
}


BLOCKS: tuple[type[BaseModel], ...] = typing.get_args(typing.get_args(ContentBlock)[0])


def ref(name: str) -> Json:
    return {"$ref": REF.format(model=name)}


def wire_name(model: type[BaseModel]) -> str:
    return p.WIRE_NAMES.get(model, model.__name__)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(_models_in(arg))
    return found


def reachable(roots: list[type[BaseModel]]) -> list[type[BaseModel]]:
    """Every model the roots name, roots first, each once."""
    seen: list[type[BaseModel]] = []
    todo = list(roots)
    while todo:
        model = todo.pop(0)
        if model in seen:
            continue
        seen.append(model)
        for info in model.model_fields.values():
            todo.extend(_models_in(info.annotation))
    return seen


def sent_models() -> list[type[BaseModel]]:
    roots = [r.result for r in p.REQUEST_TABLE] + [c.result for c in p.COMMAND_TABLE]
    roots += [n.params for n in p.NOTIFICATION_TABLE if n.sender == "server"]
    roots += [r.params for r in p.SERVER_REQUEST_TABLE]
    return reachable(roots)


def received_models() -> list[type[BaseModel]]:
    roots = [r.params for r in p.REQUEST_TABLE] + [c.argument for c in p.COMMAND_TABLE]
    roots += [n.params for n in p.NOTIFICATION_TABLE if n.sender == "client"]
    roots += [r.result for r in p.SERVER_REQUEST_TABLE]
    return reachable(roots)


def _admits_none(annotation: Any) -> bool:
    if annotation is None or annotation is types.NoneType:
        return True
    return any(_admits_none(arg) for arg in typing.get_args(annotation))


def _strip(schema: Any) -> Any:
    """Drop pydantic's generated titles (`Sessionid`), recursively."""
    if isinstance(schema, dict):
        return {
            k: _strip(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_strip(v) for v in schema]
    return schema


def _without_null(schema: Json) -> Json:
    options = [o for o in schema.get("anyOf", []) if o != {"type": "null"}]
    rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
    if not options:
        return rest
    return {**options[0], **rest} if len(options) == 1 else {"anyOf": options, **rest}


def _as_sent(model: type[BaseModel], schema: Json, received: bool) -> Json:
    """What the server sends of `model`: required unless left out as null; nothing else."""
    props: Json = schema.get("properties", {})
    required: list[str] = []
    for name, info in model.model_fields.items():
        key = info.serialization_alias or info.alias or name
        optional = not info.is_required() and _admits_none(info.annotation)
        if optional and not received:
            props[key] = _without_null(props[key])
        if not optional:
            required.append(key)
    if not received:
        schema["required"] = required
    elif model in BLOCKS:  # a client sends it too; only the discriminator is always there
        wanted = {*schema.get("required", []), "type"}
        schema["required"] = [k for k in props if k in wanted]
    if model.model_config.get("extra") != "allow":
        schema["additionalProperties"] = False
    if not schema.get("required"):
        schema.pop("required", None)
    return schema


def _named(schema: Any, named: dict[str, Json]) -> Any:
    """Replace inline copies of a named type by a `$ref` to it."""
    if isinstance(schema, list):
        return [_named(v, named) for v in schema]
    if not isinstance(schema, dict):
        return schema
    schema = {k: _named(v, named) for k, v in schema.items()}
    core = {k: v for k, v in schema.items() if k not in ("default", "description")}
    for name, body in named.items():
        if core == body:
            return {**ref(name), **{k: v for k, v in schema.items() if k not in core}}
    return schema


def _defaults(model: type[BaseModel], schema: Json) -> None:
    """Every setting's default in its schema (pydantic leaves out factory defaults)."""
    instance = model()
    for name, info in model.model_fields.items():
        key = info.alias or name
        value = getattr(instance, name)
        if not isinstance(value, BaseModel):
            schema["properties"][key]["default"] = value


def definitions() -> Json:
    sent, received = sent_models(), received_models()
    settings = reachable([Settings])
    models = reachable([*sent, *received, *settings])
    _, generated = models_json_schema([(m, "validation") for m in models], ref_template=REF)
    defs: Json = _strip(generated["$defs"])
    names = {m.__name__: wire_name(m) for m in models}
    if len(set(names.values())) != len(names) or set(defs) != set(names):
        raise RuntimeError(f"model names collide or are missing: {sorted(defs)}")
    for model in models:
        schema = defs[model.__name__]
        if model in settings:
            _defaults(model, schema)
        if model in sent:
            _as_sent(model, schema, received=model in received)
        elif model in BLOCKS:
            _as_sent(model, schema, received=True)
    named: Json = {}
    for name, alias in NAMED_TYPES.items():  # earlier names appear in later ones
        named[name] = _named(_strip(TypeAdapter(alias).json_schema()), named)
    blocks = _strip(TypeAdapter(ContentBlock).json_schema(ref_template=REF))
    blocks.pop("$defs", None)
    named["ContentBlock"] = blocks
    out = {wire_name_of(names, k): _named(v, named) for k, v in defs.items()}
    out.update(named)
    renamed: Json = _renamed(dict(sorted(out.items())), names)
    return renamed


def wire_name_of(names: dict[str, str], name: str) -> str:
    return names.get(name, name)


def _renamed(schema: Any, names: dict[str, str]) -> Any:
    if isinstance(schema, list):
        return [_renamed(v, names) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _renamed(v, names) for k, v in schema.items()}
    target = out.get("$ref")
    if isinstance(target, str) and target.startswith("#/$defs/"):
        out["$ref"] = REF.format(model=wire_name_of(names, target.removeprefix("#/$defs/")))
    mapping = out.get("mapping")
    if isinstance(mapping, dict):
        out["mapping"] = {k: _renamed({"$ref": v}, names)["$ref"] for k, v in mapping.items()}
    return out


def build() -> Json:
    """The whole document, deterministic (the generator's test compares it byte for byte)."""
    return {
        "$schema": DRAFT,
        "title": "Baton wire contract",
        "description": "Generated by `python -m baton.contract` from server/baton/protocol.py; "
        "do not edit. docs/PROTOCOL.md says what each method does.",
        "contractVersion": p.CONTRACT_VERSION,
        "requests": {
            r.method: {"params": ref(wire_name(r.params)), "result": ref(wire_name(r.result))}
            for r in p.REQUEST_TABLE
        },
        "serverRequests": {
            r.method: {"params": ref(wire_name(r.params)), "result": ref(wire_name(r.result))}
            for r in p.SERVER_REQUEST_TABLE
        },
        "notifications": {
            n.method: {"params": ref(wire_name(n.params)), "sender": n.sender}
            for n in p.NOTIFICATION_TABLE
        },
        "commands": {
            c.name: {"arguments": [ref(wire_name(c.argument))], "result": ref(wire_name(c.result))}
            for c in p.COMMAND_TABLE
        },
        "errorCodes": {
            e.code: {"rpcCode": e.rpc_code, "description": e.meaning} for e in p.ERROR_TABLE
        },
        "settings": {
            "section": p.SETTINGS_SECTION,
            "model": ref("Settings"),
            "properties": settings_properties(),
        },
        "$defs": definitions(),
    }
