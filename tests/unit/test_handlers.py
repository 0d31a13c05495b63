"""The lsp layer dispatches from protocol.py's tables to top-level handlers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol.types import ErrorCodes, LSPErrorCodes
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException

from baton import protocol as p
from baton.core.errors import ApiError, InvalidParams
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.dispatch import routes as dispatch
from baton.lsp.dispatch.errors import field_problems, to_rpc_error
from baton.lsp.features import compaction, editor, sessions
from baton.lsp.features.common import Call
from baton.lsp.server import BatonServer, create_server


@pytest.fixture
def server(tmp_path: Path) -> BatonServer:
    return create_server(BatonService(Settings(data_dir=str(tmp_path))))


def _turns(n: int) -> list[p.MessageInput]:
    out = []
    for i in range(n):
        words = " ".join(f"w{i}x{j}" for j in range(50))
        out.append(p.MessageInput(role="user", content=f"question {i} {words}"))
        out.append(p.MessageInput(role="assistant", content=f"answer {i} {words}"))
    return out


async def test_a_handler_is_a_function_of_the_call_and_the_validated_params(
    server: BatonServer,
) -> None:
    call = Call(server)
    info = await sessions.create(call, p.CreateParams(title="plan"))
    assert isinstance(info, p.SessionInfo) and info.title == "plan"
    appended = await sessions.append(
        call, p.AppendParams(session_id=info.session_id, messages=_turns(3))
    )
    ids = appended.message_ids
    args = p.PivotCommandArgs.model_validate({"sessionId": info.session_id, "messageId": ids[1]})
    result = await compaction.compact_up_to(call, args)
    assert result.direction == "up_to" and result.summarized_message_ids == ids[:2]
    view = await sessions.get(call, p.PageParams(session_id=info.session_id))
    summary = view.messages[0]
    assert summary.kind == "summary" and summary.boundary_id == result.boundary_id
    assert "boundaryId" in summary.wire()
    undone = await compaction.uncompact(
        call, p.UncompactParams(session_id=info.session_id, boundary_id=summary.boundary_id)
    )
    assert isinstance(undone, p.UncompactResult)
    assert (await sessions.delete(call, p.SessionParams(session_id=info.session_id))).wire() == {}


@pytest.mark.parametrize(
    ("args", "direction", "dry_run", "expected"),
    [
        (
            p.CompactParams(session_id="s", pivot_message_id="m", dry_run=True),
            None,
            None,
            ("all", "m", None, None, True),
        ),
        (
            p.CompactCommandArgs(session_id="s", direction="range", instructions="keep x"),
            None,
            None,
            ("range", None, None, "keep x", False),
        ),
        (
            p.PivotCommandArgs(session_id="s", pivot_message_id="m"),
            "from",
            None,
            ("from", "m", None, None, False),
        ),
        (
            p.RangeCommandArgs(session_id="s", pivot_message_id="a", end_message_id="b"),
            "range",
            None,
            ("range", "a", "b", None, False),
        ),
        (p.PreviewCommandArgs(session_id="s"), None, True, ("all", None, None, None, True)),
    ],
)
def test_one_mapping_turns_every_compaction_shape_into_a_request(
    args: compaction.CompactArgs, direction: Any, dry_run: Any, expected: tuple[Any, ...]
) -> None:
    request = compaction.compact_request(args, direction, dry_run=dry_run)
    got = (
        request.direction,
        request.pivot_message_id,
        request.end_message_id,
        request.instructions,
        request.dry_run,
    )
    assert got == expected


async def test_a_params_error_is_invalid_params_naming_the_field_path(
    server: BatonServer,
) -> None:
    endpoint = server.protocol.command_endpoints[p.CMD_COMPACT_RANGE]
    with pytest.raises(JsonRpcException) as caught:
        await endpoint([{"sessionId": "s", "pivotMessageId": "a"}], None)
    assert caught.value.code == ErrorCodes.InvalidParams
    assert caught.value.data == {
        "code": "invalid_params",
        "problems": ["endMessageId: Field required"],
    }


@pytest.mark.parametrize(
    ("model", "params", "field"),
    [
        (p.CompactParams, {"dryRun": "false"}, "dryRun"),
        (p.PinParams, {"messageId": "m", "pinned": "yes"}, "pinned"),
        (p.PinParams, {"messageId": "m", "pinned": 1}, "pinned"),
        (p.PageParams, {"offset": True}, "offset"),
        (p.PageParams, {"limit": "2"}, "limit"),
        (p.CreateParams, {"clientContext": {"systemTokens": True}}, "clientContext.systemTokens"),
    ],
)
def test_a_flag_or_a_count_of_another_json_type_is_refused_not_converted(
    model: type[p.Params], params: dict[str, Any], field: str
) -> None:
    """A dry run sent as "false" must not commit, nor `true` count as one token."""
    with pytest.raises(ValidationError) as caught:
        model.model_validate({"sessionId": "s", **params})
    assert field_problems(caught.value, params)[0].startswith(f"{field}: ")
    valid = {"dryRun": False, "pinned": True, "offset": 0, "limit": 2, "systemTokens": 12}
    fixed = {k: valid.get(k, v) for k, v in params.items()}
    if field.startswith("clientContext"):
        fixed = {"clientContext": {"systemTokens": 12}}
    model.model_validate({"sessionId": "s", **fixed})  # the right JSON type still is taken


def test_a_new_title_is_trimmed_before_its_length_is_checked() -> None:
    """As create's: a 200-character title with spaces around it is a 200-character title."""
    padded = p.RenameParams.model_validate({"sessionId": "s", "title": "  " + "x" * 200 + "  "})
    assert padded.title == "x" * 200
    with pytest.raises(ValidationError):
        p.RenameParams.model_validate({"sessionId": "s", "title": "x" * 201})


@pytest.mark.parametrize("model", ["claude-x\n\n\ny", "claude-x\ry", "claude\x00x", "a\x85b"])
def test_a_model_name_with_a_line_break_or_a_control_character_is_refused(
    model: str, server: BatonServer
) -> None:
    """It goes into the session document's header line: a break there moved every range.
    The service refuses it too (acp's picker offers the `models` setting's names)."""
    with pytest.raises(ValidationError, match="one line without control characters"):
        p.CreateParams.model_validate({"model": model})
    with pytest.raises(ValidationError, match="one line without control characters"):
        p.SetModelParams.model_validate({"sessionId": "s", "model": model})
    sid = server.service.create().session_id
    with pytest.raises(InvalidParams, match="one line without control characters"):
        server.service.set_model(sid, model)


def test_a_model_name_is_trimmed_and_a_blank_one_at_create_is_none_given() -> None:
    assert p.SetModelParams.model_validate({"sessionId": "s", "model": " m\n"}).model == "m"
    assert p.CreateParams.model_validate({"model": "\n\n"}).model == ""


def test_an_error_sends_no_field_as_null() -> None:
    """A broken stream has no HTTP status: the error's data leaves it out, as every answer
    leaves out a field with no value."""
    broken = ApiError("the reply stream broke: reset", status=None, type="stream_error")
    assert to_rpc_error(broken).data == {"type": "stream_error", "code": "api_error"}
    refused = ApiError("Anthropic API error 529", status=529, type="overloaded_error")
    assert to_rpc_error(refused).data == {
        "status": 529,
        "type": "overloaded_error",
        "code": "api_error",
    }


def test_the_error_table_uses_the_lsp_error_numbers() -> None:
    assert p.RPC_CODE["invalid_params"] == ErrorCodes.InvalidParams
    assert p.RPC_CODE["internal_error"] == ErrorCodes.InternalError
    assert p.RPC_CODE["session_not_found"] == LSPErrorCodes.RequestFailed


def test_every_table_entry_has_a_handler_and_a_missing_one_fails(tmp_path: Path) -> None:
    server = BatonServer(BatonService(Settings(data_dir=str(tmp_path))))
    requests = {**sessions.REQUESTS, **compaction.REQUESTS}
    assert set(
        dispatch.routes(server, requests, compaction.COMMANDS, editor.NOTIFICATIONS).requests
    ) == set(p.REQUESTS)
    del requests[p.SESSION_PIN]
    with pytest.raises(RuntimeError, match="baton/session/pin"):
        dispatch.routes(server, requests, compaction.COMMANDS, editor.NOTIFICATIONS)


def test_a_handler_taking_the_wrong_params_model_fails_when_the_routes_load(
    tmp_path: Path,
) -> None:
    server = BatonServer(BatonService(Settings(data_dir=str(tmp_path))))
    requests = {**sessions.REQUESTS, **compaction.REQUESTS, p.SESSION_PIN: sessions.usage}
    with pytest.raises(TypeError, match="baton/session/pin must take"):
        dispatch.routes(server, requests, compaction.COMMANDS, editor.NOTIFICATIONS)


def test_the_names_registered_before_the_tables_load_must_be_the_tables_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    p._names_match()  # protocol.py runs this when imported
    monkeypatch.setattr(p, "COMMANDS", p.COMMANDS[:-1])
    with pytest.raises(RuntimeError, match="other commands"):
        p._names_match()


def test_a_handler_answering_another_model_is_a_server_fault() -> None:
    with pytest.raises(TypeError, match="not SessionList"):
        dispatch.answer(p.SessionList, p.Empty())
