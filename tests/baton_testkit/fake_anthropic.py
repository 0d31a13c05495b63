"""A fake Anthropic Messages API on 127.0.0.1: scripted replies, real SSE, every request recorded.

Usage (the `fake_anthropic` fixture in conftest.py does the first two lines):

    fake = FakeAnthropic().start()          # real HTTP server on an ephemeral port
    os.environ["ANTHROPIC_BASE_URL"] = fake.base_url
    fake.reply("Hello", usage={"input_tokens": 1200, "output_tokens": 5})
    fake.reply(tool_use_block("Read", {"file_path": "a.py"}), stop_reason="tool_use")
    fake.error(529, "overloaded_error", "Overloaded", retry_after="0.01")
    fake.prompt_too_long(actual=210_000, limit=200_000)
    ...
    fake.requests[0].body["messages"]       # what the client sent
    fake.close()

Scripted responses are served in order to POST /v1/messages (streaming or not, as the
request asks); when the queue is empty the fake answers with `default_text`. A script can
cut the stream after N events (`cut_after`), hold it after N events until a
`threading.Event` is set (`hold_after` + `gate`; `held` tells the test it got there), pace
its events (`event_delay`, for demos), or send an SSE `error` event mid-stream.
The server runs in a daemon thread, so it serves sync tests, async tests and server
subprocesses (through `base_url`) alike.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from baton_testkit import fake_compaction
from baton_testkit.fake_cache import PromptCache
from baton_testkit.fake_thinking import FakeThinking

DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_MODELS: dict[str, dict[str, int]] = {
    "claude-sonnet-4-5": {"max_input_tokens": 200_000, "max_tokens": 64_000},
    "claude-opus-4-1": {"max_input_tokens": 200_000, "max_tokens": 32_000},
    "claude-haiku-4-5": {"max_input_tokens": 200_000, "max_tokens": 64_000},
}
GATE_TIMEOUT = 30.0  # a held stream never outlives a forgotten gate by more than this


# ---- content blocks as the API returns them ----------------------------------------------


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(name: str, input: dict[str, Any], id: str | None = None) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": id or f"toolu_{secrets.token_hex(8)}",
        "name": name,
        "input": input,
    }


def cut_tool_use_block(name: str, partial_json: str, id: str | None = None) -> dict[str, Any]:
    """A tool_use whose input stops where the reply hit max_tokens: the stream sends
    `partial_json` as its input's text (the API ends the block there)."""
    return {**tool_use_block(name, {}, id), "partial_json": partial_json}


def thinking_block(thinking: str, signature: str = "sig-fake") -> dict[str, Any]:
    return {"type": "thinking", "thinking": thinking, "signature": signature}


# ---- scripts -----------------------------------------------------------------------------


@dataclass
class ScriptedReply:
    """One successful Messages API response."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    usage: dict[str, int] = field(default_factory=dict)
    model: str | None = None
    message_id: str | None = None
    chunk_chars: int = 8  # text / JSON is streamed in pieces of this size
    cut_after: int | None = None  # drop the connection after this many SSE events
    cut_clean: bool = False  # end the body properly instead (a stream that just stops)
    stream_error: tuple[str, str] | None = None  # (type, message) sent at cut_after instead
    hold_after: int | None = None  # wait for `gate` before every event past this many
    gate: threading.Event | None = None
    held: threading.Event = field(default_factory=threading.Event)  # set once it waits
    event_delay: float = 0.0  # seconds between events, for demos (tests use `gate`)
    no_usage: bool = False  # message_start and message_delta carry no usage (a proxy's)


@dataclass
class ScriptedError:
    """An HTTP error in the API's JSON error shape."""

    status: int
    type: str
    message: str
    retry_after: str | None = None
    retry_after_ms: str | None = None


Script = ScriptedReply | ScriptedError


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any
    at: float  # time.monotonic() when it arrived

    @property
    def api_key(self) -> str | None:
        """The credential the client sent, whichever header carried it."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") if auth else None


class FakeAnthropic:
    """The fake server. Thread-safe; use as a context manager or call start()/close()."""

    def __init__(self, default_text: str = "OK") -> None:
        self.default_text = default_text
        self.models: dict[str, dict[str, int]] = {k: dict(v) for k, v in DEFAULT_MODELS.items()}
        self.display_names: dict[str, str] = {}  # a model id -> the name the list gives
        self.models_error: tuple[int, str, str] | None = None  # GET /v1/models fails so
        self.models_retry_after: str | None = None  # the retry-after that error carries
        self.model_errors: deque[ScriptedError] = deque()  # GET /v1/models/{id} answers first
        self.count_tokens_result: int | None = None  # None: about a token per 4 body chars
        self.count_tokens_errors: deque[ScriptedError] = deque()  # count_tokens answers first
        self.echo_key = False  # error texts quote the key sent (a misconfigured proxy)
        self.compaction = fake_compaction.FakeCompaction()  # compaction on demand
        self.prompt_cache: PromptCache | None = None  # usage from a simulated prompt cache
        self.requests: list[RecordedRequest] = []
        # the API refuses a body over 32 MB, whatever its tokens (413 request_too_large)
        self.max_body_bytes = 32 * 1024 * 1024
        self.thinking = FakeThinking()  # thinking blocks served and the checks of them
        self._queue: deque[Script] = deque()
        self._lock = threading.Lock()
        self._gates: list[threading.Event] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        for gate in self._gates:
            gate.set()  # let held streams finish so their threads end
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropic:
        return self.start() if self._server is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # ---- scripting -----------------------------------------------------------------------

    def add(self, *scripts: Script) -> None:
        with self._lock:
            for script in scripts:
                if isinstance(script, ScriptedReply) and script.gate is not None:
                    self._gates.append(script.gate)
                self._queue.append(script)

    def reply(self, *content: str | dict[str, Any], **options: Any) -> ScriptedReply:
        """Queue a reply; strings become text blocks. Options are ScriptedReply's fields."""
        blocks = [text_block(c) if isinstance(c, str) else c for c in content]
        if "stop_reason" not in options and any(b["type"] == "tool_use" for b in blocks):
            options["stop_reason"] = "tool_use"
        script = ScriptedReply(content=blocks, **options)
        self.add(script)
        return script

    def error(
        self,
        status: int,
        type: str,
        message: str,
        *,
        retry_after: str | None = None,
        retry_after_ms: str | None = None,
        times: int = 1,
    ) -> None:
        for _ in range(times):
            self.add(ScriptedError(status, type, message, retry_after, retry_after_ms))

    def prompt_too_long(self, actual: int, limit: int, *, status: int = 400) -> None:
        self.error(
            status,
            "invalid_request_error",
            f"prompt is too long: {actual} tokens > {limit} maximum",
        )

    def clear(self) -> None:
        """Drop every script not yet used."""
        with self._lock:
            self._queue.clear()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    # ---- serving (called from handler threads) -------------------------------------------

    def _next(self) -> Script:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return ScriptedReply(content=[text_block(self.default_text)])

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)


def stream_events(reply: ScriptedReply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The SSE events the real API sends for `reply`, in the real order."""
    usage = _full_usage(reply)
    start_usage = {**usage, "output_tokens": min(usage["output_tokens"], 1)}
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": reply.message_id or _message_id(),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": start_usage,
            },
        },
    )
    yield "ping", {"type": "ping"}
    size = max(1, reply.chunk_chars)
    for index, block in enumerate(reply.content):
        kind = block["type"]
        if kind == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"], size)]
        elif kind == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = block.get("partial_json") or json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(raw, size)]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"], size)
            ]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:  # redacted_thinking and anything else arrive whole
            start, deltas = block, []
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        for delta in deltas:
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _without_usage(events: Iterator[tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, Any]]:
    for name, data in events:
        if name == "message_start":
            data = {**data, "message": {k: v for k, v in data["message"].items() if k != "usage"}}
        elif name == "message_delta":
            data = {k: v for k, v in data.items() if k != "usage"}
        yield name, data


def _full_usage(reply: ScriptedReply) -> dict[str, int]:
    base = {
        "input_tokens": 10,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    return {**base, **reply.usage}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _message_id() -> str:
    return f"msg_fake_{secrets.token_hex(8)}"


REQUEST_TOO_LARGE = (
    "Request exceeds the maximum allowed number of bytes. The maximum request size is "
    "32 MB for standard API requests."
)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropic
    protocol_version = "HTTP/1.1"
    # each SSE event leaves at once, as from the real API: without TCP_NODELAY, Nagle's
    # algorithm and the client's delayed ACK hold a small write back ~40 ms now and then
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read records
        pass

    def _read_body(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _record(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fake._record(RecordedRequest(self.command, self.path, headers, body, time.monotonic()))

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_fake_{secrets.token_hex(6)}")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self, status: int, type: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        if self.fake.echo_key:
            sent = {k.lower(): v for k, v in self.headers.items()}
            key = sent.get("x-api-key") or sent.get("authorization", "")
            message = f"{message} (request key: {key})"
        self._json(status, {"type": "error", "error": {"type": type, "message": message}}, headers)

    def do_GET(self) -> None:
        self._record(None)
        path = self.path.split("?")[0]
        if path in ("/v1/models", "/v1/models/"):
            self._model_list()
            return
        if path.startswith("/v1/models/"):
            model_id = path.removeprefix("/v1/models/")
            with self.fake._lock:
                failed = self.fake.model_errors.popleft() if self.fake.model_errors else None
            if failed is not None:
                after = {"retry-after": failed.retry_after} if failed.retry_after else None
                self._error(failed.status, failed.type, failed.message, after)
                return
            limits = self.fake.models.get(model_id) or self.fake.compaction.limits(model_id)
            if limits is None:
                self._error(404, "not_found_error", f"model: {model_id}")
                return
            self._json(
                200,
                {
                    "type": "model",
                    "id": model_id,
                    "display_name": model_id,
                    "created_at": "2025-01-01T00:00:00Z",
                    **limits,
                    **self.fake.compaction.model_fields(
                        model_id, self.headers.get("anthropic-beta", "")
                    ),
                },
            )
            return
        self._error(404, "not_found_error", f"no route {path}")

    def _model_list(self) -> None:
        """`GET /v1/models`: the fake's models a page at a time (`limit`, `after_id`), or
        the error `models_error` scripts."""
        if self.fake.models_error is not None:
            status, kind, message = self.fake.models_error
            after = self.fake.models_retry_after
            self._error(status, kind, message, {"retry-after": after} if after else None)
            return
        query = parse_qs(urlsplit(self.path).query)
        limit = int(query.get("limit", ["20"])[0])
        ids = list(self.fake.models)
        after = query.get("after_id", [None])[0]
        start = ids.index(after) + 1 if after in ids else 0
        page = ids[start : start + limit]
        data = [
            {
                "type": "model",
                "id": model_id,
                "display_name": self.fake.display_names.get(model_id, model_id),
                "created_at": "2025-01-01T00:00:00Z",
                **self.fake.models[model_id],
            }
            for model_id in page
        ]
        more = start + limit < len(ids)
        first, last = (page[0], page[-1]) if page else (None, None)
        self._json(200, {"data": data, "has_more": more, "first_id": first, "last_id": last})

    def do_POST(self) -> None:
        body = self._read_body()
        self._record(body)
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            with self.fake._lock:
                errors = self.fake.count_tokens_errors
                failed = errors.popleft() if errors else None
            if failed is not None:
                after = {"retry-after": failed.retry_after} if failed.retry_after else None
                self._error(failed.status, failed.type, failed.message, after)
                return
            tokens = self.fake.count_tokens_result
            if tokens is None:
                tokens = max(1, len(json.dumps(body)) // 4)
            self._json(200, {"input_tokens": tokens})
            return
        if path != "/v1/messages":
            self._error(404, "not_found_error", f"no route {path}")
            return
        if int(self.headers.get("content-length") or 0) > self.fake.max_body_bytes:
            self._error(413, "request_too_large", REQUEST_TOO_LARGE)
            return
        if fake_compaction.serve(self, body):  # compaction blocks and compaction requests
            return
        if isinstance(body, dict):
            headers = {k.lower(): v for k, v in self.headers.items()}
            problem = self.fake.thinking.check(body, headers)
            if problem is not None:  # refused before a script is used, as the API would
                self._error(400, "invalid_request_error", problem.message)
                return
        script = self.fake._next()
        if isinstance(script, ScriptedError):
            headers = {}
            if script.retry_after is not None:
                headers["retry-after"] = script.retry_after
            if script.retry_after_ms is not None:
                headers["retry-after-ms"] = script.retry_after_ms
            self._error(script.status, script.type, script.message, headers)
            return
        model = script.model or (body or {}).get("model") or DEFAULT_MODEL
        cache = self.fake.prompt_cache
        if cache is not None and isinstance(body, dict) and isinstance(script, ScriptedReply):
            script = replace(script, usage={**cache.usage(body, script.content), **script.usage})
        if isinstance(body, dict):
            script = replace(script, content=self.fake.thinking.serve(body, script.content))
        if isinstance(body, dict) and body.get("stream"):
            self._stream(script, model)
        else:
            self._whole(script, model)

    def _whole(self, reply: ScriptedReply, model: str) -> None:
        usage = _full_usage(reply)
        self._json(
            200,
            {
                "id": reply.message_id or _message_id(),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [
                    {k: v for k, v in block.items() if k != "partial_json"}
                    for block in reply.content
                ],
                "stop_reason": reply.stop_reason,
                "stop_sequence": None,
                "usage": usage,
            },
        )

    def _stream(self, reply: ScriptedReply, model: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", f"req_fake_{secrets.token_hex(6)}")
        self.end_headers()
        try:
            events = stream_events(reply, model)
            if reply.no_usage:
                events = _without_usage(events)
            for count, (name, data) in enumerate(events):
                if reply.cut_after is not None and count >= reply.cut_after:
                    if reply.stream_error is not None:
                        kind, message = reply.stream_error
                        self._chunk(
                            "error", {"type": "error", "error": {"type": kind, "message": message}}
                        )
                        self._end()
                    elif reply.cut_clean:
                        self._end()
                    self.close_connection = True
                    return
                if reply.hold_after is not None and count >= reply.hold_after:
                    reply.held.set()
                    if reply.gate is not None:
                        reply.gate.wait(GATE_TIMEOUT)
                if reply.event_delay and count:
                    time.sleep(reply.event_delay)
                self._chunk(name, data)
            self._end()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (cancelled): fine

    def _chunk(self, name: str, data: dict[str, Any]) -> None:
        payload = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
        self.wfile.flush()

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


# ---- held replies (summaries written in the background) ---------------------------------


def held_reply(fake: FakeAnthropic, text: str, after: int = 3) -> ScriptedReply:
    """Queue a reply that streams `after` events, then waits until its `gate` is set; its
    `held` event tells the test the request is in flight. For work that must still be
    running while the test does something else (a summary written ahead of auto-compact)."""
    return fake.reply(text, hold_after=after, gate=threading.Event())
