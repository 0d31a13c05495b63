"""The contract check the harness runs on every answer catches what breaks the schema."""

from __future__ import annotations

from contract_check import ContractCheck
from lsp_harness import Harness, conversation

from baton import protocol

USAGE = protocol.Usage(
    session_id="s",
    model="m",
    context_window=1,
    effective_window=1,
    auto_compact_threshold=1,
    warning_threshold=1,
    error_threshold=1,
    blocking_limit=1,
    used_tokens=0,
    percent_used=0,
    percent_left=100,
    state="ok",
    estimated=True,
    auto_compact_enabled=True,
    auto_compact_paused=False,
    breakdown=protocol.Breakdown(free=1),
).wire()


def _answer(check: ContractCheck, method: str, result: object, command: str | None = None) -> None:
    params = {"command": command, "arguments": []} if command else {}
    check.request_sent(1, method if command is None else "workspace/executeCommand", params)
    check.received({"jsonrpc": "2.0", "id": 1, "result": result})


def test_an_unnamed_field_a_missing_field_and_a_wrong_type_are_violations() -> None:
    check = ContractCheck()
    _answer(check, protocol.USAGE, USAGE)
    assert check.violations == [] and check.checked == 1
    _answer(check, protocol.USAGE, {**USAGE, "secretField": 1})
    _answer(check, protocol.USAGE, {k: v for k, v in USAGE.items() if k != "warnings"})
    _answer(check, protocol.USAGE, {**USAGE, "usedTokens": "many"})
    assert len(check.violations) == 3
    assert "secretField" in check.violations[0] and "warnings" in check.violations[1]


def test_commands_notifications_and_error_codes_are_checked() -> None:
    check = ContractCheck()
    _answer(check, "", {"usage": USAGE}, command=protocol.CMD_UNCOMPACT)
    check.received({"jsonrpc": "2.0", "method": protocol.SESSION_CHANGED, "params": {"x": 1}})
    check.request_sent(2, protocol.SESSION_GET, {})
    check.received({"jsonrpc": "2.0", "id": 2, "error": {"code": 1, "data": {"code": "oops"}}})
    assert check.violations[0].startswith("notifications baton/sessionChanged")
    assert check.violations[-1] == "baton/session/get answered with unknown error code 'oops'"
    assert not any("uncompact" in v for v in check.violations)


async def test_the_harness_checks_live_answers(lsp: Harness) -> None:
    sid = (await lsp.create(title="checked"))["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "pivotMessageId": ids[1]})
    await lsp.get(sid)
    await lsp.recorder.notification(protocol.USAGE_CHANGED)
    contract = lsp.client.protocol.contract
    assert contract.checked >= 5 and contract.violations == []
