"""The Messages API's rules: the blocks each role may send, a message list's invariants.

A list's rules are also kept as running state, so a list that grows is checked only where
it grows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from baton.core.conversation.messages import (
    CompactionBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

ROLE_BLOCKS: dict[str, tuple[type[ContentBlock], ...]] = {
    "user": (TextBlock, ImageBlock, DocumentBlock, ToolResultBlock),
    "assistant": (TextBlock, ToolUseBlock, ThinkingBlock, RedactedThinkingBlock),
}


def block_problems(role: Role, blocks: Sequence[ContentBlock]) -> list[str]:
    """Why these blocks cannot be sent as a `role` message (the API would refuse them)."""
    problems: list[str] = []
    if not blocks:
        problems.append("a message needs at least one content block")
    for n, block in enumerate(blocks):
        where = f"block {n} ({block.type})"
        if not isinstance(block, ROLE_BLOCKS[role]):
            problems.append(f"{where} cannot appear in a {role} message")
        elif isinstance(block, TextBlock) and not block.text.strip():
            problems.append(f"{where} has no text")
        elif isinstance(block, ToolUseBlock) and not isinstance(block.input, dict):
            problems.append(f"{where} input must be an object")
        elif isinstance(block, ImageBlock | DocumentBlock) and not block.source.get("type"):
            problems.append(f"{where} needs a source with a type")
    return problems


def leads_with_compaction(message: Message) -> bool:
    """True for a summary the API wrote: a message whose first block is a compaction block,
    which the API wants first in `messages`, whatever the role of its message."""
    return bool(message.content) and isinstance(message.content[0], CompactionBlock)


def invariant_violations(messages: Sequence[Message]) -> list[str]:
    """Every way this message list breaks the Messages API's rules, in order found (the
    rules and their running form are `ApiRules`)."""
    return ApiRules().extend(messages).problems


def unanswered_tool_uses(messages: Sequence[Message]) -> list[ToolUseBlock]:
    """tool_use blocks of the trailing assistant turn that no tool_result answers yet."""
    answered = {r.tool_use_id for m in messages for r in m.tool_results()}
    open_uses: list[ToolUseBlock] = []
    for message in reversed(messages):
        if message.role == "user" and not message.is_tool_result_only:
            break
        if message.role == "assistant":
            open_uses[:0] = [u for u in message.tool_uses() if u.id not in answered]
    return open_uses


class _Ids(Protocol):
    def __contains__(self, item: object, /) -> bool: ...

    def add(self, item: str, /) -> None: ...


class _Grown:
    """A set read through to a base it never changes: what a trial adds stays its own."""

    __slots__ = ("base", "own")

    def __init__(self, base: _Ids) -> None:
        self.base = base
        self.own: set[str] = set()

    def __contains__(self, item: object, /) -> bool:
        return item in self.own or item in self.base

    def add(self, item: str, /) -> None:
        self.own.add(item)


class ApiRules:
    """`invariant_violations` and `unanswered_tool_uses` of the messages added so far.

    Rules: the first message is the user's (or the API's own summary, which goes first);
    each tool_result answers a tool_use of the
    preceding assistant turn (the assistant records since the previous user prompt);
    no tool_use is left unanswered when a later user prompt or another response arrives;
    records sharing an API message id are contiguous except for tool results interleaved
    between them.
    """

    def __init__(self) -> None:
        self.length = 0
        self.problems: list[str] = []  # in the order found
        self.known: _Ids = set()  # the same problems, to look up
        self.known_before: _Ids = set()  # a trial's: the problems of what it continues
        self._pending: dict[str, str] = {}  # tool_use id -> assistant message id, this turn
        self._answered: _Ids = set()
        self._results: _Ids = set()  # every tool_result's tool_use_id, anywhere
        self._api_ids: _Ids = set()
        self._last_api_id: str | None = None
        self._turn_uses: list[ToolUseBlock] = []  # since the last user prompt

    def fork(self) -> ApiRules:
        """A trial continuation: it sees everything added so far, and nothing it adds
        reaches this one (copies only the current turn's state)."""
        trial = ApiRules()
        trial.length = self.length
        trial.known = _Grown(self.known)
        trial.known_before = self.known
        trial._pending = dict(self._pending)
        trial._answered = _Grown(self._answered)
        trial._results = _Grown(self._results)
        trial._api_ids = _Grown(self._api_ids)
        trial._last_api_id = self._last_api_id
        trial._turn_uses = list(self._turn_uses)
        return trial

    def extend(self, messages: Iterable[Message]) -> ApiRules:
        for message in messages:
            self.add(message)
        return self

    def packed(self) -> ApiRules:
        """These rules, their id sets copied to the size of what they hold (a set grown one
        id at a time keeps the room its growth made, up to four times what it holds)."""
        self._answered = _packed(self._answered)
        self._results = _packed(self._results)
        self._api_ids = _packed(self._api_ids)
        return self

    def add(self, message: Message) -> list[str]:
        """Take in the next message; returns the problems it brought."""
        found: list[str] = []
        if self.length == 0 and message.role != "user" and not leads_with_compaction(message):
            found.append(f"{message.id}: the conversation must start with a user message")
        self.length += 1
        pending, content = self._pending, message.content
        if message.role == "assistant":
            api_id = message.api_message_id
            if api_id is not None and api_id != self._last_api_id and api_id in self._api_ids:
                found.append(f"{message.id}: records of API message {api_id} are not contiguous")
            if pending and (api_id is None or api_id != self._last_api_id):
                # a new response while calls of the previous one still wait for results
                for use_id, owner in pending.items():
                    found.append(
                        f"{owner}: tool_use {use_id} is unanswered before the next response"
                    )
                pending.clear()
            if api_id is not None:
                self._api_ids.add(api_id)
            self._last_api_id = api_id
            uses = [block for block in content if type(block) is ToolUseBlock]
            for use in uses:
                if use.id in pending or use.id in self._answered:
                    found.append(f"{message.id}: duplicate tool_use id {use.id}")
                pending[use.id] = message.id
            self._turn_uses.extend(uses)
            if len(uses) != len(content):  # blocks besides calls (results, if any)
                for block in content:
                    if type(block) is ToolResultBlock:
                        self._results.add(block.tool_use_id)
            return self._found(found) if found else found
        results = [block for block in content if type(block) is ToolResultBlock]
        for result in results:
            self._results.add(result.tool_use_id)
            if result.tool_use_id not in pending:
                found.append(
                    f"{message.id}: tool_result {result.tool_use_id} answers no tool_use "
                    "of the preceding assistant turn"
                )
            else:
                del pending[result.tool_use_id]
                self._answered.add(result.tool_use_id)
        if not results or len(results) != len(content):  # a prompt (`is_tool_result_only`)
            for use_id, owner in pending.items():
                found.append(
                    f"{owner}: tool_use {use_id} is unanswered before the next user prompt"
                )
            pending.clear()
            self._last_api_id = None
            self._turn_uses = []
        return self._found(found) if found else found

    def unanswered(self) -> list[ToolUseBlock]:
        """tool_use blocks of the trailing assistant turn that no tool_result answers yet."""
        return [u for u in self._turn_uses if u.id not in self._results]

    def _found(self, found: list[str]) -> list[str]:
        self.problems.extend(found)
        for problem in found:
            self.known.add(problem)
        return found


class ToolPairs:
    """Which tool calls of a list no result answers and which results answer no call
    anywhere in it (the session document's warnings), kept as the list grows."""

    def __init__(self) -> None:
        self._uses: dict[str, str] = {}  # tool_use id -> the (last) message that made it
        self._answered: set[str] = set()
        self._open: dict[str, None] = {}  # calls not answered yet, in the order first seen
        self.orphans: list[tuple[str, str]] = []

    def extend(self, messages: Iterable[Message]) -> ToolPairs:
        for message in messages:
            self.add(message)
        return self

    def packed(self) -> ToolPairs:
        """These pairs, their tables copied to the size of what they hold."""
        self._uses = dict(self._uses)
        self._answered = set(self._answered)
        self._open = dict(self._open)
        return self

    def add(self, message: Message) -> None:
        for use in message.tool_uses():
            self._uses[use.id] = message.id
            if use.id not in self._answered:
                self._open[use.id] = None
        for result in message.tool_results():
            use_id = result.tool_use_id
            if use_id not in self._uses:
                self.orphans.append(
                    (message.id, f"tool_result {use_id} answers no tool_use in view")
                )
            self._answered.add(use_id)
            self._open.pop(use_id, None)

    def problems(self, awaiting: set[str]) -> list[tuple[str, str]]:
        """(message id, problem); calls in `awaiting` (the trailing turn's) are not problems."""
        unanswered = [
            (self._uses[use_id], f"tool_use {use_id} has no tool_result")
            for use_id in self._open
            if use_id not in awaiting
        ]
        return [*self.orphans, *unanswered]


def _packed(ids: _Ids) -> _Ids:
    return set(ids) if isinstance(ids, set) else ids
