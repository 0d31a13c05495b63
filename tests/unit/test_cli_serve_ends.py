"""`baton serve` on stdio ends, in one line and without a traceback, when its output
fails or it is interrupted, while its client still holds the input open."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

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
