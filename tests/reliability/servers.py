"""Real Baton servers for the crash suites, started by the warm launcher, and a plain
JSON-RPC client over their pipes that can pipeline requests and read what a killed server
managed to answer."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

LAUNCHER = Path(__file__).with_name("warm_launcher.py")
WAIT_SECONDS = 60.0  # an upper bound for an answer on a loaded machine, never a pause
OPTIONS = {  # offline and predictable: the extractive summarizer, no auto-compact
    "summarizer": "extractive",
    "autoCompact": {"enabled": False},
    "keepWindow": {"minTokens": 0, "minTextMessages": 2, "maxTokens": 400},
}


def long_run(config: Any) -> bool:
    """`--long` (or BATON_LONG=1): hundreds of iterations instead of dozens."""
    return bool(config.getoption("--long", default=False)) or os.environ.get("BATON_LONG") == "1"


def seed() -> int:
    """BATON_SEED replays one run exactly; the default is fixed so CI is repeatable."""
    return int(os.environ.get("BATON_SEED", "20261201"))


class Launcher:
    """One warm launcher process; `spawn` forks a server from it."""

    def __init__(self, workdir: Path) -> None:
        socket_path = workdir / "launcher.sock"
        self.process = subprocess.Popen(
            [sys.executable, str(LAUNCHER), str(socket_path)],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == b"ready", "the launcher did not start"
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.connect(str(socket_path))
        self.reader = self.socket.makefile("rb")
        self.workdir = workdir
        self.spawned = 0

    def spawn(self, data_dir: Path, workspace: Path | None = None) -> Server:
        to_server, from_client = os.pipe()
        to_client, from_server = os.pipe()
        self.spawned += 1
        log = self.workdir / f"server-{self.spawned}.log"
        log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        env = {"BATON_DATA_DIR": str(data_dir)}
        socket.send_fds(
            self.socket, [json.dumps(env).encode() + b"\n"], [to_server, from_server, log_fd]
        )
        pid = json.loads(self.reader.readline())["pid"]
        for fd in (to_server, from_server, log_fd):
            os.close(fd)
        server = Server(pid, from_client, to_client, log)
        server.initialize(workspace or self.workdir)
        return server

    def close(self) -> None:
        self.reader.close()
        self.socket.close()
        self.process.wait(timeout=WAIT_SECONDS)


class ServerDied(Exception):
    """The server closed its output (it was killed, or it exited)."""


class Server:
    """A JSON-RPC peer on one server's stdin / stdout."""

    def __init__(self, pid: int, stdin: int, stdout: int, log: Path) -> None:
        self.pid = pid
        self._in = stdin
        self._out = stdout
        os.set_blocking(stdout, False)
        self._buffer = b""
        self._next_id = 0
        self.answers: dict[int, dict[str, Any]] = {}
        self.log = log
        self.alive = True

    # ---- writing -------------------------------------------------------------------------

    def send(self, method: str, params: Any = None) -> int:
        self._next_id += 1
        self._write({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def notify(self, method: str, params: Any = None) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        os.write(self._in, b"Content-Length: %d\r\n\r\n" % len(body) + body)

    # ---- reading -------------------------------------------------------------------------

    def request(self, method: str, params: Any = None) -> Any:
        """Send and wait for the answer; an error answer raises RpcError."""
        return result_of(self.wait(self.send(method, params)))

    def wait(self, request_id: int) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_SECONDS
        while request_id not in self.answers:
            if not self._read(deadline - time.monotonic()):
                raise ServerDied(f"no answer to request {request_id}; log:\n{self.log_tail()}")
        return self.answers[request_id]

    def wait_for_answers(self, count: int) -> None:
        """Until `count` requests have been answered (whatever they were)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while len(self.answers) < count:
            if not self._read(deadline - time.monotonic()):
                raise ServerDied(f"only {len(self.answers)} answers; log:\n{self.log_tail()}")

    def drain(self) -> None:
        """Read everything a dead server wrote before it died."""
        deadline = time.monotonic() + WAIT_SECONDS
        while self._read(deadline - time.monotonic()):
            pass

    def _read(self, timeout: float) -> bool:
        """One chunk of output, parsed into answers; False once the output is closed."""
        if timeout <= 0:
            raise TimeoutError(f"the server did not answer in time; log:\n{self.log_tail()}")
        ready, _, _ = select.select([self._out], [], [], timeout)
        if not ready:
            raise TimeoutError(f"the server did not answer in time; log:\n{self.log_tail()}")
        chunk = os.read(self._out, 1 << 16)
        if not chunk:
            return False
        self._buffer += chunk
        while True:
            header, sep, rest = self._buffer.partition(b"\r\n\r\n")
            if not sep:
                break
            length = next(
                int(line.split(b":")[1])
                for line in header.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            if len(rest) < length:
                break
            message = json.loads(rest[:length])
            self._buffer = rest[length:]
            if "id" in message and "method" not in message and isinstance(message["id"], int):
                self.answers[message["id"]] = message
        return True

    # ---- life ----------------------------------------------------------------------------

    def initialize(self, workspace: Path) -> None:
        self.request(
            "initialize",
            {
                "capabilities": {},
                "rootUri": workspace.as_uri(),
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "workspace"}],
                "initializationOptions": OPTIONS,
            },
        )
        self.notify("initialized", {})

    def kill(self) -> None:
        """SIGKILL, then read what it answered before it died."""
        os.kill(self.pid, signal.SIGKILL)
        self.alive = False
        self.drain()
        self.close_pipes()

    def stop(self) -> None:
        """A clean shutdown and exit."""
        if not self.alive:
            return
        self.request("shutdown")
        self.notify("exit")
        self.alive = False
        self.drain()
        self.close_pipes()

    def close_pipes(self) -> None:
        for fd in (self._in, self._out):
            with suppress(OSError):
                os.close(fd)

    def log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error
        data = error.get("data")
        self.code = data.get("code") if isinstance(data, dict) else None


def result_of(answer: dict[str, Any]) -> Any:
    if "error" in answer:
        raise RpcError(answer["error"])
    return answer["result"]


@contextmanager
def launcher(workdir: Path) -> Iterator[Launcher]:
    started = Launcher(workdir)
    try:
        yield started
    finally:
        started.close()
