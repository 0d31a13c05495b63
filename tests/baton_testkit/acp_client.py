"""Drives `baton acp` as a subprocess with the Python SDK's client side: a recording client
(every update, typed and raw), scripted permission answers, and a client's files."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

FAKE_KEY = "sk-ant-test-SECRET-123"
WAIT = 20.0  # an upper bound for an update to arrive, never a pause
AGENT = [sys.executable, "-m", "baton", "acp"]


@dataclass
class Recorder:
    """The client: records every `session/update` (raw, with its arrival time), answers
    permission requests as `permission` says (None: never), serves `files`."""

    permission: str | None = "allowOnce"
    files: dict[str, str] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)
    raw: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    answers_without_id: list[dict[str, Any]] = field(default_factory=list)  # id null: errors
    invalid_requests: list[dict[str, Any]] = field(default_factory=list)  # -32600 answers
    permission_requests: list[dict[str, Any]] = field(default_factory=list)
    # each answer to a request of the client's, as (how many updates came before it, the
    # request's method): what the agent said before answering, and what after
    answered: list[tuple[int, str]] = field(default_factory=list)
    _asked: dict[Any, str] = field(default_factory=dict)  # request id -> method
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction == StreamDirection.OUTGOING and "method" in message:
            self._asked[message.get("id")] = message["method"]
        elif event.direction == StreamDirection.INCOMING and "method" not in message:
            method = self._asked.pop(message.get("id"), None)
            if method is not None:
                self.answered.append((len(self.raw), method))
        if (
            event.direction == StreamDirection.INCOMING
            and message.get("method") == "session/update"
        ):
            self.raw.append((time.time(), message["params"]))
            self._changed.set()
        elif event.direction == StreamDirection.INCOMING and message.get("id", 0) is None:
            self.answers_without_id.append(message)
            if message.get("error", {}).get("code") == -32600:
                self.invalid_requests.append(message)
            self._changed.set()
        elif (
            event.direction == StreamDirection.INCOMING
            and message.get("error", {}).get("code") == -32600
        ):
            self.invalid_requests.append(message)
            self._changed.set()

    # ---- the Client protocol -----------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None  # read from `raw`: the typed models drop what the SDK does not know

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append(
            {"sessionId": session_id, "toolCall": tool_call, "options": options}
        )
        if self.permission is None:
            await asyncio.Event().wait()  # a client that never answers
        if self.permission == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        chosen = AllowedOutcome(outcome="selected", option_id=self.permission or "")
        return RequestPermissionResponse(outcome=chosen)

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        if path in self.files:
            return ReadTextFileResponse(content=self.files[path])
        return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        self.written[path] = content
        self.files[path] = content
        return WriteTextFileResponse()

    # ---- reading what arrived ------------------------------------------------------------

    def updates(self, session_id: str | None = None, kind: str | None = None) -> list[dict]:
        return [
            p["update"]
            for _, p in self.raw
            if (session_id is None or p["sessionId"] == session_id)
            and (kind is None or p["update"].get("sessionUpdate") == kind)
        ]

    async def until(
        self, check: Callable[[], Any], timeout: float = WAIT, what: str = "an update"
    ) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            found = check()
            if found:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {what} within {timeout} s: {self.raw[-5:]}")
            self._changed.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)


@dataclass
class Agent:
    conn: ClientSideConnection
    recorder: Recorder
    process: asyncio.subprocess.Process
    workspace: Path
    data_dir: Path
    init: dict[str, Any]

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """A raw request (what a client the SDK's models cannot express sends)."""
        return await self.conn._conn.send_request(method, params)

    async def new(self) -> str:
        return (await self.conn.new_session(cwd=str(self.workspace))).session_id

    async def say(self, session_id: str, text: str) -> Any:
        return await self.conn.prompt(session_id=session_id, prompt=[text_block(text)])


def agent_env(data_dir: Path, base_url: str, key: bool = True) -> dict[str, str]:
    env = {**os.environ, "BATON_DATA_DIR": str(data_dir), "ANTHROPIC_BASE_URL": base_url}
    env.pop("ANTHROPIC_API_KEY", None)
    if key:
        env["ANTHROPIC_API_KEY"] = FAKE_KEY
    return env


@asynccontextmanager
async def running_agent(
    tmp_path: Path,
    base_url: str,
    *,
    key: bool = True,
    compaction: bool = True,
    fs: bool = True,
    recorder: Recorder | None = None,
    name: str = "agent",
    settings: dict[str, Any] | None = None,
    client_info: dict[str, Any] | None = None,
) -> AsyncIterator[Agent]:
    """`baton acp` on the data dir `tmp_path/data` (with `settings` as its --settings
    file), initialized by a client that declares `session.compaction` (unless
    `compaction` is False) and the fs methods, and names itself with `client_info`."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    data_dir = tmp_path / "data"
    recorder = recorder or Recorder()
    command = list(AGENT)
    if settings is not None:
        path = tmp_path / f"{name}-settings.json"
        path.write_text(json.dumps(settings), encoding="utf-8")
        command += ["--settings", str(path)]
    with open(tmp_path / f"{name}.stderr", "ab") as stderr:
        async with spawn_agent_process(
            recorder,
            *command,
            env=agent_env(data_dir, base_url, key),
            # a loaded machine may take more than the SDK's 2 s to exit: wait, then check
            transport_kwargs={"stderr": stderr, "shutdown_timeout": WAIT},
            observers=[recorder.observe],
            use_unstable_protocol=True,
        ) as (conn, process):
            capabilities: dict[str, Any] = {
                "fs": {"readTextFile": fs, "writeTextFile": fs},
                "terminal": False,
            }
            if compaction:
                capabilities["session"] = {"compaction": {}}
            params: dict[str, Any] = {"protocolVersion": 1, "clientCapabilities": capabilities}
            if client_info is not None:
                params["clientInfo"] = client_info
            init = await conn._conn.send_request("initialize", params)
            agent = Agent(conn, recorder, process, workspace, data_dir, init)
            yield agent
    # closing its stdin ends the agent by itself (the SDK terminates it only after WAIT)
    assert agent.process.returncode == 0, f"baton acp exited {agent.process.returncode}"
