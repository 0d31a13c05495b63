"""The generated contract files match protocol.py, and the generator keeps what it must."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import Field, ValidationError

from baton import protocol
from baton.contract import __main__ as generator
from baton.contract.generate import schema, settings_block, shapes, typescript
from baton.core.conversation.wire_model import WireModel
from baton.core.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_every_generated_file_is_what_the_generator_writes() -> None:
    assert generator.stale(ROOT) == [], "run `python -m baton.contract` and commit the result"


def test_check_mode_reports_a_stale_file_and_writes_nothing(tmp_path: Path) -> None:
    for path in generator.outputs(ROOT):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text((ROOT / path).read_text(encoding="utf-8"), encoding="utf-8")
    assert generator.main(["--check", "--root", str(tmp_path)]) == 0
    ts = tmp_path / generator.TYPESCRIPT
    ts.write_text(ts.read_text(encoding="utf-8") + "// edited by hand\n", encoding="utf-8")
    assert generator.main(["--check", "--root", str(tmp_path)]) == 1
    assert ts.read_text(encoding="utf-8").endswith("// edited by hand\n")
    assert generator.main(["--root", str(tmp_path)]) == 0
    assert generator.stale(tmp_path) == []


def test_the_schema_names_every_field_the_server_sends() -> None:
    defs = schema.build()["$defs"]
    assert "readOnly" in defs["Session"]["required"]
    assert {"estimatorExact", "warnings"} <= set(defs["Usage"]["required"])
    assert {"model", "boundaryId", "stopReason"} <= set(defs["Message"]["properties"])
    assert "dryRun" in defs["CompactResult"]["required"]
    assert "title" in defs["ImportParams"]["properties"]
    for args in ("CompactCommandArgs", "PivotCommandArgs", "RangeCommandArgs"):
        assert "instructions" in defs[args]["properties"]
    for model in schema.sent_models():
        body = defs[schema.wire_name(model)]
        wire = {info.alias or name for name, info in model.model_fields.items()}
        assert set(body["properties"]) == wire, model.__name__
        assert body["additionalProperties"] is (model.model_config.get("extra") == "allow")


def test_a_field_left_out_when_null_is_optional_and_a_required_null_is_sent() -> None:
    message = schema.build()["$defs"]["Message"]
    assert "apiMessageId" not in message["required"]
    assert message["properties"]["apiMessageId"] == {"type": "string"}
    summary = schema.build()["$defs"]["CompactResult"]["properties"]["summary"]
    assert {"type": "null"} in summary["anyOf"]
    result = protocol.CompactResult(boundary_id="", direction="all", summary=None)
    assert result.wire()["summary"] is None
    assert "adjustedPivot" not in result.wire()


def test_the_tables_map_methods_to_models_in_the_schema() -> None:
    document = schema.build()
    assert list(document["requests"]) == list(protocol.REQUESTS)
    assert list(document["notifications"]) == list(protocol.NOTIFICATIONS)
    assert list(document["commands"]) == list(protocol.COMMANDS)
    assert list(document["errorCodes"]) == list(protocol.ERROR_CODES)
    assert document["requests"]["baton/session/create"]["result"] == {"$ref": "#/$defs/Session"}
    assert document["commands"]["baton.compactUpTo"]["arguments"] == [
        {"$ref": "#/$defs/PivotCommandArgs"}
    ]
    refs = re.findall(r'"#/\$defs/([A-Za-z]+)"', json.dumps(document))
    assert set(refs) <= set(document["$defs"])


def test_commands_take_pivot_message_id_and_still_accept_message_id() -> None:
    new = protocol.PivotCommandArgs.model_validate({"sessionId": "s", "pivotMessageId": "m1"})
    old = protocol.PivotCommandArgs.model_validate({"sessionId": "s", "messageId": "m1"})
    assert new.pivot_message_id == old.pivot_message_id == "m1"
    span = protocol.RangeCommandArgs.model_validate(
        {"sessionId": "s", "messageId": "m1", "endMessageId": "m2"}
    )
    assert span.pivot_message_id == "m1"
    with pytest.raises(ValidationError):
        protocol.PivotCommandArgs.model_validate({"sessionId": "s"})


def test_one_direction_type_serves_core_and_protocol() -> None:
    from baton.core.compaction import plan, prompts, result

    assert protocol.Direction is plan.Direction is prompts.Direction
    assert result.CompactRequest.__annotations__["direction"] == "Direction"
    assert protocol.DIRECTIONS == ("all", "up_to", "from", "range")


def test_typescript_has_the_constants_and_maps_the_extension_imports() -> None:
    text = (ROOT / generator.TYPESCRIPT).read_text(encoding="utf-8")
    assert 'export const SETTINGS_SECTION = "baton";' in text
    assert '  sessionCreate: "baton/session/create",' in text
    assert '  usage: "baton/usage",' in text
    assert '  sessionDelta: "baton/session/delta",' in text
    assert '  compactUpTo: "baton.compactUpTo",' in text
    assert '  sessionNotFound: "session_not_found",' in text
    assert '"baton.compact": { arguments: [CompactCommandArgs]; result: CompactResult };' in text
    for name in ("Session", "Message", "MessageInput", "ApiUsage", "Usage", "Breakdown"):
        assert re.search(rf"^export interface {name} {{$", text, re.M), name
    assert "export type ContentBlock = TextBlock | ImageBlock" in text
    assert not re.search(r"\bany\b", text.replace("// ", ""))
    for interface in ("RequestMap", "ServerNotificationMap", "ClientNotificationMap", "CommandMap"):
        assert f"export interface {interface} {{" in text


def test_camel_case_keys_come_from_the_wire_names() -> None:
    assert typescript.camel("baton/session/create") == "sessionCreate"
    assert typescript.camel("baton/usageChanged") == "usageChanged"
    assert typescript.camel("baton.previewCompact") == "previewCompact"
    assert typescript.camel("compaction_in_progress") == "compactionInProgress"


def test_the_manifest_merge_keeps_client_settings_and_everything_else() -> None:
    current = {
        "name": "baton",
        "main": "./dist/extension.js",
        "contributes": {
            "configuration": {
                "title": "Baton",
                "properties": {
                    "baton.server.command": {"type": "array", "default": []},
                    "baton.model": {"type": "string", "default": "stale"},
                },
            },
            "views": {"baton": []},
        },
    }
    merged = settings_block.merged_manifest(json.dumps(current))
    assert merged.endswith("}\n") and merged.startswith('{\n  "name": "baton",')
    out = json.loads(merged)
    assert out["main"] == "./dist/extension.js" and out["contributes"]["views"] == {"baton": []}
    props = out["contributes"]["configuration"]["properties"]
    assert props["baton.server.command"] == {"type": "array", "default": []}
    assert props["baton.model"]["default"] == Settings().model
    assert props["baton.autoCompact.thresholdPercent"]["maximum"] == 100
    summarizers = ["auto", "anthropic", "extractive", "memory", "server"]
    assert props["baton.summarizer"]["enum"] == summarizers
    assert props["baton.restore.exclude"]["items"] == {"type": "string"}


def test_a_missing_manifest_gets_a_minimal_one() -> None:
    out = json.loads(settings_block.merged_manifest(None))
    assert (out["name"], out["publisher"], out["engines"]) == (
        "baton",
        "baton",
        {"vscode": "^1.95.0"},
    )
    assert "baton.exactCounts" in out["contributes"]["configuration"]["properties"]


def test_every_setting_has_a_description_and_one_without_fails() -> None:
    assert all(p["description"] for p in settings_block.settings_properties().values())

    class Bad(WireModel):
        quiet: int = 1
        loud: int = Field(default=2, description="said")

    with pytest.raises(ValueError, match=r"baton\.quiet has no description"):
        settings_block._leaves(Bad, Bad(), "baton")


def test_the_protocol_doc_shapes_come_from_the_schema() -> None:
    document = (ROOT / generator.PROTOCOL_DOC).read_text(encoding="utf-8")
    assert shapes.listing(schema.build()) in document
    with pytest.raises(ValueError, match="markers"):
        shapes.replaced("# no markers here\n", schema.build())
