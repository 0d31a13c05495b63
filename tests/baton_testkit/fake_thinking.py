"""The fake API's thinking: the `thinking` parameter per model, thinking blocks with fresh
signatures, and the checks the real API makes of thinking sent back.

As the Messages API documents them (BEHAVIOR.md section 10):
- A thinking block whose text differs from what was served under its signature: 400
  (every model).
- Models with preserved thinking (`PRESERVED`) check each block's prefix (system, tools,
  every earlier message and the blocks before it in its turn) against the request it was
  generated after; the first block that fails, and every later one, is invalid: 400
  invalid_request_error, or dropped when the request sets
  `thinking.block_binding.prefix_mismatch_behavior: "drop_block"` (with its beta header).
  A block the fake never served counts as bound to another conversation. Other models
  ignore thinking whose prefix changed (dropped without error).
- With thinking on, an assistant turn in an open tool loop (the last assistant turn,
  followed only by tool results) must start with a thinking block: 400.
- An assistant message whose last block is thinking (anywhere in `messages`, thinking
  on or not): 400.
- `budget_tokens` on an adaptive-only model, `disabled` on one that always thinks,
  `adaptive` on a budget-only model, a budget under 1,024 or not below max_tokens: 400.
Every block dropped is recorded in `FakeThinking.dropped` (signatures), as the real API
lists them in `input_transformations`.
"""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

PRESERVED = (
    "claude-fable-5-2",
    "claude-mythos-5-2",
    "claude-fable-5-1",
    "claude-mythos-5-1",
    "claude-opus-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
)
ALWAYS_ON = (*PRESERVED, "claude-fable-5", "claude-mythos-5", "claude-opus-4-7")
ADAPTIVE_ONLY = (*ALWAYS_ON, "claude-opus-5", "claude-sonnet-5", "claude-opus-4-8")
BUDGET_ONLY = (
    "claude-opus-4-5",
    "claude-opus-4-1",
    "claude-opus-4-2",
    "claude-sonnet-4-5",
    "claude-sonnet-4-2",
    "claude-haiku-4-5",
    "claude-3-7-sonnet",
)
THINKING = ("thinking", "redacted_thinking")
BINDING_BETA = "thinking-binding-controls-2026-08-01"


def _family(model: str, families: tuple[str, ...]) -> bool:
    return any(model == f or model.startswith(f + "-") for f in families)


def _key(block: dict[str, Any]) -> str | None:
    return block.get("signature") if block.get("type") == "thinking" else block.get("data")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class ThinkingProblem:
    message: str  # the 400's text


@dataclass
class FakeThinking:
    """What the fake remembers of the thinking it served, and the rules it enforces."""

    served: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (text, prefix)
    default_on: bool = False  # models that always think do so with no `thinking` parameter
    dropped: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    # ---- a request -------------------------------------------------------------------

    def check(self, body: dict[str, Any], headers: dict[str, str]) -> ThinkingProblem | None:
        """The 400 this request gets for its thinking, or None (invalid blocks that this
        model drops are recorded in `dropped`)."""
        model = str(body.get("model") or "")
        problem = self._check_param(model, body)
        if problem is not None:
            return problem
        messages = body.get("messages") or []
        problem = _ends_in_thinking(messages)
        if problem is not None:
            return problem
        drop = self._drops(body, headers)
        invalid_from: tuple[int, int] | None = None
        for i, message in enumerate(messages):
            if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
                continue
            for j, block in enumerate(message["content"]):
                if block.get("type") not in THINKING:
                    continue
                key = _key(block)
                with self.lock:
                    known = self.served.get(key or "")
                edited = block.get("type") == "thinking" and known is not None
                if edited and known is not None and known[0] != block.get("thinking"):
                    return ThinkingProblem(
                        f"messages.{i}.content.{j}: Invalid `signature` in `thinking` "
                        "block: the block was modified."
                    )
                if invalid_from is None:
                    prefix = self.prefix(body, messages[:i], message["content"][:j])
                    if known is None or known[1] != prefix:
                        invalid_from = (i, j)
                if invalid_from is None:
                    continue
                if _family(model, PRESERVED) and not drop:
                    i0, j0 = invalid_from
                    return ThinkingProblem(
                        f"messages.{i0}.content.{j0}: Invalid `signature` in `thinking` block. "
                        "The block is bound to a different conversation. Remove the block, or "
                        "set `thinking.block_binding.prefix_mismatch_behavior` to "
                        '"drop_block".'
                    )
                with self.lock:
                    self.dropped.append(key or "")
        if self.thinks(model, body):
            return self._check_tool_loop(messages)
        return None

    def thinks(self, model: str, body: dict[str, Any]) -> bool:
        param = body.get("thinking")
        if isinstance(param, dict) and param.get("type") in ("enabled", "adaptive"):
            return True
        return param is None and self.default_on and _family(model, ALWAYS_ON)

    def _drops(self, body: dict[str, Any], headers: dict[str, str]) -> bool:
        param = body.get("thinking")
        binding = param.get("block_binding") if isinstance(param, dict) else None
        wanted = isinstance(binding, dict) and (
            binding.get("prefix_mismatch_behavior") == "drop_block"
        )
        return wanted and BINDING_BETA in headers.get("anthropic-beta", "")

    def _check_param(self, model: str, body: dict[str, Any]) -> ThinkingProblem | None:
        param = body.get("thinking")
        if param is None:
            return None
        kind = param.get("type") if isinstance(param, dict) else None
        if kind == "enabled":
            if _family(model, ADAPTIVE_ONLY):
                return ThinkingProblem(
                    f'"thinking.type.enabled" is not supported for this model ({model}). '
                    'Use "thinking.type.adaptive" and "output_config.effort".'
                )
            budget = param.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024:
                return ThinkingProblem("thinking.budget_tokens: must be at least 1024")
            if budget >= int(body.get("max_tokens") or 0):
                return ThinkingProblem("`max_tokens` must be greater than `thinking.budget_tokens`")
        elif kind == "adaptive":
            if _family(model, BUDGET_ONLY):
                return ThinkingProblem(f'"thinking.type.adaptive" is not supported for {model}')
        elif kind == "disabled":
            if _family(model, ALWAYS_ON):
                return ThinkingProblem(f"thinking cannot be disabled on {model}")
        else:
            return ThinkingProblem(f"thinking.type: unknown value {kind!r}")
        return None

    def _check_tool_loop(self, messages: list[dict[str, Any]]) -> ThinkingProblem | None:
        if len(messages) < 2:
            return None
        last, turn = messages[-1], messages[-2]
        content = last.get("content")
        if last.get("role") != "user" or turn.get("role") != "assistant":
            return None
        if not isinstance(content, list) or not content:
            return None
        if not all(b.get("type") == "tool_result" for b in content):
            return None
        blocks = turn.get("content")
        first = blocks[0].get("type") if isinstance(blocks, list) and blocks else "text"
        if first in THINKING:
            return None
        return ThinkingProblem(
            f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final "
            "`assistant` message must start with a thinking block."
        )

    # ---- a reply ---------------------------------------------------------------------

    def serve(self, body: dict[str, Any], content: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The reply's content as served: a thinking block with a fresh signature first when
        the request thinks and the script has none; every thinking block remembered with
        the prefix it was generated after."""
        model = str(body.get("model") or "")
        if self.thinks(model, body) and not any(b.get("type") in THINKING for b in content):
            content = [_fresh_thinking(), *content]
        messages = body.get("messages") or []
        for j, block in enumerate(content):
            if block.get("type") in THINKING and _key(block):
                prefix = self.prefix(body, messages, content[:j])
                with self.lock:
                    self.served[str(_key(block))] = (str(block.get("thinking", "")), prefix)
        return content

    @staticmethod
    def prefix(
        body: dict[str, Any], before: list[dict[str, Any]], blocks_before: list[dict[str, Any]]
    ) -> str:
        return _canonical(
            {
                "system": body.get("system") or None,
                "tools": body.get("tools") or None,
                "messages": before,
                "turn": blocks_before,
            }
        )


def _ends_in_thinking(messages: list[dict[str, Any]]) -> ThinkingProblem | None:
    """The API refuses an assistant message whose last block is thinking, wherever the
    message stands (whether thinking is on or not)."""
    for i, message in enumerate(messages):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list) or not content:
            continue
        if isinstance(content[-1], dict) and content[-1].get("type") in THINKING:
            return ThinkingProblem(
                f"messages.{i}: The final block in an assistant message cannot be `thinking`."
            )
    return None


def _fresh_thinking() -> dict[str, Any]:
    tag = secrets.token_hex(4)
    return {"type": "thinking", "thinking": f"(reasoning {tag})", "signature": f"sig-{tag}"}
