"""The slash commands Baton offers in an agent panel (`available_commands_update`), how a
prompt names one, how a message is named (its ACP message id or its number in `/context`),
and the text `/context` answers with."""

from __future__ import annotations

from dataclasses import dataclass

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from baton.acp.errors import invalid
from baton.core.compaction.slices import first_words
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.errors import NothingToCompact
from baton.core.usage.budget import Usage
from baton.core.usage.wording import format_tokens

PREVIEW_CHARS = 70
MIN_ID_PREFIX = 6

COMMANDS: dict[str, tuple[str, str | None]] = {
    "compact": (
        "Summarize the conversation to free context (optional instructions)",
        "instructions",
    ),
    "compact-up-to": ("Summarize from the start through a message, keep the rest", "message"),
    "compact-from": ("Summarize a message and everything after it", "message"),
    "undo-compact": ("Undo the latest compaction: its messages come back", None),
    "pin": ("Pin a message (or unpin it): compactions keep it verbatim", "message"),
    "context": ("The context's usage by kind and the numbered messages", None),
}


@dataclass(frozen=True)
class Command:
    name: str
    argument: str


def available_commands() -> list[AvailableCommand]:
    commands = []
    for name, (description, hint) in COMMANDS.items():
        given = (
            AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))
            if hint is not None
            else None
        )
        commands.append(AvailableCommand(name=name, description=description, input=given))
    return commands


def parse(text: str) -> Command | None:
    """The command a prompt's text names (`/compact keep the API notes`), or None."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped[1:2].isspace() or stripped == "/":
        return None
    # any white space ends the name: instructions typed on the next line are the argument
    name, *rest = stripped[1:].split(maxsplit=1)
    if name not in COMMANDS:
        return None
    return Command(name, rest[0].strip() if rest else "")


def resolve(session: Session, reference: str) -> Message:
    """The view's message a reference names: its number as `/context` lists it, its id,
    or an unambiguous prefix of its id (at least six characters)."""
    wanted = reference.strip().lstrip("#")
    if not wanted:
        raise invalid("name a message: its number in /context or its message id")
    view = session.view
    if wanted.isdecimal():  # not isdigit: int() reads no '²
        number = int(wanted)
        if 1 <= number <= len(view):
            return session.messages[view[number - 1]]
        raise invalid(f"there is no message {number}: the context holds {len(view)}")
    if wanted in session.messages and wanted in view:
        return session.messages[wanted]
    if len(wanted) >= MIN_ID_PREFIX:
        found = [mid for mid in view if mid.startswith(wanted)]
        if len(found) == 1:
            return session.messages[found[0]]
        if len(found) > 1:
            raise invalid(f"{wanted!r} names {len(found)} messages: give more of the id")
    raise invalid(f"no message {wanted!r} in the context (see /context for the numbers)")


def latest_compaction(session: Session) -> str:
    """The boundary `/undo-compact` undoes: the latest compaction in force, never a rewind
    (ACP makes one only to set a refused or a retried reply aside, or a refused prompt:
    undoing it would put back a turn the API refuses every later request for)."""
    for boundary_id in reversed(session.active):
        if session.boundaries[boundary_id].direction != "rewind":
            return boundary_id
    raise NothingToCompact("there is no compaction to undo in this session")


def _preview(message: Message) -> str:
    if message.kind == "summary":
        return "summary of the earlier conversation"
    if message.kind == "attachment" and message.attachment is not None:
        return message.attachment.heading()
    text = first_words([message.text()], PREVIEW_CHARS)  # a huge message's words not all split
    if not text:
        kinds = sorted({b.type for b in message.content})
        return f"({', '.join(kinds)})"
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def context_text(session: Session, usage: Usage) -> str:
    """`/context`: the usage in words, its breakdown, and the view's messages numbered."""
    lines = [f"**Context**: {usage.text.headline or usage.text.meter}", ""]
    breakdown = usage.breakdown.model_dump()
    labels = usage.text.labels
    for key, tokens in breakdown.items():
        if tokens:
            lines.append(f"- {labels.get(key, key)}: {format_tokens(tokens)}")
    lines += ["", f"**Messages** ({len(session.view)}):"]
    for number, message_id in enumerate(session.view, start=1):
        message = session.messages[message_id]
        role = message.kind if message.kind != "message" else message.role
        pin = " 📌" if message.pinned else ""
        lines.append(
            f"{number}. {role}{pin} `{message_id}` ({message.tokens:,} tokens): {_preview(message)}"
        )
    return "\n".join(lines)
