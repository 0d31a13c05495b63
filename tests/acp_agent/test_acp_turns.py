"""`baton acp` driven by the Python SDK's client side: sessions, a prompt turn with its
streamed reply and meter, the stop reason, and bad input answered with ACP errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import RequestError, text_block

from baton_testkit.acp_client import WAIT, running_agent
from baton_testkit.fake_anthropic import FakeAnthropic, held_reply


async def test_initialize_advertises_sessions_prompts_and_no_auth_with_a_key(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        capabilities = agent.init["agentCapabilities"]
        assert capabilities["loadSession"] is True
        assert capabilities["promptCapabilities"]["image"] is True
        assert capabilities["promptCapabilities"]["embeddedContext"] is True
        sessions = capabilities["sessionCapabilities"]
        assert {"list", "resume", "close"} <= set(sessions)
        assert agent.init["authMethods"] == []
        assert agent.init["agentInfo"]["name"] == "baton"


async def test_initialize_answers_the_version_asked_for_only_when_baton_speaks_it(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        assert agent.init["protocolVersion"] == 1
        for asked in (0, 2, 99):  # not spoken: the latest Baton speaks
            again = await agent.request("initialize", {"protocolVersion": asked})
            assert again["protocolVersion"] == 1


async def test_a_prompt_turn_streams_the_reply_and_the_meter(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply(
        "Hello from the fake model, streamed in pieces.",
        usage={"input_tokens": 1200, "output_tokens": 12},
    )
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        await rec.until(lambda: rec.updates(sid, "available_commands_update"))
        switched = await agent.conn.set_config_option(
            config_id="model", session_id=sid, value="claude-sonnet-4-5"
        )
        model = next(o for o in switched.config_options if o.id == "model")
        assert model.current_value == "claude-sonnet-4-5"
        answer = await agent.say(sid, "Say hello")
        assert answer.stop_reason == "end_turn"
        chunks = rec.updates(sid, "agent_message_chunk")
        assert len(chunks) > 1  # streamed, not one block at the end
        text = "".join(c["content"]["text"] for c in chunks)
        assert text == "Hello from the fake model, streamed in pieces."
        # the process's first session already names its cwd to the model
        [request] = fake_anthropic.message_requests()
        assert str(agent.workspace) in json.dumps(request.body["system"])
        assert len({c["messageId"] for c in chunks}) == 1
        usages = rec.updates(sid, "usage_update")
        last = usages[-1]
        assert last["used"] == 1212  # the reply's real usage, as baton/usage gives it
        assert last["size"] == 200_000
        assert last["cost"]["currency"] == "USD"
        assert last["cost"]["amount"] == pytest.approx((1200 * 3 + 12 * 15) / 1e6)
        commands = rec.updates(sid, "available_commands_update")[0]["availableCommands"]
        names = {c["name"] for c in commands}
        assert names == {
            "compact",
            "compact-up-to",
            "compact-from",
            "undo-compact",
            "pin",
            "context",
        }


async def test_an_unknown_session_and_malformed_blocks_are_acp_errors_and_change_nothing(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.reply("fine", usage={"input_tokens": 50, "output_tokens": 2})
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        with pytest.raises(RequestError) as unknown:
            await agent.say("no-such-session", "hello")
        assert unknown.value.data["code"] == "session_not_found"
        with pytest.raises(RequestError) as load:
            await agent.conn.load_session(cwd=str(agent.workspace), session_id="nope")
        assert load.value.data["code"] == "session_not_found"
        transcript = agent.data_dir / "sessions" / f"{sid}.jsonl"
        before = transcript.read_bytes()
        bad_blocks = [
            [{"type": "image", "data": "not base64!", "mimeType": "image/png"}],
            [{"type": "image", "data": "aGVsbG8=", "mimeType": "image/tiff"}],
            [{"type": "audio", "data": "aGVsbG8=", "mimeType": "audio/wav"}],
            [{"type": "text"}],  # no text: the schema refuses it
            [{"type": "hologram", "text": "x"}],
            [],
            [{"type": "image", "data": "", "mimeType": "image/png"}],
            [
                {
                    "type": "resource",
                    "resource": {
                        "uri": "file:///doc.pdf",
                        "blob": "not base64!!",
                        "mimeType": "application/pdf",
                    },
                }
            ],
        ]
        for prompt in bad_blocks:
            with pytest.raises(RequestError) as refused:
                await agent.request("session/prompt", {"sessionId": sid, "prompt": prompt})
            assert refused.value.code == -32602, prompt
            # the schema's refusals too carry the stable code every other refusal does
            assert refused.value.data["code"] == "invalid_params", prompt
            assert "Traceback" not in str(refused.value.data)
        # a select's values are the ones it lists: a model it does not offer is refused
        for model in ("no-such-model", "gpt-4o; rm -rf"):
            with pytest.raises(RequestError) as refused:
                await agent.conn.set_config_option(config_id="model", session_id=sid, value=model)
            assert refused.value.data["code"] == "invalid_params"
        assert transcript.read_bytes() == before  # nothing was stored
        assert fake_anthropic.message_requests() == []
        answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("now a good one")])
        assert answer.stop_reason == "end_turn"


async def test_lines_that_are_no_json_rpc_message_are_answered_and_the_agent_goes_on(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Text that is no JSON object: a parse error (id null); JSON that is no JSON-RPC 2.0
    message: an invalid request, with its id when usable (an id with no method at all used
    to get no answer, and a client waited on it for good)."""
    fake_anthropic.reply("still here", usage={"input_tokens": 50, "output_tokens": 2})
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        stdin = agent.process.stdin
        assert stdin is not None
        for line in (
            b"this is not JSON\n",
            b"[1, 2]\n",
            b'{"jsonrpc": "2.0", "id": 903}\n',
            b'{"jsonrpc": "1.0", "id": 904, "method": "session/list", "params": {}}\n',
            b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "session/list", "params": {}}\n',
            b'{"jsonrpc": "2.0", "id": 905, "method": 7}\n',
        ):
            stdin.write(line)
            await stdin.drain()
        rec = agent.recorder
        await rec.until(lambda: len(rec.invalid_requests) == 4, what="four invalid requests")
        parse_errors = [a for a in rec.answers_without_id if a["error"]["code"] == -32700]
        assert len(parse_errors) == 2
        assert [a["id"] for a in rec.invalid_requests] == [903, 904, None, 905]
        answer = await agent.say(sid, "are you there?")
        assert answer.stop_reason == "end_turn"


async def test_cancel_mid_turn_ends_it_cancelled_and_keeps_what_arrived(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    script = held_reply(fake_anthropic, "The first words arrive, the rest never does.", after=4)
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        turn = asyncio.ensure_future(agent.say(sid, "Tell me a long story"))
        await rec.until(lambda: rec.updates(sid, "agent_message_chunk"), what="a first chunk")
        await agent.conn.cancel(session_id=sid)
        answer = await asyncio.wait_for(turn, WAIT)
        assert answer.stop_reason == "cancelled"
        script.gate.set()  # type: ignore[union-attr]
        events = [
            json.loads(line)
            for line in (agent.data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
        ]
        messages = [e["message"] for e in events if e["type"] == "message"]
        assert [m["role"] for m in messages] == ["user", "assistant"]  # nothing lost
        assert messages[1]["stopReason"] == "interrupted"
        streamed = "".join(c["content"]["text"] for c in rec.updates(sid, "agent_message_chunk"))
        assert messages[1]["content"][0]["text"] == streamed
        fake_anthropic.reply("Back again.")
        again = await agent.say(sid, "Go on")
        assert again.stop_reason == "end_turn"


async def test_a_load_while_a_reply_streams_replays_what_it_said_so_far(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The reply is stored when it ends: a load before that replays the text streamed so
    far under its message id, and the rest follows, so a view rebuilt from the load holds
    the whole reply."""
    script = held_reply(fake_anthropic, "BEGINNING of the answer, then the END.", after=5)
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        rec = agent.recorder
        turn = asyncio.ensure_future(agent.say(sid, "question"))
        await rec.until(
            lambda: script.held.is_set() and rec.updates(sid, "agent_message_chunk"),  # type: ignore[union-attr]
            what="a held reply",
        )
        seen = len(rec.updates(sid))
        await agent.request(
            "session/load", {"sessionId": sid, "cwd": str(agent.workspace), "mcpServers": []}
        )
        script.gate.set()  # type: ignore[union-attr]
        assert (await asyncio.wait_for(turn, WAIT)).stop_reason == "end_turn"
        await rec.until(
            lambda: (
                "END."
                in "".join(u["content"]["text"] for u in rec.updates(sid, "agent_message_chunk"))
            ),
            what="the reply's end",
        )
        after = [u for u in rec.updates(sid)[seen:] if u["sessionUpdate"].endswith("_chunk")]
        # chunks the agent had still to pass on when the load came may precede its replay,
        # which opens with the prompt: a view rebuilt from the load starts there
        kinds = [u["sessionUpdate"] for u in after]
        assert "user_message_chunk" in kinds
        rebuilt = after[kinds.index("user_message_chunk") :]
        replies = [u for u in rebuilt if u["sessionUpdate"] == "agent_message_chunk"]
        assert "".join(u["content"]["text"] for u in replies) == (
            "BEGINNING of the answer, then the END."
        )
        assert len({u["messageId"] for u in replies}) == 1


async def test_a_prompt_sent_again_after_an_api_error_is_a_retry_not_a_second_copy(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The failed turn kept its prompt; sending the same prompt again (an agent panel's only
    retry) continues after it: the model and a later load see the words once."""
    fake_anthropic.error(529, "overloaded_error", "Overloaded", retry_after="0.01", times=3)
    fake_anthropic.reply("Four.", usage={"input_tokens": 40, "output_tokens": 2})
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        with pytest.raises(RequestError) as failed:
            await agent.say(sid, "What is 2+2?")
        assert failed.value.data["code"] == "api_error"
        answer = await agent.say(sid, "What is 2+2?")
        assert answer.stop_reason == "end_turn"
        sent = fake_anthropic.message_requests()[-1].body["messages"]
        assert json.dumps(sent).count("What is 2+2?") == 1
        assert _prompts(agent.data_dir, sid).count("What is 2+2?") == 1
        # another prompt after a failure is a new prompt: stored as sent
        fake_anthropic.error(529, "overloaded_error", "Overloaded", retry_after="0.01", times=3)
        with pytest.raises(RequestError):
            await agent.say(sid, "And 3+3?")
        fake_anthropic.reply("Six.", usage={"input_tokens": 60, "output_tokens": 2})
        await agent.say(sid, "Then 4+4?")
        assert _prompts(agent.data_dir, sid) == ["What is 2+2?", "And 3+3?", "Then 4+4?"]


async def test_a_prompt_sent_again_after_a_broken_stream_makes_the_reply_again_once(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The broken turn kept its prompt and what arrived of the reply: the same prompt sent
    again is its retry, the words stored once and the half reply set aside, not the view
    prompt, half a reply, prompt."""
    fake_anthropic.reply("Here is the first half of it", cut_after=5)
    fake_anthropic.reply("The whole answer.")
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        with pytest.raises(RequestError):
            await agent.say(sid, "explain")
        answer = await agent.say(sid, "explain")
        assert answer.stop_reason == "end_turn"
        sent = fake_anthropic.message_requests()[-1].body["messages"]
        assert sent == [{"role": "user", "content": [{"type": "text", "text": "explain"}]}]
        assert _prompts(agent.data_dir, sid) == ["explain"]


def _prompts(data_dir: Path, sid: str) -> list[str]:
    """The text of every user message the transcript stores, in order."""
    lines = (data_dir / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    messages = [e["message"] for e in events if e.get("type") == "message"]
    return [
        block["text"]
        for m in messages
        if m["role"] == "user"
        for block in m["content"]
        if block["type"] == "text"
    ]


async def test_a_prompt_too_long_says_what_an_agent_panel_can_do(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.prompt_too_long(actual=210_000, limit=200_000)
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        with pytest.raises(RequestError) as refused:
            await agent.say(sid, "hello")
        assert refused.value.data["code"] == "prompt_too_long"
        assert "/compact" in str(refused.value)
        assert "baton/compact" not in str(refused.value)
        assert "no content" not in str(refused.value)
