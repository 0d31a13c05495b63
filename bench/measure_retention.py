"""Retention after rounds of compaction: of every prompt ever typed (and every path touched),
how many a model can still see once a session was compacted three times, beside the same
session truncated to the same size.

A bench session (bench/sessions.py) is fed to a fresh session a third at a time (cut at a
prompt); after each third, `all` is compacted with the offline extractive summarizer, so
the second and third compactions summarize an earlier summary. A prompt is visible when
its first 200 characters (whitespace-insensitive) are in what the view holds, the rule of
the retention report; a path when it is. The baseline keeps the newest messages that fit
in the tokens of Baton's final view and drops the rest, what a client without compaction
does.

`continuity` marks the session first (`marked`): standing instructions added to some prompts,
some edits that define functions, a task list written with TodoWrite, so the rounds also
show the standing instructions, the symbols edited and the todo items that stay visible, and
the share of the summarized tokens the summary takes.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.represented import stands_for_tokens
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention.facts import message_haystack, normalize, prompt_texts
from baton.core.compaction.retention.ledger import PROMPT_PREFIX_CHARS, found_in
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.compaction.retention.standing import standing_instructions
from baton.core.compaction.retention.symbols import edited_symbols
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import Message, TextBlock, ToolUseBlock
from baton.core.conversation.store import SessionStore
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator

ROUNDS = 3
# What `marked` adds: an instruction every INSTRUCTION_EVERY prompts, a definition in every
# SYMBOL_EVERY-th edit, a task list in every TODO_EVERY-th Glob call (the last one stands).
INSTRUCTIONS = (
    "Always run the tests with -q.",
    "Don't touch the migrations folder.",
    "From now on, answer in German.",
    "Never commit directly to main.",
    "Please always keep the public API backwards compatible.",
    "Do not add new dependencies without asking.",
)
INSTRUCTION_EVERY, SYMBOL_EVERY, TODO_EVERY = 40, 5, 40


def marked(messages: Sequence[Message]) -> list[Message]:
    """Copies of `messages` with standing instructions, defining edits and task lists."""
    out: list[Message] = []
    prompts = edits = globs = 0
    for message in messages:
        content = list(message.content)
        if message.is_user_prompt:
            prompts += 1
            if prompts % INSTRUCTION_EVERY == 0 and type(content[-1]) is TextBlock:
                rule = INSTRUCTIONS[(prompts // INSTRUCTION_EVERY - 1) % len(INSTRUCTIONS)]
                content[-1] = TextBlock(text=f"{content[-1].text}\n\n{rule}")
        for index, block in enumerate(content):
            if type(block) is not ToolUseBlock:
                continue
            if block.name == "Edit":
                edits += 1
                if edits % SYMBOL_EVERY == 0:
                    new = f"def handle_case_{edits}(config):\n    return config"
                    content[index] = block.model_copy(
                        update={"input": {**block.input, "new_string": new}}
                    )
            elif block.name == "Glob":
                globs += 1
                if globs % TODO_EVERY == 0:
                    todos = [
                        {"content": f"Step {globs}.{n}", "status": s, "activeForm": f"Doing {n}"}
                        for n, s in enumerate(("completed", "in_progress", "pending"), start=1)
                    ]
                    content[index] = block.model_copy(
                        update={"name": "TodoWrite", "input": {"todos": todos}}
                    )
        out.append(message.model_copy(update={"content": content}))
    return out


def latest_open_todos(messages: Sequence[Message]) -> list[str]:
    """The pending and in-progress items of the last TodoWrite call."""
    items: list[str] = []
    for message in messages:
        for block in message.content:
            if type(block) is ToolUseBlock and block.name == "TodoWrite":
                todos = block.input.get("todos", [])
                items = [t["content"] for t in todos if t.get("status") != "completed"]
    return items


def visible(facts: Sequence[str], view: Sequence[Message], prefix: int | None) -> int:
    """How many of `facts` the view shows (a prompt by its first `prefix` characters)."""
    haystack = message_haystack(view)
    return sum(1 for fact in facts if found_in(haystack, normalize(fact), prefix))


def parts(messages: Sequence[Message], rounds: int) -> list[list[Message]]:
    """The messages in `rounds` parts of about as many prompts each, cut before a prompt."""
    starts = [i for i, message in enumerate(messages) if message.is_user_prompt]
    cuts = [0, *(starts[len(starts) * k // rounds] for k in range(1, rounds)), len(messages)]
    return [list(messages[a:b]) for a, b in itertools.pairwise(cuts)]


def truncated(messages: Sequence[Message], tokens: int) -> list[Message]:
    """The newest messages whose tokens add up to at most `tokens`."""
    kept: list[Message] = []
    total = 0
    for message in reversed(messages):
        total += message.tokens or 0
        if total > tokens:
            break
        kept.append(message)
    return kept[::-1]


async def rounds_of_compaction(
    messages: Sequence[Message], estimator: Estimator, *, rounds: int = ROUNDS, small: bool = False
) -> dict[str, Any]:
    """Compact `messages` in `rounds` rounds and count what stays visible (see above).
    `small`: a smaller recent window, for sessions too small for the default one."""
    settings = Settings()
    if small:
        settings = Settings(keep_window=KeepWindowSettings(min_tokens=1_000, min_text_messages=3))
    ctx = CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))
    extra: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="baton-retention-") as folder:
        store = SessionStore(Path(folder), estimator.count_message)
        session = store.create(title="three rounds")
        per_round: list[float] = []
        shares: list[float] = []
        typed: list[str] = []
        for part in parts(messages, rounds):
            session.append([message.model_copy() for message in part])
            typed += prompt_texts(part)
            await compact(session, CompactRequest(direction="all"), ctx)
            shown = visible(typed, session.view_messages(), PROMPT_PREFIX_CHARS)
            per_round.append(100 * shown / max(len(typed), 1))
            summary = [m for m in session.view_messages() if m.kind == "summary"]
            stood = stands_for_tokens(session, summary, estimator.count_message)
            own = sum(estimator.count_message(m) for m in summary)
            shares.append(100 * own / max(stood, 1))
        view = session.view_messages()
        tokens = sum(estimator.count_message(m) for m in view)
        store.close()
    tail = truncated(messages, tokens)
    facts = SpanFacts.extract(messages)
    kinds = {
        "errors": ([e.line for e in facts.errors], None),
        "instructions": (standing_instructions(prompt_texts(messages)), None),
        "symbols": (edited_symbols(messages), None),
        "todos": (latest_open_todos(messages), None),
    }
    for name, (found, prefix) in kinds.items():
        total = len(found)  # none to keep: all of them kept
        extra[name] = total
        extra[f"{name}_pct"] = 100 * visible(found, view, prefix) / total if total else 100.0
        extra[f"truncated_{name}_pct"] = (
            100 * visible(found, tail, prefix) / total if total else 100.0
        )
    extra["share_pct"] = shares
    prompts = prompt_texts(messages)
    paths = [touch.path for touch in facts.paths]
    return extra | {
        "prompts": len(prompts),
        "paths": len(paths),
        "view_tokens": tokens,
        "prompts_pct": 100 * visible(prompts, view, PROMPT_PREFIX_CHARS) / max(len(prompts), 1),
        "paths_pct": 100 * visible(paths, view, None) / max(len(paths), 1),
        "rounds_pct": per_round,
        "truncated_prompts_pct": 100
        * visible(prompts, tail, PROMPT_PREFIX_CHARS)
        / max(len(prompts), 1),
        "truncated_paths_pct": 100 * visible(paths, tail, None) / max(len(paths), 1),
    }
