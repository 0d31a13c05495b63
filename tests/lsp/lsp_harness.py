"""A pytest-lsp client wired for Baton: raw JSON results, recorded notifications, waits."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, Union

from contract_check import ContractCheck
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from baton import protocol
from baton.lsp.dispatch.rpc import make_converter

SERVER_COMMAND = [sys.executable, "-m", "baton", "serve"]
VSCODE = "visual_studio_code"
NEOVIM = "neovim"
WAIT_SECONDS = 20.0  # an upper bound for a notification to arrive, never a pause

T = TypeVar("T")


class Recorder:
    """Every notification the server sent, and a way to wait for one that matches."""

    def __init__(self) -> None:
        self.received: list[tuple[str, Any]] = []
        self._changed = asyncio.Event()

    def record(self, method: str, params: Any) -> None:
        self.received.append((method, params))
        self._changed.set()

    def of(self, method: str) -> list[Any]:
        return [params for m, params in self.received if m == method]

    async def wait_for(self, found: Callable[[], T | None], timeout: float = WAIT_SECONDS) -> T:
        """Wait until `found()` returns something truthy; fail after `timeout`."""

        async def poll() -> T:
            while True:
                self._changed.clear()
                value = found()
                if value:
                    return value
                await self._changed.wait()

        return await asyncio.wait_for(poll(), timeout)

    async def notification(
        self, method: str, match: Callable[[Any], bool] = lambda _: True, after: int = 0
    ) -> Any:
        """The first `method` notification (from index `after` of `received`) that matches."""

        def find() -> Any:
            for name, params in self.received[after:]:
                if name == method and match(params):
                    return params if params is not None else True
            return None

        return await self.wait_for(find)

    def mark(self) -> int:
        return len(self.received)


def _structure_command_or_action(converter: Any) -> None:
    # lsprotocol's client side turns a CodeAction that carries a Command into a plain
    # Command; a CodeAction's `command` is an object, a Command's is a string.
    def hook(obj: Any, _: Any) -> Any:
        if isinstance(obj, dict) and not isinstance(obj.get("command"), str):
            return converter.structure(obj, types.CodeAction)
        return converter.structure(obj, types.Command)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], hook)  # noqa: UP007


class ClientProtocol(LanguageClientProtocol):
    """pytest-lsp's protocol, structuring only whole messages: pygls structures every JSON
    object that has a "jsonrpc" key, even one nested in a message's content. Every answer
    and notification goes past the contract check (docs/protocol.schema.json) first."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.contract = ContractCheck()

    def send_request(
        self, method: str, params: Any = None, callback: Any = None, msg_id: Any = None
    ) -> Any:
        msg_id = msg_id if msg_id is not None else str(uuid.uuid4())
        self.contract.request_sent(msg_id, method, params)
        return super().send_request(method, params, callback, msg_id)

    def structure_message(self, data: dict[str, Any]) -> Any:
        return data

    def handle_message(self, message: Any) -> None:
        self.contract.received(message)
        super().handle_message(super().structure_message(message))


def make_client(recorder: Recorder, configuration: dict[str, Any] | None = None) -> LanguageClient:
    client = LanguageClient(
        converter_factory=make_converter, configuration=configuration, protocol_cls=ClientProtocol
    )
    _structure_command_or_action(client.protocol._converter)
    default_publish = DEFAULT_CLIENT_FEATURES[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]
    default_progress = DEFAULT_CLIENT_FEATURES[types.PROGRESS]
    default_log = DEFAULT_CLIENT_FEATURES[types.WINDOW_LOG_MESSAGE]
    default_configuration = DEFAULT_CLIENT_FEATURES[types.WORKSPACE_CONFIGURATION]

    def publish(ls: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        default_publish(ls, params)
        recorder.record(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)

    def progress(ls: LanguageClient, params: types.ProgressParams) -> None:
        default_progress(ls, params)
        recorder.record(types.PROGRESS, params)

    def log_message(ls: LanguageClient, params: types.LogMessageParams) -> None:
        default_log(ls, params)
        recorder.record(types.WINDOW_LOG_MESSAGE, params)

    def show_message(ls: LanguageClient, params: types.ShowMessageParams) -> None:
        recorder.record(types.WINDOW_SHOW_MESSAGE, params)

    def configuration(ls: LanguageClient, params: types.ConfigurationParams) -> Any:
        answer = default_configuration(ls, params)
        recorder.record(types.WORKSPACE_CONFIGURATION, params)
        return answer

    features = {
        **DEFAULT_CLIENT_FEATURES,
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
        types.PROGRESS: progress,
        types.WINDOW_LOG_MESSAGE: log_message,
        types.WINDOW_SHOW_MESSAGE: show_message,
        types.WORKSPACE_CONFIGURATION: configuration,
    }
    register_lsp_features(client, features)
    notified = (protocol.USAGE_CHANGED, protocol.SESSION_CHANGED, protocol.SESSION_DELTA)
    for method in (*notified, protocol.AUTO_COMPACT):
        client.feature(method)(_recording(recorder, method))
    return client


def _recording(recorder: Recorder, method: str) -> Callable[[Any], None]:
    def handler(params):  # type: ignore[no-untyped-def]  # pygls inspects the signature
        recorder.record(method, params)

    return handler


@dataclass
class RpcError(Exception):
    code: int
    message: str
    data: Any

    @property
    def baton_code(self) -> str | None:
        return self.data.get("code") if isinstance(self.data, dict) else None


@dataclass
class Harness:
    """One server under test and the client talking to it."""

    client: LanguageClient
    recorder: Recorder
    workspace: Path
    data_dir: Path
    capabilities: types.ClientCapabilities
    initialize_result: types.InitializeResult | None = None
    process: asyncio.subprocess.Process | None = None
    opened: list[str] = field(default_factory=list)

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request; a standard LSP method's dict params become lsprotocol's type."""
        known = types.METHOD_TO_TYPES.get(method)
        if known is not None and isinstance(params, dict):
            params = self.client.protocol._converter.structure(params, known[2])
        try:
            return await self.client.protocol.send_request_async(method, params)
        except JsonRpcException as exc:
            raise RpcError(exc.code, exc.message, exc.data) from None

    async def error(self, method: str, params: Any = None) -> RpcError:
        """The error a request fails with (the test fails if it succeeds)."""
        try:
            result = await self.request(method, params)
        except RpcError as exc:
            return exc
        raise AssertionError(f"{method} succeeded unexpectedly: {result!r}")

    async def command(self, name: str, *arguments: Any) -> Any:
        return await self.request(
            types.WORKSPACE_EXECUTE_COMMAND, {"command": name, "arguments": list(arguments)}
        )

    async def create(self, **params: Any) -> dict[str, Any]:
        result: dict[str, Any] = await self.request(protocol.SESSION_CREATE, params)
        return result

    async def append(self, session_id: str, *messages: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.request(
            protocol.SESSION_APPEND, {"sessionId": session_id, "messages": list(messages)}
        )
        return result

    async def get(self, session_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.request(protocol.SESSION_GET, {"sessionId": session_id})
        return result

    async def render(self, session_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.request(
            protocol.SESSION_RENDER, {"sessionId": session_id}
        )
        return result

    async def diagnostics(
        self,
        session_id: str,
        match: Callable[[types.PublishDiagnosticsParams], bool] = lambda _: True,
    ) -> types.PublishDiagnosticsParams:
        """The first diagnostics published for the session document that match."""
        uri = protocol.session_uri(session_id)
        result: types.PublishDiagnosticsParams = await self.recorder.notification(
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lambda p: p.uri == uri and match(p)
        )
        return result

    async def latest_diagnostics(self, session_id: str) -> types.PublishDiagnosticsParams:
        """Diagnostics for the document's current version (waits until they arrive)."""
        version = (await self.render(session_id))["version"]
        return await self.diagnostics(session_id, lambda p: p.version == version)

    async def progress_begin(self, title: str | None = None, after: int = 0) -> Any:
        """The first `$/progress` begin (with `title`, when given) recorded after `after`."""
        return await self.recorder.notification(
            types.PROGRESS,
            lambda p: (
                p.value.get("kind") == "begin" and (title is None or p.value.get("title") == title)
            ),
            after=after,
        )

    async def progress_end(self, token: Any) -> Any:
        """The `$/progress` end of the progress `token`."""
        return await self.recorder.notification(
            types.PROGRESS, lambda p: p.token == token and p.value.get("kind") == "end"
        )

    async def close(self) -> None:
        if not self.client.stopped:
            await self.client.shutdown_session()
            await self.client.stop()
            if self.process is not None and self.process.returncode is None:
                await self.process.wait()
        self.assert_contract_kept()

    def assert_contract_kept(self) -> None:
        """Every answer and notification so far matched docs/protocol.schema.json."""
        contract: ContractCheck = self.client.protocol.contract
        violations, contract.violations = contract.violations, []
        if violations:
            raise AssertionError("the server broke its contract:\n" + "\n".join(violations))


def server_env(data_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "BATON_DATA_DIR": str(data_dir), **(extra or {})}
    env.pop("ANTHROPIC_API_KEY", None)
    if extra and "ANTHROPIC_API_KEY" in extra:
        env["ANTHROPIC_API_KEY"] = extra["ANTHROPIC_API_KEY"]
    return env


async def usage_where(
    lsp: Harness, sid: str, key: str, value: object, after: int = 0
) -> dict[str, Any]:
    """The usage of the first usageChanged for `sid` (from `after`) whose `key` is `value`."""
    found: dict[str, Any] = await lsp.recorder.notification(
        protocol.USAGE_CHANGED,
        lambda p: p["sessionId"] == sid and p["usage"][key] is value,
        after=after,
    )
    return found["usage"]


async def spawn_stdio(
    data_dir: Path, stderr: int = asyncio.subprocess.PIPE
) -> asyncio.subprocess.Process:
    """`baton serve` over stdio pipes (stderr as given), its data in `data_dir`."""
    return await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=server_env(data_dir),
    )


def initialize_params(
    workspace: Path,
    client_name: str,
    options: dict[str, Any] | None,
    capabilities: types.ClientCapabilities | None = None,
) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=capabilities or client_capabilities(client_name),
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="workspace")],
        initialization_options=options,
    )


async def start(
    tmp_path: Path,
    client_name: str = VSCODE,
    *,
    options: dict[str, Any] | None = None,
    configuration: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    capabilities: types.ClientCapabilities | None = None,
) -> Harness:
    """A server over stdio, initialized by a client with recorded capabilities."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    data_dir = tmp_path / "data"
    recorder = Recorder()
    client = make_client(recorder, configuration)
    await client.start_io(*SERVER_COMMAND, env=server_env(data_dir, env))
    params = initialize_params(workspace, client_name, options, capabilities)
    harness = Harness(client, recorder, workspace, data_dir, params.capabilities)
    harness.initialize_result = await client.initialize_session(params)
    return harness


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **extra}


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], **extra}


def conversation(turns: int, words: int = 60) -> list[dict[str, Any]]:
    """`turns` user/assistant exchanges with distinct, sizeable text."""
    messages: list[dict[str, Any]] = []
    for n in range(turns):
        filler = " ".join(f"word{n}x{i}" for i in range(words))
        messages.append(user(f"Question {n}: please explain part {n}. {filler}"))
        messages.append(assistant(f"Answer {n}: here is part {n}. {filler}"))
    return messages
