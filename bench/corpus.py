"""A large session from real Claude Code transcripts, for `run.py --corpus` (optional).

Each transcript of the folder is imported (`import_claude_code`) into a scratch store; the
views are then laid end to end, again and again with fresh message, call and response ids,
until Baton's count reaches the size asked for. Nothing from the folder is written
anywhere but the temporary data directory of the run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from sessions import Built, Counter

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import ApiUsage, Message, ToolResultBlock, ToolUseBlock
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_claude_code

SUFFIXES = (".jsonl", ".json")


def views(folder: Path, count: Counter) -> list[list[Message]]:
    """The imported view of every Claude Code transcript in `folder` (sorted by name)."""
    out: list[list[Message]] = []
    with tempfile.TemporaryDirectory(prefix="baton-corpus-") as scratch:
        store = SessionStore(Path(scratch), count)
        for path in sorted(folder.iterdir()):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            session = import_claude_code(path, store)
            out.append([m.model_copy(deep=True) for m in session.view_messages()])
        store.close()
    if not out:
        raise SystemExit(f"no Claude Code transcripts (.jsonl, .json) in {folder}")
    return out


def renamed(message: Message, copy: int, context: int, count: Counter) -> Message:
    """The message with every id it carries made unique to copy number `copy`, and its
    usage (if any) reporting the `context` laid down before it, as in one long session."""
    tag = f"-c{copy}"
    blocks = []
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            block = block.model_copy(update={"id": block.id + tag})
        elif isinstance(block, ToolResultBlock):
            block = block.model_copy(update={"tool_use_id": block.tool_use_id + tag})
        blocks.append(block)
    api = message.api_message_id
    fresh = message.model_copy(
        update={
            "id": message.id + tag,
            "content": blocks,
            "api_message_id": api + tag if api else None,
            "boundary_id": None,
            "kind": "message",
            "pinned": False,
        }
    )
    fresh.tokens = count(fresh)
    if fresh.usage is not None and fresh.usage.is_real:
        fresh.usage = ApiUsage(
            input_tokens=3, cache_read_input_tokens=context, output_tokens=fresh.tokens
        )
    return fresh


def build(folder: Path, size: int, count: Counter) -> Built:
    """At least `size` tokens of real conversation, ending before the first prompt past it
    (a real turn can be long: the result may overshoot a small size)."""
    sources = views(folder, count)
    messages: list[Message] = []
    tokens = 0
    copy = 0
    while tokens < size:
        for view in sources:
            for message in view:
                if tokens >= size and message.is_user_prompt:
                    break
                fresh = renamed(message, copy, tokens, count)
                messages.append(fresh)
                tokens += fresh.tokens
            if tokens >= size:
                break
        copy += 1
    problems = invariant_violations(messages)
    if problems:
        raise AssertionError(f"the corpus session breaks the API rules: {problems[:3]}")
    return Built(f"corpus-{size}", messages, tokens, shapes={"corpus-copies": copy})
