"""`baton payload` shows the request the next send sends, as the fake API records it: the
budget note in it when due, an interrupted reply that ends the view set aside, and the
prompt `--prompt` names after the view."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_thinking_payload import SYSTEM, Talk, talk  # noqa: F401 (the fixture)

from baton.cli.main import main as cli_main
from baton.core.compaction.automatic.auto import AutoCompactor
from baton.core.conversation.messages import (
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.errors import ApiError
from baton.core.settings import Settings
from baton.core.turn.chat import send
from baton_testkit.request_size import SizeOfRequest

MODEL = "claude-sonnet-4-5"
NOTED = {"budgetNote": {"enabled": True, "startTokens": 1}}  # the note on every request
LOW = {"autoCompact": {"thresholdPercent": 1}}  # 1,800 tokens of the window's 180,000
THINKING = {**NOTED, "thinking": "adaptive"}


def payload(capsys: pytest.CaptureFixture[str], session: Session, *options: str) -> dict[str, Any]:
    capsys.readouterr()
    assert cli_main(["payload", str(session.transcript.path), "--json", *options]) == 0
    return dict(json.loads(capsys.readouterr().out))


def settings_file(tmp_path: Path, values: dict[str, Any]) -> str:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(values), encoding="utf-8")
    return str(path)


def same_request(told: dict[str, Any], sent: dict[str, Any]) -> None:
    """The request `baton payload` showed is the one the fake API recorded."""
    shown = told["request"]
    assert {k: v for k, v in shown.items() if v is not None} == {
        k: v for k, v in sent.items() if k != "stream"
    }


async def chatted(talk: Talk, config: Settings) -> Session:  # noqa: F811
    # each usage the size of its request, its budget note in it (the fake's default, 10
    # tokens of input, is less than the note alone, which a figure leaves out of a usage
    # once the note is no longer due)
    talk.fake.prompt_cache = SizeOfRequest(talk.estimator)  # type: ignore[assignment]
    session = talk.store.create("t", MODEL, SYSTEM)
    talk.fake.reply("Hello there.")
    await send(session, content="hi", tools=None, ctx=talk.chat(config))
    return session


async def test_an_interrupted_reply_the_next_send_sets_aside_is_not_shown(
    talk: Talk,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The cut reply was shown as the request's last turn, a prefill no send makes: a send
    with no content sets it aside and asks for the reply again."""
    config = Settings()
    session = await chatted(talk, config)
    talk.fake.reply("A long answer that breaks in the middle of it", cut_after=5)
    with pytest.raises(ApiError):
        await send(session, content="next", tools=None, ctx=talk.chat(config))
    before = session.transcript.path.read_bytes()
    told = payload(capsys, session)
    assert session.transcript.path.read_bytes() == before  # the file itself is not changed
    talk.fake.reply("Whole now.")
    await send(session, content=None, tools=None, ctx=talk.chat(config))
    same_request(told, talk.fake.message_requests()[-1].body)
    assert told["budgetNote"] is None


async def test_the_budget_note_the_next_send_adds_is_shown_in_its_request(
    talk: Talk,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    config = Settings.model_validate(THINKING)
    session = await chatted(talk, config)
    session.append([MessageInput(role="user", content="go on please")])
    told = payload(capsys, session, "--settings", settings_file(tmp_path, THINKING))
    talk.fake.reply("Going on.")
    await send(session, content=None, tools=None, ctx=talk.chat(config))
    sent = talk.fake.message_requests()[-1].body
    same_request(told, sent)
    assert sent["system"] == SYSTEM and sent["thinking"]["type"] == "enabled"
    assert told["budgetNote"].startswith("<system_warning>Token usage: ")
    assert sent["messages"][-1]["content"][-1]["text"] == told["budgetNote"]


async def test_the_prompt_named_is_shown_as_the_send_that_brings_it_sends_it(
    talk: Talk,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    config = Settings.model_validate(NOTED)
    session = await chatted(talk, config)
    options = ["--settings", settings_file(tmp_path, NOTED), "--prompt", "Anything else?"]
    told = payload(capsys, session, *options)
    assert cli_main(["payload", str(session.transcript.path), *options]) == 0
    assert f"  with the budget note: {told['budgetNote']}\n" in capsys.readouterr().out
    talk.fake.reply("Nothing else.")
    await send(session, content="Anything else?", tools=None, ctx=talk.chat(config))
    sent = talk.fake.message_requests()[-1].body
    same_request(told, sent)
    assert sent["messages"][-1]["content"][0] == {"type": "text", "text": "Anything else?"}


async def test_a_view_the_model_ended_shows_no_note_and_asks_for_the_prompt(
    talk: Talk,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """With no prompt to end it, the note went into the system prompt, where no send puts
    it: every send's request ends with the user's turn, and the note goes there."""
    config = Settings.model_validate(NOTED)
    session = await chatted(talk, config)
    options = ["--settings", settings_file(tmp_path, NOTED)]
    told = payload(capsys, session, *options)
    assert told["request"]["system"] == SYSTEM and told["budgetNote"] is None
    assert told["request"]["messages"][-1]["role"] == "assistant"
    assert cli_main(["payload", str(session.transcript.path), *options]) == 0
    assert "the next send brings a prompt: --prompt TEXT shows" in capsys.readouterr().out


async def test_an_auto_compaction_the_next_send_runs_first_is_said(
    talk: Talk,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Nothing said it: the request shown was the one before a compaction the send runs."""
    config = Settings.model_validate(LOW)
    session = await chatted(talk, config)
    session.append([MessageInput(role="user", content="go on: " + "many words " * 1_500)])
    options = ["--settings", settings_file(tmp_path, LOW)]
    assert payload(capsys, session, *options)["autoCompactsFirst"] is True
    assert cli_main(["payload", str(session.transcript.path), *options]) == 0
    assert "  the next send auto-compacts first (" in capsys.readouterr().out
    off = {"autoCompact": {"thresholdPercent": 1, "enabled": False}}
    options = ["--settings", settings_file(tmp_path, off)]
    assert payload(capsys, session, *options)["autoCompactsFirst"] is False
    # the send decides as payload said: it compacts before its reply
    ctx = talk.chat(config)
    ctx.auto = AutoCompactor(lambda: talk.compacting(config))
    talk.fake.reply("Going on.")
    await send(session, content=None, tools=None, ctx=ctx)
    assert session.active and session.view_messages()[0].kind == "summary"


async def test_the_idle_clearing_the_next_send_runs_first_is_in_the_request_shown(
    talk: Talk,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two hours after the last reply the send clears old tool results before it asks (as
    its auto-compact check does first); payload showed them whole."""
    config = Settings()
    session = talk.store.create("t", MODEL, SYSTEM)
    then = (datetime.now(UTC) - timedelta(hours=2)).isoformat()
    for n in range(7):
        use = ToolUseBlock(id=f"toolu_{n}", name="read_file", input={"path": f"f{n}.py"})
        found = ToolResultBlock(tool_use_id=use.id, content="x = 1\n" * 50)
        turns: list[list[Any]] = [[TextBlock(text=f"read f{n}")], [use], [found]]
        turns.append([TextBlock(text="Read.")])
        roles = ("user", "assistant", "user", "assistant")
        session.append(
            [Message(role=r, content=c, created_at=then) for r, c in zip(roles, turns, strict=True)]
        )
    told = payload(capsys, session, "--prompt", "And now?")
    assert told["clearedFirst"] is True and told["autoCompactsFirst"] is False
    ctx = talk.chat(config)
    ctx.auto = AutoCompactor(lambda: talk.compacting(config))
    talk.fake.reply("Now this.")
    await send(session, content="And now?", tools=None, ctx=ctx)
    sent = talk.fake.message_requests()[-1].body
    assert "[Old tool result content cleared]" in json.dumps(sent["messages"])
    same_request(told, sent)


async def test_the_models_api_limits_a_send_asks_for_are_the_ones_shown(
    talk: Talk,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A send with a key asks the Models API for the model's limits; payload used the model
    table's, so it showed max_tokens 32,000 where the send asked for 2,048, and counted
    against a window of 200,000 where the send's was 60,000. With a key it asks as the
    send does, and says which limits it used."""
    config = Settings()
    talk.fake.models[MODEL] = {"max_input_tokens": 60_000, "max_tokens": 2_048}
    session = await chatted(talk, config)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-payload-0123456789")
    argv = ["payload", str(session.transcript.path), "--prompt", "More?"]
    capsys.readouterr()
    assert await asyncio.to_thread(cli_main, [*argv, "--json"]) == 0
    told = json.loads(capsys.readouterr().out)
    assert told["limits"] == {"from": "modelsApi", "contextWindow": 60_000, "maxOutput": 2_048}
    assert await asyncio.to_thread(cli_main, argv) == 0
    said = "  limits: the Models API's for claude-sonnet-4-5 (a window of 60,000 tokens, "
    assert said + "output up to 2,048)" in capsys.readouterr().out.splitlines()
    talk.fake.reply("That is all.")
    await send(session, content="More?", tools=None, ctx=talk.chat(config))
    same_request(told, talk.fake.message_requests()[-1].body)

    monkeypatch.delenv("ANTHROPIC_API_KEY")  # no key: the table's, and said so
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    assert "  limits: the model table's for claude-sonnet-4-5 (a window of 200,000 " in out
    assert "no ANTHROPIC_API_KEY: a send asks the Models API, whose limits may differ)" in out
