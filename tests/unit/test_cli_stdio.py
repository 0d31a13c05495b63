"""`baton acp` and `baton serve` started on a standard input or output they cannot speak
over: one line on stderr and exit code 2, never a traceback or a process left waiting."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.cli.main import EXAMPLE_SESSION

REQUEST = '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}\n'


def started(argv: list[str], redirect: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`baton ARGV` run by a shell with `redirect` applied to it."""
    (tmp_path / "requests.jsonl").write_text(REQUEST)
    return subprocess.run(
        ["sh", "-c", f'exec "$0" -m baton "$@" {redirect}', sys.executable, *argv],
        cwd=tmp_path,
        input="",  # a pipe, as an editor gives (the test's own may be /dev/null)
        capture_output=True,
        text=True,
        timeout=60,  # a guard: the agent once waited for ever
        env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
    )


@pytest.mark.parametrize(
    ("redirect", "told"),
    [
        ("< requests.jsonl", "standard input is a regular file"),
        ("> replies.jsonl", "standard output is a regular file"),
        ("< /dev/null", "standard input is a device"),
        ("<&-", "standard input is closed"),
    ],
)
def test_acp_on_what_is_no_pipe_says_so_in_one_line(
    redirect: str, told: str, tmp_path: Path
) -> None:
    """Each ended in a traceback (ValueError: Pipe transport is for pipes/sockets only,
    AttributeError on a closed input); /dev/null's failed poll left the agent waiting."""
    done = started(["acp"], redirect, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"baton: acp speaks over pipes, as an editor starts it: {told}\n"), (
        done.stderr
    )
    assert done.stdout == "" and not (tmp_path / "data").exists()


def test_serve_on_a_closed_input_says_so_in_one_line(tmp_path: Path) -> None:
    """It ended in "AttributeError: 'NoneType' object has no attribute 'buffer'"."""
    done = started(["serve"], "<&-", tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "baton: standard input is closed: no request can be read\n"
    assert done.stdout == ""


@pytest.mark.parametrize("flag", ["--tcp", "--ws"])
def test_an_address_serve_cannot_listen_on_is_named_in_one_line(flag: str, tmp_path: Path) -> None:
    """It printed the token, then 'baton: Name or service not known' for a host that does
    not resolve, and "error while attempting to bind on address ('127.0.0.1', P): address
    already in use" for a port taken."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        for address, why in (
            ("no-such-host.invalid:8080", ""),  # the resolver's words vary
            (f"127.0.0.1:{port}", "Address already in use\n"),
            (str(port), "Address already in use\n"),
        ):
            done = started(["serve", flag, address], "", tmp_path)
            assert done.returncode == 2, done.stderr
            shown = address if ":" in address else f"127.0.0.1:{port}"
            assert done.stderr.startswith(f"baton: cannot listen on {shown}: {why}")
            assert done.stderr.count("\n") == 1, done.stderr
    finally:
        taken.close()


def test_an_ipv6_address_is_shown_as_a_url_holds_it(tmp_path: Path) -> None:
    """'listening on tcp://::1:PORT' could not be read back as a host and a port."""
    process = subprocess.Popen(
        [sys.executable, "-m", "baton", "serve", "--tcp", "[::1]:0"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
    )
    try:
        assert process.stderr is not None
        lines = [process.stderr.readline().decode() for _ in range(2)]
    finally:
        process.kill()
        process.wait()
    assert lines[0].startswith("baton: token ")
    assert re.fullmatch(r"baton: listening on tcp://\[::1\]:\d+\n", lines[1]), lines


def acp_run(requests: list[dict[str, Any]], data: Path) -> subprocess.CompletedProcess[str]:
    """`baton acp` on `data`, given `requests` (numbered from 1) and its input then closed."""
    lines = "".join(
        json.dumps({"jsonrpc": "2.0", "id": n, **request}) + "\n"
        for n, request in enumerate(requests, start=1)
    )
    return subprocess.run(
        [sys.executable, "-m", "baton", "acp"],
        input=lines,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "BATON_DATA_DIR": str(data)},
    )


def test_acp_on_a_data_dir_it_cannot_use_says_so_once_at_start(tmp_path: Path) -> None:
    """As `baton serve` does: it said nothing at start, then, at each session/new or list,
    "... acp-folders.json cannot be read ([Errno 20] Not a directory: '...')"."""
    data = tmp_path / "data"
    data.write_text("a file, not a folder\n")
    requests = [
        {"method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
        {"method": "session/list", "params": {}},
    ]
    done = acp_run(requests, data)
    assert done.returncode == 0, done.stderr
    assert (
        done.stderr
        == f"baton: data dir {data}: {data} is not a directory; sessions cannot be kept\n"
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[1]["error"]["data"]["code"] == "storage_error"
    assert answers[2]["result"] == {"sessions": []}


def test_acp_answers_a_list_read_before_its_input_ended(tmp_path: Path) -> None:
    """A client that writes its requests and closes its input (a script, a pipe) is
    answered every request but a prompt: a session/list reads the data dir in a worker
    thread, and the agent's end cancelled it unanswered."""
    requests = [
        {"method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}},
        {"method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
        {"method": "session/list", "params": {}},
    ]
    done = acp_run(requests, tmp_path / "data")
    assert done.returncode == 0, done.stderr
    answers = {
        found["id"]: found
        for found in map(json.loads, done.stdout.splitlines())
        if "id" in found and "method" not in found
    }
    made = answers[2]["result"]["sessionId"]
    listed = answers[3]["result"]["sessions"]
    assert [entry["sessionId"] for entry in listed] == [made]


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["usage", "--model", "gpt-nonesuch", "--json"], 0),
        (["compact", str(EXAMPLE_SESSION), "--json"], 0),
        (["usage", "no-such-file.jsonl", "--json"], 2),
    ],
)
def test_a_closed_error_stream_leaves_the_output_as_it_is(
    argv: list[str], code: int, tmp_path: Path
) -> None:
    """`baton ... --json 2>&-`: Python starts with no sys.stderr, and a print to None
    writes to stdout, so a warning or an error came out in the middle of the JSON; compact
    ended with exit code 1 and no output (its progress display asked None for a tty)."""
    done = started(argv, "2>&-", tmp_path)
    assert done.returncode == code
    if code == 0:
        json.loads(done.stdout)
    else:
        assert done.stdout == ""


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["usage", "--model", "gpt-nonesuch", "--json"], 0),
        (["compact", str(EXAMPLE_SESSION), "--json"], 0),
        (["usage", "no-such-file.jsonl", "--json"], 2),
        (["bogus"], 2),
    ],
)
def test_an_error_stream_that_cannot_be_written_leaves_the_exit_code_as_it_is(
    argv: list[str], code: int, tmp_path: Path
) -> None:
    """`baton ... 2>/dev/full`: a warning that could not be written failed a command that
    had done its work (exit code 1, or 120 from the last flush), and an error's exit code
    was 1 or 120 instead of 2. What would go there goes nowhere, as with `2>&-`."""
    done = started(argv, "2>/dev/full", tmp_path)
    assert done.returncode == code
    if code == 0:
        json.loads(done.stdout)
    else:
        assert done.stdout == ""


@pytest.mark.parametrize("command", ["show", "payload", "compact", "usage"])
def test_json_output_is_json_on_an_output_that_is_not_utf8(command: str, tmp_path: Path) -> None:
    """With an ASCII output (PYTHONIOENCODING=ascii, a C locale of old), a character the
    output cannot take was written as \\xe9 (the output's backslashreplace), no JSON escape:
    show, payload and compact --json printed what no JSON parser reads."""
    records = [json.loads(line) for line in EXAMPLE_SESSION.read_text().splitlines()]
    first = next(r for r in records if r.get("type") == "user")
    first["message"]["content"] = "Café naïve 日本語: " + str(first["message"]["content"])
    source = tmp_path / "unicode.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    done = subprocess.run(
        [sys.executable, "-m", "baton", command, str(source), "--json"],
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "ascii", "BATON_DATA_DIR": str(tmp_path / "d")},
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    if command in ("show", "payload"):
        assert "Café naïve 日本語" in json.dumps(printed, ensure_ascii=False)


@pytest.mark.parametrize("command", ["show", "usage"])
def test_a_report_prints_on_the_c_locale_without_utf8_mode(command: str, tmp_path: Path) -> None:
    """On the C locale with UTF-8 mode off, Python's output is ASCII with surrogateescape
    errors (not strict, so it was left as it was): the table's "…" and the usage's "·"
    ended `baton show` and `baton usage` in a UnicodeEncodeError traceback, exit code 1."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG")}
    locale = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "baton", command, str(EXAMPLE_SESSION)],
        capture_output=True,
        timeout=120,
        env={**env, **locale, "BATON_DATA_DIR": str(tmp_path / "d")},
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b"" and b"Fix expense report crash" in done.stdout


@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize(
    "argv",
    [["--version"], ["--help"], ["usage", "--help"], ["usage"], ["show", "--json"], ["demo"]],
)
def test_an_output_that_cannot_be_written_is_one_line_and_exit_code_2(
    argv: list[str], buffered: bool, tmp_path: Path
) -> None:
    """`baton --version > /dev/full`: --version and --help ended with exit code 0 (argparse
    drops the error of its write), and with Python's usual buffered output every command
    ended in an OSError traceback from its last flush, exit code 120."""
    env = {**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")}
    if buffered:
        env.pop("PYTHONUNBUFFERED", None)
    else:
        env["PYTHONUNBUFFERED"] = "1"
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "baton", *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            env=env,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr == "baton: standard output cannot be written: No space left on device\n"
