"""Compaction on demand in the fake API: signed blocks, and the errors the real API documents.

`FakeAnthropic.compaction` is a `FakeCompaction`. A request with the top-level `compaction`
parameter gets one `compaction` block (content + a signature this fake can verify) with
`stop_reason` "compaction", or what a test scripted:

    fake.compaction.summary("what the API wrote")      # the next compaction's content
    fake.compaction.no_summary("max_tokens")           # a 200 with empty content
    fake.compaction.fail("compaction_unavailable")     # 529 overloaded_error, times=3 for retries
    fake.compaction.busy(429, retry_after="0.01")       # a 429 (or 529) with its retry-after

Every /v1/messages request that carries a block is checked the way the documentation says
the API checks it: the beta header, exactly one block, first in `messages`, its signature
and content as returned, no fields added. The Models API lists compaction (with the beta
header) for the models in `supported`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baton_testkit.fake_anthropic import FakeAnthropic, _Handler

BETA = "compact-2026-09-04"
SUPPORTED = ("claude-sonnet-4-6", "claude-opus-4-6")  # models the fake's Models API lists
MODEL_LIMITS = {"max_input_tokens": 200_000, "max_tokens": 64_000}
BLOCK_FIELDS = {
    "type",
    "content",
    "signature",
    "encrypted_content",
    "tool_changes",
    "cache_control",
}


@dataclass
class Outcome:
    """One scripted answer to a compaction request."""

    content: str | None = None  # None: the fake writes a summary of the messages
    stop_reason: str = "compaction"
    error: tuple[int, str, str, str | None] | None = None  # status, type, message, code
    headers: dict[str, str] | None = None  # the error's own headers (a retry-after)


class FakeCompaction:
    def __init__(self) -> None:
        self.supported: set[str] = set(SUPPORTED)
        self.secret = secrets.token_bytes(16)
        self.issued: list[dict[str, Any]] = []  # every block handed out
        self._queue: deque[Outcome] = deque()

    # ---- scripting -----------------------------------------------------------------------

    def summary(self, content: str) -> None:
        self._queue.append(Outcome(content=content))

    def no_summary(self, stop_reason: str) -> None:
        self._queue.append(Outcome(stop_reason=stop_reason))

    def fail(self, code: str, *, times: int = 1) -> None:
        status, kind = (
            (529, "overloaded_error")
            if code == "compaction_unavailable"
            else (
                400,
                "invalid_request_error",
            )
        )
        for _ in range(times):
            self._queue.append(Outcome(error=(status, kind, f"compaction failed: {code}", code)))

    def busy(self, status: int, *, retry_after: str | None = None, times: int = 1) -> None:
        """A rate limit (429) or an overload (529) with no error code, `times` over."""
        kind = "rate_limit_error" if status == 429 else "overloaded_error"
        headers = {"retry-after": retry_after} if retry_after is not None else None
        for _ in range(times):
            error = (status, kind, f"busy ({status})", None)
            self._queue.append(Outcome(error=error, headers=headers))

    # ---- signatures ----------------------------------------------------------------------

    def sign(self, content: str) -> str:
        digest = hmac.new(self.secret, content.encode(), hashlib.sha256).hexdigest()
        return base64.b64encode(json.dumps({"fake": 1, "h": digest}).encode()).decode()

    def signature_problem(self, block: dict[str, Any]) -> str | None:
        """The documented error code for a block this fake did not hand out as it is."""
        try:
            sealed = json.loads(base64.b64decode(str(block.get("signature") or ""), validate=True))
            digest = sealed["h"]
        except (ValueError, KeyError, TypeError):
            return "compaction_signature_invalid"
        expected = self.sign(str(block.get("content") or ""))
        if json.loads(base64.b64decode(expected))["h"] != digest:
            return "compaction_content_mismatch"
        return None

    # ---- the Models API ------------------------------------------------------------------

    def model_fields(self, model_id: str, beta: str) -> dict[str, Any]:
        """`capabilities.compaction`, shown only to requests with the beta header."""
        if BETA not in beta:
            return {}
        supported = model_id in self.supported
        return {
            "capabilities": {
                "compaction": {"supported": supported, "summarize": {"supported": supported}}
            }
        }

    def limits(self, model_id: str) -> dict[str, int] | None:
        return dict(MODEL_LIMITS) if model_id in self.supported else None


def serve(handler: _Handler, body: Any) -> bool:
    """Answer the request when compaction concerns it (True), else leave it to the caller."""
    fake: FakeAnthropic = handler.fake
    compaction = fake.compaction
    if not isinstance(body, dict):
        return False
    beta = {k.lower(): v for k, v in handler.headers.items()}.get("anthropic-beta", "")
    problem = _block_problem(compaction, body, beta)
    if problem is not None:
        _error(handler, *problem)
        return True
    if "compaction" not in body:
        return False
    problem = _request_problem(compaction, body, beta)
    if problem is not None:
        _error(handler, *problem)
        return True
    outcome = compaction._queue.popleft() if compaction._queue else Outcome()
    if outcome.error is not None:
        _error(handler, *outcome.error, outcome.headers)
        return True
    _answer(handler, compaction, body, outcome)
    return True


def _block_problem(
    compaction: FakeCompaction, body: dict[str, Any], beta: str
) -> tuple[int, str, str, str | None] | None:
    messages = body.get("messages") or []
    found = [
        (i, j, block)
        for i, message in enumerate(messages)
        if isinstance(message.get("content"), list)
        for j, block in enumerate(message["content"])
        if isinstance(block, dict) and block.get("type") == "compaction"
    ]
    if not found:
        return None
    i, j, block = found[0]
    if BETA not in beta:
        return (
            400,
            "invalid_request_error",
            f"messages.{i}.content.{j}: Input tag "
            "'compaction' found using 'type' does not match any of the expected tags",
            None,
        )
    if len(found) > 1:
        return (400, "invalid_request_error", "a request may carry only one compaction block", None)
    extra = sorted(set(block) - BLOCK_FIELDS)
    if extra:
        return (
            400,
            "invalid_request_error",
            f"messages.{i}.content.{j}.compaction.{extra[0]}: Extra inputs are not permitted",
            None,
        )
    if (i, j) != (0, 0):
        return (
            400,
            "invalid_request_error",
            "messages that the compaction block summarizes remain in front of it",
            "compaction_block_misplaced",
        )
    code = compaction.signature_problem(block)
    if code is not None:
        return (400, "invalid_request_error", "the compaction block was changed", code)
    if body.get("context_management"):
        return (
            400,
            "invalid_request_error",
            "threshold compaction cannot run on a request that carries a compaction block",
            None,
        )
    return None


def _request_problem(
    compaction: FakeCompaction, body: dict[str, Any], beta: str
) -> tuple[int, str, str, str | None] | None:
    def bad(message: str, code: str | None = None) -> tuple[int, str, str, str | None]:
        return (400, "invalid_request_error", message, code)

    if BETA not in beta:
        return bad(f"the `compaction` parameter requires anthropic-beta: {BETA}")
    if body.get("context_management"):
        return bad("`compaction` cannot be combined with `context_management`")
    choice = (body.get("tool_choice") or {}).get("type")
    if body.get("stop_sequences") or choice in ("any", "tool"):
        return bad("stop_sequences and a forced tool_choice cannot be used with `compaction`")
    if body.get("model") not in compaction.supported:
        return bad(f"compaction is not supported on {body.get('model')}")
    messages = body.get("messages") or []
    if not any(m.get("content") for m in messages if m.get("role") in ("user", "assistant")):
        return bad("messages has nothing to summarize", "compaction_nothing_to_summarize")
    last = messages[-1]
    if last.get("role") == "assistant" and any(
        isinstance(b, dict) and b.get("type") == "tool_use" for b in last.get("content") or []
    ):
        return bad("the last assistant turn ends in a tool call with no result yet")
    return None


def _answer(
    handler: _Handler, compaction: FakeCompaction, body: dict[str, Any], outcome: Outcome
) -> None:
    from baton_testkit.fake_anthropic import ScriptedReply

    content: list[dict[str, Any]] = []
    if outcome.stop_reason == "compaction":
        text = outcome.content if outcome.content is not None else written_summary(body)
        block = {"type": "compaction", "content": text, "signature": compaction.sign(text)}
        compaction.issued.append(block)
        content.append(block)
    sent = len(json.dumps(body.get("messages") or []))
    usage: dict[str, Any] = {
        "input_tokens": 0,
        "output_tokens": 0,
        "iterations": [
            {
                "type": "compaction",
                "input_tokens": max(1, sent // 4),
                "output_tokens": max(1, len(json.dumps(content)) // 4),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            }
        ],
    }
    reply = ScriptedReply(content=content, stop_reason=outcome.stop_reason, usage=usage)
    model = str(body.get("model"))
    if body.get("stream"):  # the block arrives whole: a start and a stop, no deltas
        handler._stream(reply, model)
    else:
        handler._whole(reply, model)


def written_summary(body: dict[str, Any]) -> str:
    """What the fake 'API' writes: how many messages, and the first and last user text."""
    texts = [
        block.get("text") if isinstance(block, dict) else None
        for message in body.get("messages") or []
        if message.get("role") == "user"
        for block in (
            message["content"]
            if isinstance(message.get("content"), list)
            else [{"type": "text", "text": message.get("content")}]
        )
    ]
    said = [t for t in texts if isinstance(t, str) and t.strip()]
    first = said[0][:200] if said else ""
    latest = said[-1][:200] if said else ""
    count = len(body.get("messages") or [])
    return f"API summary of {count} messages. First request: {first}. Latest: {latest}."


def _error(
    handler: _Handler,
    status: int,
    kind: str,
    message: str,
    code: str | None,
    headers: dict[str, str] | None = None,
) -> None:
    error: dict[str, Any] = {"type": kind, "message": message}
    if code is not None:
        error["details"] = {"error_code": code}
    handler._json(status, {"type": "error", "error": error}, headers)
