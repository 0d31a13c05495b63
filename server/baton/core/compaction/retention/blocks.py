"""Cheap tests of messages' blocks for the compaction's passes over every message of a view.

The content blocks are the classes of one discriminated union and have no subclasses, so a
block's exact type says what it is. Tested so (`type(block) is ToolUseBlock`), a block that
is not of a class costs nothing, where `isinstance` of a pydantic model that is not one
calls the `__instancecheck__` that pydantic's metaclass defines (about 150 ns a test; one
that is of the class is answered before that call).
"""

from __future__ import annotations

from collections.abc import Sequence

from baton.core.conversation.messages import ContentBlock, Message, ToolResultBlock


def only_results(content: Sequence[ContentBlock]) -> bool:
    """Whether `content` is tool results only (and not empty)."""
    return bool(content) and all(type(block) is ToolResultBlock for block in content)


def is_prompt(message: Message) -> bool:
    """`message.is_user_prompt`: a user message that is not only tool results."""
    return (
        message.role == "user" and message.kind == "message" and not only_results(message.content)
    )


def failed_results(content: Sequence[ContentBlock]) -> int:
    """How many of these blocks are tool results that failed."""
    return sum(1 for block in content if type(block) is ToolResultBlock and block.is_error)
