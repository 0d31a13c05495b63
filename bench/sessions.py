"""Seeded Baton sessions of a chosen size, written as transcripts a server opens like a user's.

A session is built turn by turn from the seeded text of the Claude Code generator the tests
use (`baton_testkit.claude_code_text`, in tests/): a prompt (sometimes with pasted code or
an error), tool rounds (thinking with a signature, a preamble, one to three calls; parallel
calls either grouped or with their results interleaved between the records of one response),
file reads, test runs that fail with a traceback, edits, and a reply with a fenced code
block. Every assistant record carries the usage a real response would report. Sizes are
Baton's own count (`Estimator.count_message`); the last turn is a plain exchange cut to land
within 2% of the target. The same seed and size give the same bytes.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message, TextBlock
from baton.core.conversation.transcript import Transcript
from baton.core.settings import DEFAULT_MODEL
from baton_testkit.claude_code_text import MODULES, TOOLS, Text

SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1m": 1_000_000}
SYSTEM_PROMPT = "You are a careful coding assistant working in the user's repository."
Counter = Callable[[Message], int]
Block = dict[str, Any]


@dataclass
class Built:
    """A generated session: its id, its messages (tokens counted) and their total."""

    session_id: str
    messages: list[Message]
    tokens: int
    path: Path | None = None
    shapes: dict[str, int] = field(default_factory=dict)


class SessionBuilder:
    """Turns of a coding session, appended until Baton's count reaches the target."""

    def __init__(self, seed: int, count: Counter) -> None:
        self.rng = random.Random(seed)
        self.text = Text(self.rng)
        self.count = count
        self.messages: list[Message] = []
        self.tokens = 0
        self.clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
        self.shapes: dict[str, int] = {}

    # ---- primitives ------------------------------------------------------------------------

    def hexid(self, prefix: str, bits: int = 64) -> str:
        return f"{prefix}_{self.rng.getrandbits(bits):0{bits // 4}x}"

    def stamp(self) -> str:
        self.clock += timedelta(milliseconds=self.rng.randint(200, 60_000))
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def add(self, role: str, content: list[Block], **fields: Any) -> Message:
        message = Message.model_validate(
            {"id": self.hexid("msg"), "role": role, "content": content, "createdAt": self.stamp()}
            | fields
        )
        message.tokens = self.count(message)
        self.tokens += message.tokens
        self.messages.append(message)
        return message

    def note(self, shape: str) -> None:
        self.shapes[shape] = self.shapes.get(shape, 0) + 1

    def usage(self) -> dict[str, int]:
        """What the response would report: the context so far, mostly read from the cache."""
        return {
            "inputTokens": self.rng.randint(3, 12),
            "cacheCreationInputTokens": self.rng.randint(50, 900),
            "cacheReadInputTokens": self.tokens,
            "outputTokens": self.rng.randint(20, 600),
        }

    # ---- content ---------------------------------------------------------------------------

    def code_block(self, lines: int) -> str:
        body = self.text.code(lines)
        head = f"def {self.rng.choice(MODULES)}_{self.rng.randint(1, 99)}(config):"
        return f"```python\n{head}\n{body}\n    return config\n```"

    def prompt_content(self) -> list[Block]:
        typed = self.text.prompt()
        roll = self.rng.random()
        if roll < 0.15:
            self.note("prompt-with-error")
            _, trace = self.failing_run()
            typed += f"\n\nI get this when I run it:\n```\n{trace}\n```"
        elif roll < 0.3:
            self.note("prompt-with-code")
            typed += f"\n\nThis is the part I mean:\n{self.code_block(self.rng.randint(4, 20))}"
        blocks: list[Block] = []
        if self.rng.random() < 0.35:
            opened = f"<ide_opened_file>The user opened the file {self.text.path()} in the IDE."
            blocks.append({"type": "text", "text": opened + "</ide_opened_file>"})
        blocks.append({"type": "text", "text": typed})
        return blocks

    def failing_run(self) -> tuple[str, str]:
        module = self.rng.choice(MODULES)
        frames = "".join(
            f'  File "{self.text.path()}", line {self.rng.randint(2, 400)}, in {name}\n'
            f"    {self.text.code(1).strip()}\n"
            for name in self.rng.sample(["run", "load", "call", "_wrapped", "main"], 3)
        )
        trace = (
            f"FAILED tests/test_{module}.py::test_{self.rng.choice(MODULES)} - ImportError\n"
            f"Traceback (most recent call last):\n{frames}"
            f"ModuleNotFoundError: No module named '{module}_v2'"
        )
        return f"pytest -q tests/test_{module}.py", f"Exit code 1\n{trace}"

    def thinking(self) -> Block:
        signature = base64.b64encode(self.rng.randbytes(48)).decode()
        return {"type": "thinking", "thinking": self.text.reply(), "signature": signature}

    def call(self, name: str) -> Block:
        use_id = self.hexid("toolu_01", 88)
        return {"type": "tool_use", "id": use_id, "name": name, "input": self.text.tool_call(name)}

    def result(self, call: Block) -> Block:
        block: Block = {"type": "tool_result", "tool_use_id": call["id"]}
        if call["name"] == "Bash" and self.rng.random() < 0.35:
            self.note("error-result")
            call["input"]["command"], block["content"] = self.failing_run()
            block["is_error"] = True
        else:
            block["content"] = self.text.tool_output(call["name"], call["input"])[0]
        return block

    # ---- turns -----------------------------------------------------------------------------

    def tool_round(self) -> None:
        api = self.hexid("msg_01", 96)
        usage = self.usage()
        head: list[Block] = []
        if self.rng.random() < 0.7:
            head.append(self.thinking())
            self.note("thinking")
        if self.rng.random() < 0.6:
            head.append({"type": "text", "text": self.text.reply()})
        calls = [self.call(self.rng.choice(TOOLS)) for _ in range(self.rng.choice([1, 1, 2, 3]))]
        fields = {"apiMessageId": api, "usage": usage, "model": DEFAULT_MODEL}
        if len(calls) > 1 and self.rng.random() < 0.5:  # call, result, call, result
            self.note("parallel-interleaved")
            for n, call in enumerate(calls):
                last = n == len(calls) - 1
                stop = {"stopReason": "tool_use"} if last else {}
                self.add("assistant", [*head, call] if n == 0 else [call], **fields, **stop)
                self.add("user", [self.result(call)])
            return
        if len(calls) > 1:
            self.note("parallel-grouped")
        self.add("assistant", [*head, *calls], **fields, stopReason="tool_use")
        self.add("user", [self.result(call) for call in calls])

    def reply(self) -> None:
        parts = [self.text.reply()]
        if self.rng.random() < 0.4:
            self.note("code-in-reply")
            parts.append(self.code_block(self.rng.randint(5, 30)))
            parts.append(self.text.reply())
        blocks: list[Block] = [{"type": "text", "text": "\n\n".join(parts)}]
        if self.rng.random() < 0.3:
            blocks.insert(0, self.thinking())
        fields = {"apiMessageId": self.hexid("msg_01", 96), "usage": self.usage()}
        self.add("assistant", blocks, **fields, model=DEFAULT_MODEL, stopReason="end_turn")

    def turn(self) -> None:
        self.add("user", self.prompt_content())
        for _ in range(self.rng.choice([0, 1, 1, 2, 3, 4])):
            self.tool_round()
        self.reply()

    def plain_exchange(self, tokens: int) -> None:
        """A prompt and a reply of about `tokens` together (the last turn, cut to fit)."""
        self.add("user", [{"type": "text", "text": self.text.prompt()}])
        left = max(8, tokens - self.messages[-1].tokens)
        words: list[str] = []
        while len(words) < left:
            words += self.text.paragraph(3).split()
        fields = {"apiMessageId": self.hexid("msg_01", 96), "usage": self.usage()}
        reply = self.add("assistant", [{"type": "text", "text": " ".join(words[:left])}], **fields)
        # one correction: words are not tokens one for one
        keep = max(1, round(left * left / max(1, reply.tokens)))
        self.messages.pop()
        self.tokens -= reply.tokens
        self.add("assistant", [{"type": "text", "text": " ".join(words[:keep])}], **fields)

    def build(self, target: int) -> None:
        misses = 0
        while True:
            mark = (len(self.messages), self.tokens, dict(self.shapes))
            self.turn()
            if self.tokens <= target - 300:
                continue
            # too far: take the turn back; after a few such turns, end with a plain exchange
            count, self.tokens, self.shapes = mark
            del self.messages[count:]
            misses += 1
            if misses > 8:
                self.plain_exchange(target - self.tokens)
                return


def build(size: int, seed: int, count: Counter) -> Built:
    """A session of about `size` tokens (Baton's count); checked against the API's rules."""
    builder = SessionBuilder(seed, count)
    builder.build(size)
    problems = invariant_violations(builder.messages)
    if problems:
        raise AssertionError(f"generated session breaks the API rules: {problems[:3]}")
    return Built(f"bench-{size}-s{seed}", builder.messages, builder.tokens, shapes=builder.shapes)


def write(built: Built, data_dir: Path) -> Path:
    """The session as a transcript under `data_dir`, as Baton's store would lay it out."""
    path = data_dir / "sessions" / f"{built.session_id}.jsonl"
    header = {
        "type": "session",
        "format": 1,
        "sessionId": built.session_id,
        "title": f"Benchmark session ({built.tokens:,} tokens)",
        "model": DEFAULT_MODEL,
        "systemPrompt": SYSTEM_PROMPT,
        "createdAt": "2026-03-02T09:00:00.000Z",
    }
    with Transcript.create(path, header) as transcript:
        transcript.append_many({"type": "message", "message": m.wire()} for m in built.messages)
    built.path = path
    return path


def one_message(seed: int, role: str, tokens: int, count: Counter) -> dict[str, Any]:
    """A fresh message of at least `tokens` (Baton's count) as a client appends it."""
    text = Text(random.Random(seed))
    words: list[str] = []
    while True:
        words += text.paragraph(4).split()
        body = " ".join(words)
        probe = Message(
            id=f"probe-{seed}-{len(words)}", role="user", content=[TextBlock(text=body)]
        )
        if count(probe) >= tokens:
            return {"role": role, "content": [{"type": "text", "text": body}]}


def main(argv: list[str] | None = None) -> int:
    """`python bench/sessions.py TOKENS DATA_DIR [SEED]`: one generated session written as
    a transcript under DATA_DIR (what the end-to-end test opens as its 1M-token session);
    prints its id, token count and message count as JSON."""
    import json
    import sys

    from baton.core.usage.estimator import Estimator, load_cl100k

    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3) or not args[0].isdigit():
        print("usage: python bench/sessions.py TOKENS DATA_DIR [SEED]", file=sys.stderr)
        return 2
    count = Estimator(encoder=load_cl100k()).count_message
    built = build(int(args[0]), int(args[2]) if len(args) == 3 else 1, count)
    write(built, Path(args[1]))
    facts = {
        "sessionId": built.session_id,
        "tokens": built.tokens,
        "messages": len(built.messages),
        "firstMessageId": built.messages[0].id,
        "lastMessageId": built.messages[-1].id,
    }
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
