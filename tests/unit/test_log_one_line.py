"""A log record is one line: what it quotes (a file name may hold a line break or an
escape sequence) has its control characters escaped, as the command line's errors do."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from baton.cli.common import EXAMPLE_SESSION

NAME = "da\nta\x1b[31m"  # a line break, and an escape sequence for a terminal
SHOWN = "da\\nta\\x1b[31m"
RECORD = {  # how each record of the command's log begins
    "show": r"baton: ",
    "acp": r"baton: ",
    "serve": r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ ",
}


def baton(*args: str, data_dir: Path, given: bytes = b"") -> str:
    """The stderr of `baton args`, run to its end."""
    done = subprocess.run(
        [sys.executable, "-m", "baton", *args],
        input=given,
        capture_output=True,
        timeout=60,
        env={**os.environ, "BATON_DATA_DIR": str(data_dir)},
    )
    assert done.returncode == 0, done.stderr
    return done.stderr.decode()


def framed(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def told(command: str, tmp_path: Path) -> str:
    if command == "show":  # a transcript named NAME whose header line is lost
        data = tmp_path / "data"
        baton("import", str(EXAMPLE_SESSION), data_dir=data)
        (transcript,) = (data / "sessions").glob("*.jsonl")
        damaged = tmp_path / f"{NAME}.jsonl"
        damaged.write_bytes(transcript.read_bytes().split(b"\n", 1)[1])
        return baton("show", str(damaged), "--json", data_dir=data)
    # a data dir named NAME that cannot be made: its parent is a file
    (tmp_path / "file").write_text("")
    data = tmp_path / "file" / NAME
    if command == "acp":
        start = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        return baton("acp", data_dir=data, given=(json.dumps(start) + "\n").encode())
    start = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    listed = {"jsonrpc": "2.0", "id": 2, "method": "baton/session/list", "params": {}}
    return baton("serve", data_dir=data, given=framed(start) + framed(listed))


@pytest.mark.parametrize("command", ["show", "serve", "acp"])
def test_a_log_record_quoting_a_name_with_a_line_break_is_one_line(
    command: str, tmp_path: Path
) -> None:
    """'show' of a transcript named 'da<LF>ta.jsonl' whose header is lost logged
    'baton: da' and 'ta.jsonl: the transcript has no valid header line; ...' on two lines,
    as serve and acp did a data dir's problem, and the escape sequence reached the
    terminal as it was."""
    err = told(command, tmp_path)
    assert SHOWN in err, err
    lines = err.splitlines()
    assert lines and all(re.match(RECORD[command], line) for line in lines), err
    assert "\x1b" not in err
