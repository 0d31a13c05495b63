"""The tools a send offered the model count after the session is read again: the transcript
keeps their definitions, so a restart leaves the meter's breakdown, a compaction's figures
and `baton usage` where the running server had them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from baton.cli.main import main
from baton.core.compaction.result import CompactRequest
from baton.core.service.service import BatonService
from baton.core.tools.host import DiskHost
from baton.core.usage.budget import Usage
from baton.core.usage.estimator import Encoder, Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.services import service_on as make_service

CLIENT_TOOLS = [
    {
        "name": "lookup_ticket",
        "description": "Find a ticket in the tracker by its number and say who owns it. " * 8,
        "input_schema": {"type": "object", "properties": {"number": {"type": "integer"}}},
    }
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def service_on(data: Path, workspace: Path, estimator: Estimator) -> BatonService:
    return make_service(data, estimator, workspace)


async def chatted(
    data: Path, workspace: Path, estimator: Estimator, fake: FakeAnthropic, turns: int, **send: Any
) -> tuple[str, Usage]:
    """A session of `turns` sends on a server that stops after them: its id, its usage."""
    service = service_on(data, workspace, estimator)
    try:
        sid = await chat(service, fake, turns, **send)
        return sid, service.usage(sid)
    finally:
        await service.close()


async def chat(service: BatonService, fake: FakeAnthropic, turns: int, **send: Any) -> str:
    sid = service.create("tools", model="claude-haiku-4-5").session_id
    for n in range(turns):
        fake.reply(f"Answer {n}. " * 150, usage={"input_tokens": 2_000 + 1_500 * n})
        await service.replies.send(sid, f"question {n} " * 80, **send)
    return sid


def tools_events(data: Path, sid: str) -> list[Any]:
    lines = (data / "sessions" / f"{sid}.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    return [e["tools"] for e in events if e["type"] == "meta" and "tools" in e]


@pytest.mark.parametrize("offered", ["workspace", "client"])
async def test_a_restart_counts_the_tools_the_last_send_offered(
    tmp_path: Path,
    workspace: Path,
    estimator: Estimator,
    fake_anthropic: FakeAnthropic,
    offered: str,
) -> None:
    data = tmp_path / "data"
    send: dict[str, Any] = (
        {"host": DiskHost()} if offered == "workspace" else {"tools": CLIENT_TOOLS}
    )
    sid, before = await chatted(data, workspace, estimator, fake_anthropic, 5, **send)
    assert before.breakdown.tools > 0

    again = service_on(data, workspace, estimator)
    try:
        after = again.usage(sid)
    finally:
        await again.close()

    assert after.breakdown == before.breakdown
    assert after.used_tokens == before.used_tokens
    # the same definitions on every send: written once
    assert len(tools_events(data, sid)) == 1


async def test_a_compaction_after_a_restart_counts_the_tools_as_before_it(
    tmp_path: Path,
    workspace: Path,
    estimator: Estimator,
    cl100k: Encoder,
    fake_anthropic: FakeAnthropic,
) -> None:
    """The same compaction of the same transcript, by the server that sent the turns and
    by a fresh one on a copy: the figures after it agree (the tools were left out of the
    fresh one's, so its meter fell by their size and rose again at the next send)."""
    warm = service_on(tmp_path / "data", workspace, estimator)
    try:
        sid = await chat(warm, fake_anthropic, 6, host=DiskHost())
        shutil.copytree(tmp_path / "data", tmp_path / "copy")
        cold = service_on(tmp_path / "copy", workspace, Estimator(encoder=cl100k))
        try:
            request = CompactRequest(direction="all", dry_run=False)
            by_warm = await warm.compaction.compact(sid, request)
            by_cold = await cold.compaction.compact(sid, request)
            warm_after, cold_after = warm.usage(sid), cold.usage(sid)
            assert by_cold.pre_tokens == by_warm.pre_tokens
            assert by_cold.summary == by_warm.summary
            # the summary's message carries the boundary's own (random) ids: a few tokens
            # once calibrated (the tools left out were 880 of them)
            assert abs(by_cold.post_tokens - by_warm.post_tokens) <= 5
            # each part is its share of that figure, rounded: within a token of the other's
            warm_parts, cold_parts = warm_after.breakdown, cold_after.breakdown
            assert warm_parts.tools > 800
            assert abs(cold_parts.tools - warm_parts.tools) <= 1
            assert abs(cold_parts.system - warm_parts.system) <= 1
            assert abs(cold_parts.messages - warm_parts.messages) <= 1
        finally:
            await cold.close()
    finally:
        await warm.close()


async def test_a_change_of_tools_is_kept_and_the_newest_counts(
    tmp_path: Path, workspace: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    data = tmp_path / "data"
    service = service_on(data, workspace, estimator)
    try:
        sid = await chat(service, fake_anthropic, 2, tools=CLIENT_TOOLS)
        fake_anthropic.reply("Plain now.", usage={"input_tokens": 6_000})
        await service.replies.send(sid, "no tools this time")  # nothing offered
        assert service.usage(sid).breakdown.tools == 0
    finally:
        await service.close()
    assert tools_events(data, sid) == [CLIENT_TOOLS, []]

    again = service_on(data, workspace, estimator)
    try:
        assert again.usage(sid).breakdown.tools == 0
        assert not again.tools(sid)
    finally:
        await again.close()


async def test_the_command_line_counts_the_kept_tools(
    tmp_path: Path,
    workspace: Path,
    estimator: Estimator,
    fake_anthropic: FakeAnthropic,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "data"
    sid, served = await chatted(data, workspace, estimator, fake_anthropic, 3, tools=CLIENT_TOOLS)
    capsys.readouterr()

    assert main(["usage", str(data / "sessions" / f"{sid}.jsonl"), "--json"]) == 0
    reported = json.loads(capsys.readouterr().out)

    assert reported["breakdown"]["tools"] == served.breakdown.tools > 0
    assert reported["usedTokens"] == served.used_tokens


async def test_a_broken_tools_record_changes_nothing(
    tmp_path: Path, workspace: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """A `tools` field that is not a list of definitions (another program's edit) leaves
    the ones read before it in force."""
    data = tmp_path / "data"
    sid, before = await chatted(data, workspace, estimator, fake_anthropic, 2, tools=CLIENT_TOOLS)
    path = data / "sessions" / f"{sid}.jsonl"
    with path.open("a") as out:
        for bad in ("all of them", [1, 2], {"name": "x"}, None):
            out.write(json.dumps({"type": "meta", "tools": bad, "at": "2026-01-01T00:00:00Z"}))
            out.write("\n")

    again = service_on(data, workspace, estimator)
    try:
        assert again.usage(sid).breakdown == before.breakdown
        assert again.tools(sid) == CLIENT_TOOLS
    finally:
        await again.close()
