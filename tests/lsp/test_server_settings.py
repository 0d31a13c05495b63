"""Settings and workspace glue: dataDir, the API key's secrecy, folders, summarizer choice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lsp_harness import WAIT_SECONDS, Harness, conversation, server_env
from lsprotocol import types

from baton import protocol
from baton.core.settings import Settings
from baton.core.usage.budget import DEFAULT_WINDOW
from baton_testkit.fake_anthropic import FakeAnthropic


async def test_the_data_dir_setting_wins_over_the_environment(start_server, tmp_path: Path) -> None:
    chosen = tmp_path / "chosen"
    lsp = await start_server(options={"dataDir": str(chosen)})
    sid = (await lsp.create())["sessionId"]
    assert (chosen / "sessions" / f"{sid}.jsonl").is_file()
    assert not (lsp.data_dir / "sessions" / f"{sid}.jsonl").exists()


async def test_the_environment_data_dir_is_used_without_a_setting(lsp: Harness) -> None:
    sid = (await lsp.create())["sessionId"]
    transcript = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    assert transcript.is_file()
    assert transcript.stat().st_mode & 0o777 == 0o600


async def test_the_api_key_is_never_written_to_disk(
    start_server, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    key = "sk-ant-test-never-on-disk-0123456789"
    lsp = await start_server(options={"anthropicApiKey": key, "model": "claude-haiku-4-5"})
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply("fine")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "hello"})
    assert fake_anthropic.message_requests()[-1].api_key == key
    assert fake_anthropic.message_requests()[-1].body["model"] == "claude-haiku-4-5"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "the session left files behind"
    assert all(key.encode() not in p.read_bytes() for p in written)


async def test_model_limits_from_the_models_api_reach_the_usage(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.models["claude-test-wide"] = {"max_input_tokens": 400_000, "max_tokens": 8_000}
    lsp = await start_server(options={"anthropicApiKey": "sk-ant-test-limits-000000"})
    mark = lsp.recorder.mark()
    sid = (await lsp.create(model="claude-test-wide"))["sessionId"]
    # the first figures come from the table (an unknown model: the default window); the
    # Models API's arrive in the background and are published as they do
    first = await lsp.recorder.notification(protocol.USAGE_CHANGED, after=mark)
    assert first["usage"]["contextWindow"] == DEFAULT_WINDOW
    update = await lsp.recorder.notification(
        protocol.USAGE_CHANGED, lambda p: p["usage"]["contextWindow"] == 400_000, after=mark
    )
    assert (await lsp.request(protocol.USAGE, {"sessionId": sid}))["contextWindow"] == 400_000
    assert update["sessionId"] == sid


async def test_workspace_folders_added_later_count_for_restores(
    lsp: Harness, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    source = other / "lib.py"
    source.write_text("library = True\n")
    lsp.client.protocol.notify(protocol.ACTIVE_EDITOR, {"uri": source.as_uri()})
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    outside = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[1]})
    assert outside["restoredFiles"] == []  # not in a workspace folder yet

    lsp.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=other.as_uri(), name="other")], removed=[]
            )
        )
    )
    inside = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[3]})
    assert [f["uri"] for f in inside["restoredFiles"]] == [source.as_uri()]


async def test_the_summarizer_setting_picks_the_summarizer(start_server) -> None:
    lsp = await start_server(options={"summarizer": "memory"})
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(3)))["messageIds"]
    result = await lsp.command(protocol.CMD_COMPACT_UP_TO, {"sessionId": sid, "messageId": ids[1]})
    assert result["summarizer"] == "memory"
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"baton": {"summarizer": "extractive"}})
    )
    await lsp.recorder.notification(protocol.USAGE_CHANGED)
    again = await lsp.command(protocol.CMD_COMPACT_FROM, {"sessionId": sid, "messageId": ids[5]})
    assert again["summarizer"] == "extractive"


async def test_an_anthropic_summarizer_without_a_key_is_api_key_missing(start_server) -> None:
    lsp = await start_server(options={"summarizer": "anthropic"})
    sid = (await lsp.create())["sessionId"]
    ids = (await lsp.append(sid, *conversation(2)))["messageIds"]
    error = await lsp.error(
        protocol.COMPACT, {"sessionId": sid, "direction": "up_to", "pivotMessageId": ids[1]}
    )
    assert error.baton_code == "api_key_missing"


def test_serve_rejects_a_bad_address_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "baton", "serve", "--tcp", "not-an-address"],
        env=server_env(tmp_path / "data"),
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "invalid address" in done.stderr


async def test_bad_settings_are_shown_once_until_they_change_and_again_after_a_fix(
    start_server,
) -> None:
    bad = {"contextWindow": "huge"}
    lsp = await start_server(options=bad, configuration={"": {"baton": bad}})
    await lsp.recorder.notification(types.WORKSPACE_CONFIGURATION)
    sid = (await lsp.create())["sessionId"]  # sent after the pulled settings are applied

    def shown() -> list[types.ShowMessageParams]:
        return lsp.recorder.of(types.WINDOW_SHOW_MESSAGE)

    first = await lsp.recorder.wait_for(shown)
    assert first[0].type == types.MessageType.Warning
    assert "baton.contextWindow: invalid value 'huge'" in first[0].message
    assert "using the default" in first[0].message
    # the same problem from the pull and from a change shows nothing again; a fix clears it
    for settings in (bad, {"contextWindow": 30_000}):
        lsp.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"baton": settings})
        )
    await lsp.recorder.notification(
        protocol.USAGE_CHANGED,
        lambda p: p["sessionId"] == sid and p["usage"]["contextWindow"] == 30_000,
    )
    assert len(shown()) == 1
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"baton": bad})
    )
    again = await lsp.recorder.wait_for(lambda: shown()[1:])
    assert again[0].message == first[0].message


async def test_an_api_key_with_a_line_break_after_it_works(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    lsp = await start_server(options={"anthropicApiKey": "sk-ant-test-0123456789abcdef\r\n"})
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply("Hello.")
    result = await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "Hi"})
    assert result["message"]["content"][0]["text"] == "Hello."
    assert fake_anthropic.message_requests()[0].api_key == "sk-ant-test-0123456789abcdef"


async def test_a_model_setting_past_200_characters_makes_no_session_with_it(start_server) -> None:
    """A `model` of 307 characters was taken, and New Chat made sessions with a name that
    baton/session/create and setModel refuse; it warns and keeps the default."""
    lsp = await start_server(options={"model": "claude-" + "x" * 300})
    created = await lsp.create()
    assert created["model"] == Settings().model
    shown = await lsp.recorder.wait_for(lambda: lsp.recorder.of(types.WINDOW_SHOW_MESSAGE))
    assert "baton.model:" in shown[0].message
    assert "at most 200 characters" in shown[0].message
    assert "x" * 300 not in shown[0].message
