"""What a `session/load` replay tells as the client saw it live: a microcompaction's copy
as the message it stands for, and the calls the server's tool loop answered (told as
`CallReport` tells them), looked for a slice of the view at a time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from baton.acp.tool_calls import KINDS
from baton.core.compaction.working_set.plan_todos import TODO_TOOL
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock
from baton.core.conversation.session import Session
from baton.core.tools.calls import answered_here

# the tools the server's tool loop runs, whose calls were told live as `CallReport` tells
# them: the workspace tools and the task list
RUN_HERE = frozenset({*KINDS, TODO_TOOL})
REPLAY_SCAN = 5_000  # messages a replay looks over, before its first update, between yields


def as_told(session: Session) -> dict[str, Message]:
    """Each copy an active microcompaction made (old tool results cleared for the model)
    to the message it stands for, as the client saw it live (through a later copy's
    copy too): the transcript keeps it, and the panel shows what the call found."""
    shown: dict[str, str] = {}
    for boundary_id in session.active:
        boundary = session.boundaries[boundary_id]
        if boundary.direction == "microcompact":
            shown |= {c: o[0] for c, o in boundary.stands_for.items() if len(o) == 1}
    told: dict[str, Message] = {}
    for copy_id, original in shown.items():
        seen = {copy_id}
        while original in shown and original not in seen:
            seen.add(original)
            original = shown[original]
        if original in session.messages:  # under the view's id, which a client names
            told[copy_id] = session.messages[original].model_copy(update={"id": copy_id})
    return told


def run_here(view: Sequence[Message], marked: bool, here: set[str]) -> Iterator[int]:
    """Adds to `here` the ids of the calls the server's tool loop answered, told live as
    `CallReport` tells them: its tools', and any other it answered itself (unknown, or
    not run), which its message says (`tool_loop`); in a transcript begun before the
    loop marked its messages (not `marked`), an unmarked answer worded as the loop words
    them. Yields 0 every REPLAY_SCAN messages looked at (a load gives the loop back)."""
    results: dict[str, tuple[ToolResultBlock, Message]] = {}
    for start in range(0, len(view), REPLAY_SCAN):
        results |= {
            r.tool_use_id: (r, m)
            for m in view[start : start + REPLAY_SCAN]
            for r in m.tool_results()
        }
        yield 0
    for start in range(0, len(view), REPLAY_SCAN):
        for use in (u for m in view[start : start + REPLAY_SCAN] for u in m.tool_uses()):
            found = results.get(use.id)
            if use.name in RUN_HERE or (found is not None and _loops(use, *found, marked)):
                here.add(use.id)
        yield 0


def _loops(use: ToolUseBlock, result: ToolResultBlock, message: Message, marked: bool) -> bool:
    return bool(message.tool_loop) or (not marked and answered_here(use.name, result))
