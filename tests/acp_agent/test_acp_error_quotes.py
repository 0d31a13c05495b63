"""An error answer quotes what it refused within bounds: a request of megabytes refused
for a field (the schema's check, or Baton's own) is answered in a few thousand characters
at most, naming the field and the start and end of the value, never the whole input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic

LONG = 300_000


def cases(sid: str, workspace: str) -> list[tuple[str, dict[str, Any]]]:
    text = {"type": "text", "text": "hi"}
    return [
        # refused by the schema, which quoted the whole block (or value) in data.errors
        ("session/prompt", {"sessionId": sid, "prompt": [{"type": "bogus", "text": "x" * LONG}]}),
        ("session/prompt", {"sessionId": sid, "prompt": "y" * LONG}),
        ("session/list", {"cwd": 5, "cursor": "c" * LONG}),
        # refused by Baton, whose sentence quoted the value
        ("session/new", {"cwd": "relative/" + "d" * LONG, "mcpServers": []}),
        ("session/load", {"cwd": workspace, "sessionId": "s" * LONG, "mcpServers": []}),
        ("session/prompt", {"sessionId": sid, "prompt": [{**text, "text": "/pin " + "p" * LONG}]}),
        ("authenticate", {"methodId": "m" * LONG}),
        ("session/set_config_option", {"sessionId": sid, "configId": "o" * LONG, "value": "v"}),
        # no such method: the SDK named it in data
        ("no/such/" + "n" * LONG, {}),
    ]


async def test_an_error_never_quotes_a_huge_input_whole(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as agent:
        sid = await agent.new()
        for method, params in cases(sid, str(agent.workspace)):
            with pytest.raises(RequestError) as refused:
                await agent.request(method, params)
            error = refused.value
            size = len(json.dumps({"message": str(error), "data": error.data}))
            assert size < 4_000, (method[:40], size)
            assert error.code in (-32602, -32601), method[:40]
        # what the agent says about a refused value still names it
        with pytest.raises(RequestError) as refused:
            await agent.request("session/new", {"cwd": "relative/" + "d" * LONG, "mcpServers": []})
        assert str(refused.value).startswith("cwd must be an absolute path, got 'relative/ddd")
        assert "characters left out" in str(refused.value)
        assert (await agent.say(sid, "are you there?")).stop_reason == "end_turn"
