"""`baton serve` on stdio ends, in one line and without a traceback, when its output
fails or it is interrupted, while its client still holds the input open."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

from baton_testkit.fake_anthropic import FakeAnthropic

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}


def framed(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize("output", ["/dev/full", "a closed pipe"])
def test_serve_whose_output_cannot_be_written_ends_with_one_line(
    output: str, tmp_path: Path
) -> None:
    """The client's input left open, as an editor's is: on /dev/full each answer that
    failed was reported to the client, which failed again, some 180,000 lines of
    tracebacks, and the server went on reading; a pipe whose reader is gone logged each
    answer's traceback, and both ended with exit code 0 only when the input ended."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    sink = open("/dev/full", "wb") if output == "/dev/full" else os.fdopen(write_end, "wb")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "baton", "serve"],
        stdin=subprocess.PIPE,
        stdout=sink,
        stderr=subprocess.PIPE,
        env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
    )
    sink.close()
    if output == "/dev/full":
        os.close(write_end)
    assert process.stdin is not None and process.stderr is not None
    try:
        process.stdin.write(framed(INITIALIZE))
        process.stdin.flush()
        code = process.wait(timeout=60)  # a guard: it went on reading for ever
        told = process.stderr.read().decode()
    finally:
        process.kill()
        process.stdin.close()
    assert "Traceback" not in told, told[:2000]
    lines = told.splitlines()
    if output == "/dev/full":
        assert code == 2, told[:2000]
        assert len(lines) == 1 and lines[0].endswith(
            ": the output to the client cannot be written (No space left on device): shutting down"
        ), told[:2000]
    else:
        assert code == 0, told[:2000]
        assert len(lines) == 1 and lines[0].endswith(
            "the connection to the client is lost; shutting down"
        ), told[:2000]


def answer(stream: IO[bytes]) -> dict[str, object]:
    """The next message the server wrote."""
    length = None
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    assert length is not None, "the server ended before it answered"
    message: dict[str, object] = json.loads(stream.read(length))
    return message


def test_serve_interrupted_while_its_input_is_open_ends(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) in a terminal, or a client's interrupt, while the server waits for
    input: the server shut down, then waited for ever on the thread reading its input."""
    process = subprocess.Popen(
        [sys.executable, "-m", "baton", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(framed(INITIALIZE))
        process.stdin.flush()
        assert answer(process.stdout)["id"] == 1
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=60)  # a guard: it waited for ever
    finally:
        process.kill()
        process.stdin.close()
    assert process.stderr is not None
    told = process.stderr.read().decode()
    assert "Traceback" not in told, told[:2000]
    assert code == 0, told[:2000]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serve_stopped_mid_reply_keeps_what_arrived_as_shutdown_does(
    stop: signal.Signals, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Ctrl-C or SIGTERM (an editor, a service manager stopping the server) while a reply
    streamed: the text that had arrived, which the client had shown, was lost; a
    `shutdown` keeps it as an interrupted reply."""
    data = tmp_path / "data"
    gate = threading.Event()
    text = "Hello there, this reply is cut in the middle by the stop."
    fake_anthropic.reply(text, hold_after=6, gate=gate)
    process = subprocess.Popen(
        [sys.executable, "-m", "baton", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "BATON_DATA_DIR": str(data), "ANTHROPIC_API_KEY": "sk-test-stop"},
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    def request(msg_id: int, method: str, params: dict[str, object]) -> None:
        stdin.write(framed({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        stdin.flush()

    def result(msg_id: int | str) -> Any:
        """The answer to `msg_id`, or with "delta" the first streamed text of a reply."""
        while True:
            message = answer(stdout)
            if message.get("id") == msg_id and "method" not in message:
                return message["result"]
            if msg_id == "delta" and message.get("method") == "baton/session/delta":
                return message["params"]
            if "method" in message and "id" in message:  # the server asks: nothing to say
                stdin.write(framed({"jsonrpc": "2.0", "id": message["id"], "result": None}))
                stdin.flush()

    try:
        request(1, "initialize", {"capabilities": {}})
        result(1)
        request(2, "baton/session/create", {"title": "stopped"})
        sid = result(2)["sessionId"]
        request(3, "baton/session/send", {"sessionId": sid, "content": "hi"})
        result("delta")  # part of the reply streamed and was shown, the rest is held
        process.send_signal(stop)
        code = process.wait(timeout=60)  # a guard
    finally:
        gate.set()
        process.kill()
        stdin.close()
    assert process.stderr is not None
    told = process.stderr.read().decode()
    assert "Traceback" not in told, told[-2000:]
    assert code == 0, told[-2000:]
    records = [json.loads(line) for line in (data / "sessions" / f"{sid}.jsonl").open()]
    replies = [r["message"] for r in records if r.get("message", {}).get("role") == "assistant"]
    assert len(replies) == 1, records
    kept = replies[0]["content"][0]["text"]
    assert kept and text.startswith(kept) and kept != text


def test_serve_whose_input_cannot_be_read_says_which_in_one_line(tmp_path: Path) -> None:
    """`baton serve 0>file` (its input open for writing only): 'baton: Bad file
    descriptor', naming nothing."""
    (tmp_path / "in").write_text("")
    done = subprocess.run(
        ["sh", "-c", f'exec "$0" -m baton serve 0>"{tmp_path / "in"}"', sys.executable],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == "baton: standard input cannot be read: Bad file descriptor\n"
