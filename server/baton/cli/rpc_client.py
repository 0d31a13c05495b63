"""A minimal LSP client over a child process's stdio, for `baton demo` and scripts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

WAIT_SECONDS = 30.0
EXIT_WAIT_SECONDS = 5.0  # for the server's exit code, once its output has ended


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", "error"))
        self.error = error

    @property
    def code(self) -> str | None:
        data = self.error.get("data")
        return data.get("code") if isinstance(data, dict) else None


class ServerEnded(Exception):
    """The server's output ended (it exited, or closed it) before it answered."""


class StdioClient:
    """Starts `python -m baton serve` (or `command`) and speaks JSON-RPC with LSP framing."""

    def __init__(
        self, env: dict[str, str] | None = None, command: Sequence[str] | None = None
    ) -> None:
        self._env = env
        self._command = list(command or [sys.executable, "-m", "baton", "serve"])
        self._proc: asyncio.subprocess.Process | None = None
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.notifications: list[tuple[str, Any]] = []
        # told each notification as it arrives (the demo prints a wait as it begins)
        self.on_notification: Callable[[str, Any], None] | None = None
        self._changed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._ended: ServerEnded | None = None

    async def start(self) -> None:
        self._proc = await asyncio.create_subprocess_exec(
            *self._command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self._env,
        )
        self._reader = asyncio.create_task(self._read_loop())

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    async def request(self, method: str, params: Any = None) -> Any:
        """The result; RpcError for the server's error, ServerEnded at once when its
        output ends before it answers."""
        if self._ended is not None:
            raise self._ended
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        request_id = self._next_id
        self._pending[request_id] = future
        try:
            await self._send(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        return await asyncio.wait_for(future, WAIT_SECONDS)

    async def notify(self, method: str, params: Any = None) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def mark(self) -> int:
        return len(self.notifications)

    async def wait_for(
        self, method: str, match: Callable[[Any], bool] = lambda _: True, after: int = 0
    ) -> Any:
        """The first `method` notification since index `after` that matches."""

        async def poll() -> Any:
            while True:
                self._changed.clear()
                for name, params in self.notifications[after:]:
                    if name == method and match(params):
                        return params
                if self._ended is not None:
                    raise self._ended
                await self._changed.wait()

        return await asyncio.wait_for(poll(), WAIT_SECONDS)

    async def close(self) -> None:
        if self._proc is None:
            return
        with contextlib.suppress(Exception):
            await self.request("shutdown")
            await self.notify("exit")
            await asyncio.wait_for(self._proc.wait(), 5)
        if self._proc.returncode is None:
            self._proc.kill()
            await self._proc.wait()
        if self._reader is not None:
            self._reader.cancel()

    async def _send(self, message: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        if self._ended is not None:
            raise self._ended
        body = json.dumps(message).encode("utf-8")
        try:
            self._proc.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await self._proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise await self._input_closed() from None

    async def _input_closed(self) -> ServerEnded:
        """Why the server's input is closed: its end, once its output has ended too (it
        died), else that it stopped reading."""
        if self._reader is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._reader), EXIT_WAIT_SECONDS)
        return self._ended or ServerEnded("the server stopped reading its input")

    async def _read_loop(self) -> None:
        """Reads until the server's output ends, then fails what still waits on it: a
        request the server will never answer, a notification it will never send."""
        why = ""
        try:
            await self._read_messages()
        except (asyncio.IncompleteReadError, ValueError) as exc:  # cut or garbled
            why = f" ({type(exc).__name__}: {exc})"
        assert self._proc is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._proc.wait(), EXIT_WAIT_SECONDS)
        self._ended = ServerEnded(f"{_ending(self._proc.returncode)}{why}")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self._ended)
        self._pending.clear()
        self._changed.set()

    async def _read_messages(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        while True:
            length = 0
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            message = json.loads(await stdout.readexactly(length))
            await self._dispatch(message)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:  # a request from the server
            result: Any = None
            if message["method"] == "workspace/configuration":
                result = [{} for _ in message.get("params", {}).get("items", [])]
            await self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            return
        if "method" in message:
            self.notifications.append((message["method"], message.get("params")))
            self._changed.set()
            if self.on_notification is not None:
                self.on_notification(message["method"], message.get("params"))
            return
        future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(RpcError(message["error"]))
        else:
            future.set_result(message.get("result"))


def _ending(returncode: int | None) -> str:
    if returncode is None:
        return "the server closed its output"
    if returncode < 0:
        return f"the server was killed by signal {-returncode}"
    return f"the server exited with code {returncode}"
