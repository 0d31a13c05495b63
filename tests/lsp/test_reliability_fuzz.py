"""R3: a fuzzer of JSON-RPC traffic over a real server on stdio.

Frames (malformed headers, noise, invalid UTF-8, not JSON), envelopes (versions, ids,
methods of every type) and every param of every method, command and client notification
in the protocol table, with wrong types, sizes and nesting. The server must stay up and
answer every request that has a usable id, never with internal_error or a traceback.
Seeded; BATON_FUZZ_EXAMPLES sets the number of examples (default 120) for a longer run.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from lsp_harness import SERVER_COMMAND, server_env

from baton import protocol

EXAMPLES = int(os.environ.get("BATON_FUZZ_EXAMPLES", "120"))
ANSWER_SECONDS = 30.0
INTERNAL_ERROR = -32603
DEPTH_MARK = "@@deep@@"  # replaced in the JSON text by nesting json.dumps cannot write

STANDARD_REQUESTS = {
    "textDocument/hover": ["textDocument", "position"],
    "textDocument/codeAction": ["textDocument", "range", "context"],
    "workspace/executeCommand": ["command", "arguments"],
}
STANDARD_NOTIFICATIONS = {
    "textDocument/didOpen": ["textDocument"],
    "textDocument/didChange": ["textDocument", "contentChanges"],
    "textDocument/didClose": ["textDocument"],
    "workspace/didChangeConfiguration": ["settings"],
    "workspace/didChangeWorkspaceFolders": ["event"],
    "$/cancelRequest": ["id"],
}


def wire_fields(model: Any) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


REQUESTS = {r.method: wire_fields(r.params) for r in protocol.REQUEST_TABLE}
COMMANDS = {c.name: wire_fields(c.argument) for c in protocol.COMMAND_TABLE}
NOTIFICATIONS = {
    n.method: wire_fields(n.params) for n in protocol.NOTIFICATION_TABLE if n.sender == "client"
}


class Wire:
    """A blocking JSON-RPC peer over the server's pipes; a thread files every answer by id."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.answers: dict[Any, dict[str, Any]] = {}
        self.unidentified: list[dict[str, Any]] = []
        self.arrived: queue.Queue[None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = None
            while True:
                line = stdout.readline()
                if not line:
                    self.arrived.put(None)
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line == b"\r\n":
                    break
            assert length is not None
            message = json.loads(stdout.read(length))
            if "method" in message:
                continue  # a notification from the server
            key = json.dumps(message.get("id"))
            if message.get("id") is None:
                self.unidentified.append(message)
            else:
                self.answers[key] = message
            self.arrived.put(None)

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send_text(self, text: str) -> None:
        body = text.encode("utf-8", "surrogatepass")
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def answered(self, ids: list[Any]) -> list[dict[str, Any]]:
        """The answers to `ids`, waiting for them (fails after ANSWER_SECONDS)."""
        keys = [json.dumps(i) for i in ids]
        deadline = time.monotonic() + ANSWER_SECONDS
        while any(k not in self.answers for k in keys):
            left = deadline - time.monotonic()
            assert left > 0, f"unanswered: {[k for k in keys if k not in self.answers]}"
            assert self.process.poll() is None, "the server exited"
            with contextlib.suppress(queue.Empty):
                self.arrived.get(timeout=left)
        return [self.answers.pop(k) for k in keys]


# ---- strategies ----------------------------------------------------------------------------

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(["", "user", "assistant", "all", "up_to", "from", "range", "claude-code"]),
    st.builds(lambda n: "x" * n, st.sampled_from([1000, 20_000, 300_000])),
    st.sampled_from(["file:///etc/passwd", "baton:/sessions/x.md", "../../etc", "a\x00b"]),
    st.sampled_from(["\ud800", "a\udfffb"]),  # lone surrogates: valid JSON, not UTF-8
)
json_values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def deep(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


def field_value(pool: dict[str, list[Any]], name: str) -> st.SearchStrategy[Any]:
    """A value for `name`: a plausible one (a real id, a valid message) or anything."""
    plausible = pool.get(name, [])
    choices = [json_values, st.just(DEPTH_MARK)]
    if plausible:
        choices.insert(0, st.sampled_from(plausible))
    return st.one_of(*choices)


def params_for(pool: dict[str, list[Any]], fields: list[str]) -> st.SearchStrategy[Any]:
    named = st.fixed_dictionaries({}, optional={f: field_value(pool, f) for f in fields})
    extra = st.dictionaries(st.text(max_size=8), json_values, max_size=2)
    whole = st.builds(lambda a, b: {**b, **a}, named, extra)
    return st.one_of(whole, whole, whole, json_values)


def request_ids() -> st.SearchStrategy[Any]:
    return st.one_of(st.integers(min_value=-(2**40), max_value=2**40), st.text(max_size=10))


NOISE = [
    b"Content-Length: -1\r\n\r\n{}",
    b"Content-Length: 0x10\r\n\r\n{}",
    b"Content-Length: 99999999999999999999\r\n\r\n",
    b"Content-Length: 3\n\n{}x",
    b"Content-Type: a\r\n\r\n{}",
    b"\x00\xff\xfe garbage\r\n",
    b"\r\n\r\n",
]


@st.composite
def traffic(draw: st.DrawFn, pool: dict[str, list[Any]]) -> list[tuple[str, Any, Any]]:
    """A few messages: (kind, payload, the id an answer must carry or None)."""
    items: list[tuple[str, Any, Any]] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(
            st.sampled_from(
                ["request", "request", "request", "command", "notify", "envelope", "frame"]
            )
        )
        msg_id = draw(request_ids())
        if kind == "request":
            table = {**REQUESTS, **STANDARD_REQUESTS}
            method = draw(st.sampled_from(sorted(table)))
            params = draw(params_for(pool, table[method]))
            message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
            items.append(("json", message, msg_id))
        elif kind == "command":
            name = draw(st.sampled_from(sorted(COMMANDS)))
            args = draw(st.lists(params_for(pool, COMMANDS[name]), max_size=2))
            params = {"command": name, "arguments": args}
            message = {
                "jsonrpc": "2.0",
                "id": msg_id,
                "method": "workspace/executeCommand",
                "params": params,
            }
            items.append(("json", message, msg_id))
        elif kind == "notify":
            table = {**NOTIFICATIONS, **STANDARD_NOTIFICATIONS}
            method = draw(st.sampled_from(sorted(table)))
            params = draw(params_for(pool, table[method]))
            items.append(("json", {"jsonrpc": "2.0", "method": method, "params": params}, None))
        elif kind == "envelope":
            version = draw(st.sampled_from(["1.0", 2, None, "2.0 ", "2.0"]))
            bad_id = draw(st.one_of(request_ids(), json_values))
            method = draw(st.one_of(st.sampled_from(sorted(REQUESTS)), json_values))
            message = {"jsonrpc": version, "id": bad_id, "method": method, "params": {}}
            usable = isinstance(bad_id, int | str) and not isinstance(bad_id, bool)
            expected = bad_id if usable else None  # answered, as an error or not
            items.append(("json", message, expected))
        else:
            raw = draw(
                st.one_of(
                    st.sampled_from(NOISE),
                    st.binary(max_size=200).filter(lambda b: b"ength" not in b.lower()),
                    st.builds(
                        lambda b: b"Content-Length: %d\r\n\r\n" % len(b) + b, st.binary(max_size=60)
                    ),
                    st.just(b'Content-Length: 9\r\n\r\n{"a":"\xff"}'),
                )
            )
            items.append(("raw", raw, None))
    return items


def send(wire: Wire, kind: str, payload: Any, depth: int) -> None:
    if kind == "raw":
        wire.write(payload)
        return
    text = json.dumps(payload)
    wire.send_text(text.replace(json.dumps(DEPTH_MARK), deep(depth)))


def test_fuzzed_traffic_is_always_answered_never_internal_error(tmp_path: Path) -> None:
    process = subprocess.Popen(
        SERVER_COMMAND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env(tmp_path / "data"),
    )
    wire = Wire(process)
    counts = {"examples": 0, "messages": 0, "requests": 0}
    try:
        init = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {"capabilities": {}},
        }
        wire.send_text(json.dumps(init))
        wire.answered(["init"])
        wire.send_text(json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        pool = seed_pool(wire, tmp_path)

        @seed(20261201)
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(items=traffic(pool), depth=st.sampled_from([3, 70, 900, 2500]))
        def exchange(items: list[tuple[str, Any, Any]], depth: int) -> None:
            counts["examples"] += 1
            expected = []
            for kind, payload, msg_id in items:
                if msg_id is not None:
                    # ids are made unique per example, so that answers are told apart
                    msg_id = payload["id"] = f"{counts['messages']}:{msg_id}"
                    expected.append(msg_id)
                send(wire, kind, payload, depth)
                counts["messages"] += 1
            sync = f"sync-{counts['examples']}"
            wire.send_text(
                json.dumps(
                    {"jsonrpc": "2.0", "id": sync, "method": protocol.SESSION_LIST, "params": {}}
                )
            )
            answers = wire.answered([*expected, sync])
            counts["requests"] += len(answers)
            for answer in answers:
                text = json.dumps(answer)
                assert "Traceback" not in text and '.py"' not in text, text[:500]
                error = answer.get("error")
                assert error is None or error["code"] != INTERNAL_ERROR, text[:500]
            for answer in wire.unidentified:
                assert answer["error"]["code"] != INTERNAL_ERROR, answer
            wire.unidentified.clear()

        exchange()
        assert process.poll() is None, "the server died"
        wire.send_text(json.dumps({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}))
        wire.answered(["bye"])
        wire.send_text(json.dumps({"jsonrpc": "2.0", "method": "exit"}))
        assert process.wait(ANSWER_SECONDS) == 0
        print(
            f"R3: {counts['examples']} examples, {counts['messages']} messages, "
            f"{counts['requests']} answered requests"
        )
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def seed_pool(wire: Wire, tmp_path: Path) -> dict[str, list[Any]]:
    """Real sessions and messages, so that fuzzed params also reach past validation."""
    create = {"jsonrpc": "2.0", "id": "c", "method": protocol.SESSION_CREATE, "params": {}}
    wire.send_text(json.dumps(create))
    sid = wire.answered(["c"])[0]["result"]["sessionId"]
    messages = [
        {"role": "user", "content": f"question {n} " + "words " * 40}
        if n % 2 == 0
        else {"role": "assistant", "content": [{"type": "text", "text": f"answer {n}"}]}
        for n in range(8)
    ]
    append = {
        "jsonrpc": "2.0",
        "id": "a",
        "method": protocol.SESSION_APPEND,
        "params": {"sessionId": sid, "messages": messages},
    }
    wire.send_text(json.dumps(append))
    ids = wire.answered(["a"])[0]["result"]["messageIds"]
    doc = {"uri": (tmp_path / "w.py").as_uri(), "languageId": "python", "version": 1, "text": "x"}
    return {
        "sessionId": [sid, "s_nope"],
        "messageId": ids,
        "pivotMessageId": ids,
        "endMessageId": ids,
        "messages": [messages[:2], [{"role": "user", "content": [{"type": "image"}]}]],
        "direction": ["all", "up_to", "from", "range"],
        "textDocument": [doc, {"uri": protocol.session_uri(sid)}],
        "content": ["hello", [{"type": "text", "text": "hi"}]],
        "path": [str(tmp_path / "missing.jsonl"), "/dev/null", str(tmp_path)],
        "command": sorted(COMMANDS),
    }
