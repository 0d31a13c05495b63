"""Diagnostics on session documents (BEHAVIOR 7) and the settings that move them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lsp_harness import Harness, assistant, conversation, user
from lsprotocol import types

from baton import protocol
from baton.core.settings import Settings
from baton.core.usage.budget import budget_for

Severity = types.DiagnosticSeverity
SMALL_WINDOW = {"contextWindow": 20_000, "autoCompact": {"enabled": False}}
# 20,000-token window: effective 16,000, threshold 13,400, warning 9,400, blocking 15,400


def usage_diagnostic(published: types.PublishDiagnosticsParams) -> types.Diagnostic:
    found = [d for d in published.diagnostics if d.code == "context-usage"]
    assert len(found) == 1
    return found[0]


def codes(published: types.PublishDiagnosticsParams, code: str) -> list[types.Diagnostic]:
    return [d for d in published.diagnostics if d.code == code]


async def test_usage_diagnostic_sits_on_the_first_line(any_lsp: Harness) -> None:
    sid = (await any_lsp.create())["sessionId"]
    result = await any_lsp.append(sid, *conversation(2))
    published = await any_lsp.latest_diagnostics(sid)
    diagnostic = usage_diagnostic(published)
    assert diagnostic.range.start.line == 0 and diagnostic.range.end.line == 0
    assert diagnostic.severity == Severity.Information
    assert diagnostic.source == "baton"
    usage = result["usage"]
    assert diagnostic.message == (
        f"Context {usage['percentUsed']:.0f}% used "
        f"({usage['usedTokens']:,} / {usage['contextWindow']:,}, estimated until the next "
        f"reply) - {usage['percentLeft']}% left until auto-compact"
    )


async def test_severity_follows_the_usage_state(start_server) -> None:
    lsp = await start_server(options=SMALL_WINDOW)
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(10))
    assert (await lsp.request(protocol.USAGE, {"sessionId": sid}))["state"] == "ok"
    assert usage_diagnostic(await lsp.latest_diagnostics(sid)).severity == Severity.Information

    await lsp.append(sid, *conversation(9))
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["state"] == "warning", usage["usedTokens"]
    warning = usage_diagnostic(await lsp.latest_diagnostics(sid))
    assert warning.severity == Severity.Warning
    assert warning.message.endswith("- auto-compact off")
    assert re.match(
        r"Context \d+% used \([\d,]+ / 20,000, estimated until the next", warning.message
    )

    await lsp.append(sid, *conversation(8))
    assert (await lsp.request(protocol.USAGE, {"sessionId": sid}))["state"] == "error"
    assert usage_diagnostic(await lsp.latest_diagnostics(sid)).severity == Severity.Error

    await lsp.append(sid, *conversation(4))
    assert (await lsp.request(protocol.USAGE, {"sessionId": sid}))["state"] == "blocking"
    blocked = usage_diagnostic(await lsp.latest_diagnostics(sid))
    assert blocked.severity == Severity.Error
    assert "blocked at 15,400" in blocked.message


async def test_large_messages_get_a_hint_on_their_heading(start_server) -> None:
    lsp = await start_server(options=SMALL_WINDOW)
    sid = (await lsp.create())["sessionId"]
    big = " ".join(f"token{i}" for i in range(700))  # well over 5% of 20,000
    ids = (await lsp.append(sid, user("small"), assistant(big)))["messageIds"]
    published = await lsp.latest_diagnostics(sid)
    hints = codes(published, "large-message")
    assert len(hints) == 1
    assert hints[0].severity == Severity.Hint
    doc = await lsp.render(sid)
    heading_line = doc["messages"][1]["range"]["start"]["line"]
    assert hints[0].range.start.line == heading_line
    assert ids[1] in doc["text"].split("\n")[heading_line]


def write_transcript(data_dir: Path, session_id: str, messages: list[dict[str, Any]]) -> None:
    """A transcript written by hand (as an older or foreign tool might have left it)."""
    sessions = data_dir / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    events = [
        {
            "type": "session",
            "format": 1,
            "sessionId": session_id,
            "title": "hand-written",
            "model": "claude-sonnet-4-5",
            "systemPrompt": None,
            "createdAt": "2026-01-01T00:00:00.000Z",
        },
        *({"type": "message", "message": m} for m in messages),
    ]
    path = sessions / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    path.chmod(0o600)


async def test_unpaired_tool_calls_are_warned_about(lsp: Harness) -> None:
    write_transcript(
        lsp.data_dir,
        "s_handwritten",
        [
            {"id": "m1", "role": "user", "content": [{"type": "text", "text": "go"}]},
            {
                "id": "m2",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_lost", "name": "Bash", "input": {}}],
            },
            {"id": "m3", "role": "user", "content": [{"type": "text", "text": "and?"}]},
            {
                "id": "m4",
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_ghost", "content": "x"}],
            },
            {"id": "m5", "role": "assistant", "content": [{"type": "text", "text": "done"}]},
        ],
    )
    # any change publishes; pin one message to make one
    await lsp.request(
        protocol.SESSION_PIN, {"sessionId": "s_handwritten", "messageId": "m5", "pinned": True}
    )
    published = await lsp.latest_diagnostics("s_handwritten")
    warnings = codes(published, "unpaired-tool-call")
    assert {w.severity for w in warnings} == {Severity.Warning}
    doc = await lsp.render("s_handwritten")
    lines = doc["text"].split("\n")
    flagged = {lines[w.range.start.line].split(" · ")[2] for w in warnings}
    assert flagged == {"m2", "m4"}


async def test_a_tool_call_awaiting_its_result_is_not_a_problem(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}
    await lsp.append(sid, user("read it"), {"role": "assistant", "content": [call]})
    published = await lsp.latest_diagnostics(sid)
    assert codes(published, "unpaired-tool-call") == []


async def test_settings_change_republishes_usage_and_diagnostics(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(2))
    await lsp.latest_diagnostics(sid)
    mark = lsp.recorder.mark()
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"baton": {"contextWindow": 50_000}})
    )
    usage = await lsp.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["usage"]["contextWindow"] == 50_000, after=mark
    )
    assert usage["sessionId"] == sid
    published = await lsp.diagnostics(
        sid, lambda p: "/ 50,000, estimated" in usage_diagnostic(p).message
    )
    assert published.uri == protocol.session_uri(sid)


async def test_another_data_dir_clears_the_diagnostics_of_the_sessions_it_leaves(
    lsp: Harness, tmp_path: Path
) -> None:
    """`dataDir` switched to another folder: the server let go of the old folder's sessions
    (a look answers `session_not_found`) but left their documents' diagnostics published, a
    meter of a session it no longer serves, for as long as the client ran."""
    sid = (await lsp.create())["sessionId"]
    await lsp.append(sid, *conversation(2))
    await lsp.latest_diagnostics(sid)
    mark = lsp.recorder.mark()
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"baton": {"dataDir": str(tmp_path / "b")}})
    )
    cleared = await lsp.recorder.notification(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
        lambda p: p.uri == protocol.session_uri(sid),
        after=mark,
    )
    assert list(cleared.diagnostics) == []
    error = await lsp.error(protocol.USAGE, {"sessionId": sid})
    assert error.baton_code == "session_not_found"


async def test_a_bad_setting_warns_once_and_keeps_the_default(start_server) -> None:
    lsp = await start_server(options={"contextWindow": "huge", "autoCompact": {"enabled": "maybe"}})
    warnings = await lsp.recorder.wait_for(
        lambda: [
            p
            for p in lsp.recorder.of(types.WINDOW_LOG_MESSAGE)
            if p.type == types.MessageType.Warning and "contextWindow" in p.message
        ]
    )
    assert len(warnings) == 1
    sid = (await lsp.create())["sessionId"]
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    default_window = budget_for(Settings().model, Settings())[0].context_window
    assert usage["contextWindow"] == default_window
    assert usage["autoCompactEnabled"] is True
    # the same bad value again says nothing new
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"baton": {"contextWindow": "huge"}})
    )
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"baton": {"contextWindow": 30_000}})
    )
    await lsp.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["usage"]["contextWindow"] == 30_000
    )
    repeated = [
        p for p in lsp.recorder.of(types.WINDOW_LOG_MESSAGE) if "contextWindow" in p.message
    ]
    assert len(repeated) == 1


async def test_workspace_configuration_is_pulled_after_initialized(start_server) -> None:
    lsp = await start_server(configuration={"": {"baton": {"contextWindow": 60_000}}})
    pulled = await lsp.recorder.notification(types.WORKSPACE_CONFIGURATION)
    assert [item.section for item in pulled.items] == ["baton"]
    # the answer reaches the server before any request sent after it
    sid = (await lsp.create())["sessionId"]
    usage = await lsp.request(protocol.USAGE, {"sessionId": sid})
    assert usage["contextWindow"] == 60_000


async def test_auto_compact_runs_after_an_append_crosses_the_threshold(start_server) -> None:
    keep = {"minTokens": 2_000, "minTextMessages": 2, "maxTokens": 4_000}
    lsp = await start_server(options={"contextWindow": 20_000, "keepWindow": keep})
    sid = (await lsp.create())["sessionId"]
    mark = lsp.recorder.mark()
    await lsp.append(sid, *conversation(28))  # past the 13,400-token threshold
    changed = await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "compact", after=mark
    )
    assert changed["sessionId"] == sid
    view = await lsp.get(sid)
    assert view["messages"][0]["kind"] == "summary"
    assert view["usage"]["usedTokens"] < view["usage"]["autoCompactThreshold"]
    published = await lsp.latest_diagnostics(sid)
    assert usage_diagnostic(published).severity == Severity.Information
    assert view["session"]["compactions"] == 1


async def test_a_client_started_again_gets_the_meter_of_a_compacted_session_it_looks_at(
    start_server,
) -> None:
    """A client that reads the meter from the diagnostics and never opens the document,
    started again (with a server of its own), got no meter for a session it got or
    rendered until that session next changed, though the same one stood before."""
    first: Harness = await start_server()
    sid = (await first.create())["sessionId"]
    await first.append(sid, *conversation(40))
    await first.request(protocol.COMPACT, {"sessionId": sid})
    before = usage_diagnostic(await first.latest_diagnostics(sid))
    await first.close()

    again: Harness = await start_server()
    view = await again.get(sid)
    published = await again.diagnostics(sid)
    assert usage_diagnostic(published).message == before.message
    assert published.version == (await again.render(sid))["version"]
    assert view["messages"][0]["kind"] == "summary"
