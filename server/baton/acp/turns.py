"""A prompt turn: the prompt's blocks become the user message and the reply streams back
(text as it comes, thoughts once the reply is recorded), or a slash command runs; the stop
reason answers the prompt, `session/cancel` ends the turn as `cancelled`."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AgentThoughtChunk,
    PromptResponse,
    SessionInfoUpdate,
    TextContentBlock,
)

from baton.acp import commands, loading
from baton.acp.compaction_report import agent_wait
from baton.acp.errors import invalid
from baton.acp.linked_files import Unread, disk_text
from baton.acp.prompt_content import PromptContent, prompt_content
from baton.acp.slash_commands import run_command, say
from baton.core.conversation.messages import Message, ThinkingBlock, ToolResultBlock
from baton.core.conversation.records import unwritable
from baton.core.conversation.session import Session
from baton.core.errors import BatonError
from baton.core.turn import recovery
from baton.core.workspace.editor_files import path_to_uri

if TYPE_CHECKING:
    from baton.acp.agent import BatonAgent
    from baton.acp.open_sessions import Live

log = logging.getLogger(__name__)

TITLE_CHARS = 80
REFUSED_NOTE = (
    "The API refused this reply. It is left out of the conversation (the session's file "
    "keeps it), so later prompts are not refused because of it."
)
REFUSED_PROMPT_NOTE = (
    "The API refused the reply to this prompt. The reply is left out of the conversation "
    "(the session's file keeps it), and your next prompt takes this one's place, so that it "
    "is not refused again; the same prompt sent again asks again."
)
STOP_REASONS = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "interrupted": "cancelled",
    "model_context_window_exceeded": "max_tokens",
}


def say_refused(agent: BatonAgent, session: Session) -> None:
    """Why a refused reply is gone, and what the next prompt does about it."""
    prompt = recovery.refused_prompt(session)
    say(agent, session.session_id, REFUSED_NOTE if prompt is None else REFUSED_PROMPT_NOTE)


def _prompt_text(blocks: list[Any]) -> str | None:
    """The prompt's text when it is text alone (a slash command is nothing else)."""
    if not blocks or not all(isinstance(b, TextContentBlock) for b in blocks):
        return None
    return "".join(b.text for b in blocks)


async def prompt(agent: BatonAgent, live: Live, blocks: list[Any]) -> PromptResponse:
    if live.turn is not None and not live.turn.done():
        raise _busy(live)
    # the turn is the session's from here on, reading the prompt's files included (through
    # the client, which may take a while): a second prompt meanwhile is refused, and a
    # `session/cancel` ends it before anything is stored
    work = _work(agent, live, blocks)
    task = asyncio.get_running_loop().create_task(work, name=f"acp-turn-{live.session_id}")
    live.turn = task
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        live.turn = None
        live.streamed.clear()
        if live.host.report is not None:
            live.host.report.told.clear()
    # every chunk of the turn is already handed to the transport, ahead of the answer
    if task.cancelled():
        return PromptResponse(stop_reason="cancelled")
    error = task.exception()
    if error is not None:
        raise error
    return PromptResponse(stop_reason=task.result())


def _busy(live: Live) -> Exception:
    """Why a prompt is refused while the session's turn runs: a compaction the turn runs
    (a command's, or one ahead of a reply) is said as such, since it may take a minute
    while the model writes its summary, and "a turn" names no turn the user started."""
    sid = live.session_id
    if live.compaction is not None:
        return invalid(
            f"a compaction is running in session {sid}: send the prompt once it ends "
            "(session/cancel stops it, changing nothing)"
        )
    if live.auto_compaction is not None:
        return invalid(
            f"a turn is already running in session {sid}: it is compacting the "
            "conversation before its reply"
        )
    return invalid(f"a turn is already running in session {sid}")


async def _work(agent: BatonAgent, live: Live, blocks: list[Any]) -> str:
    """The turn's work: a slash command, or the prompt stored and replied to, once what
    another process added to the session is told."""
    await loading.look(agent, live.session_id)
    text = _prompt_text(blocks)
    command = commands.parse(text) if text is not None else None
    if command is not None:
        _check_command_text(blocks, command)
        return await run_command(agent, live, command)
    content = await prompt_content(blocks, lambda path: _read(live, path))
    agent.service.replies.check_can_send(live.session_id)  # no key: nothing is stored
    _touch(agent, content)
    return await _turn(agent, live, content)


def _check_command_text(blocks: list[Any], command: commands.Command) -> None:
    """`invalid_params` for a command whose text holds a lone surrogate (a JSON escape
    such as "\\ud800", no UTF-8 text), as a prompt's text is refused: /compact's
    instructions would go to the summary's request and its record, and fail there once
    the compaction had started."""
    for n, block in enumerate(blocks):
        if unwritable(block.text) is not None:
            raise invalid(
                f"prompt.{n}: the /{command.name} command's text holds a lone surrogate "
                "(no UTF-8 text): it was not run"
            )


async def _read(live: Live, path: Path) -> str:
    """The client's text of the file, else the disk's; Unread saying why neither was had."""
    text, refused = await live.host.client_text(path)
    if text is not None:
        return text
    try:
        return disk_text(path)
    except Unread as exc:
        if refused is None:
            raise
        raise Unread(f"{exc.why}; {refused}") from None


def _touch(agent: BatonAgent, content: PromptContent) -> None:
    """The files the prompt named join the working set a compaction restores."""
    for path, text in content.files.items():
        uri = path_to_uri(path)
        if text is not None:
            agent.service.editor_files.opened(uri, text)
        else:
            agent.service.editor_files.saved(uri)


def _round(use: Message, answer: Message) -> bool:
    """Whether two messages are one tool round of a turn: calls, then only their answers."""
    return (
        use.role == "assistant"
        and bool(use.tool_uses())
        and answer.role == "user"
        and bool(answer.content)
        and all(isinstance(b, ToolResultBlock) for b in answer.content)
    )


def _unanswered(view: list[Message], content: PromptContent) -> bool:
    """Whether the view ends with this very prompt, stored by a turn that failed (an API
    error keeps the prompt, a broken stream what arrived of the reply, as interrupted),
    or with the tool rounds its turn had run when it failed: sending it again, all an
    agent panel can do to retry, continues after them (an interrupted reply set aside and
    made again) instead of storing the user's words twice."""
    if view and view[-1].role == "assistant" and view[-1].stop_reason == "interrupted":
        view = view[:-1]
    end = len(view)
    while end >= 2 and _round(view[end - 2], view[end - 1]):
        end -= 2
    view = view[:end]
    if not view or view[-1].role != "user" or view[-1].kind != "message":
        return False
    stored = [b.model_dump(exclude_none=True) for b in view[-1].content]
    return stored == [b.model_dump(exclude_none=True) for b in content.blocks]


def _title_of(text: str) -> str:
    """The title a session's first prompt gives it: its words, cut at TITLE_CHARS, without
    control characters (a pasted escape sequence, a NUL), as a title must be; read from the
    prompt's start only (a prompt of megabytes is not gone through for its first words)."""
    head = " ".join(text.lstrip()[: TITLE_CHARS * 16].split())
    words = "".join(c for c in head if ord(c) >= 32 and ord(c) != 127)
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1] + "…"


def _title(agent: BatonAgent, live: Live, content: PromptContent) -> None:
    """The title the prompt gives an untitled session, given once the send has stored the
    prompt (`name_if_stored`): a prompt refused or cancelled before that names nothing."""
    session = agent.service.session(live.session_id)
    if not live.untitled or session.read_only:
        return
    title = _title_of(content.text())
    if title:
        live.naming = (title, frozenset(session.messages))


def name_if_stored(agent: BatonAgent, live: Live, session: Session) -> None:
    """The session named by its first prompt once the turn stored something (the prompt
    first); told as the change that stored it is."""
    if live.naming is None:
        return
    title, known = live.naming
    if all(message_id in known for message_id in session.messages):
        return
    live.naming = None
    try:
        session.set_meta(title=title)
    except BatonError as exc:  # the turn goes on; the next prompt names it
        log.warning("session %s: its title is not kept: %s", live.session_id, exc.message)
        return
    live.untitled = False
    agent.out.update(
        live.session_id, SessionInfoUpdate(session_update="session_info_update", title=title)
    )


async def _turn(agent: BatonAgent, live: Live, content: PromptContent) -> str:
    sid = live.session_id
    session = agent.service.session(sid)
    retry = _unanswered(session.view_messages(), content)
    refused = None if retry else recovery.refused_prompt(session)
    if refused is not None:
        # the API refuses again while the refused turn stands: ACP has no rewind, so the
        # next prompt is the rephrasing an LSP client makes with one
        agent.service.compaction.rewind(sid, refused.id)
        # a session it named is named by the prompt in its place
        live.untitled = live.untitled or session.title == _title_of(refused.text())
    _title(agent, live, content)
    live.thought.clear()
    blocks = None if retry else list(content.blocks)  # None: continue after the stored one
    before = set(session.view)
    try:
        reply = await agent.service.replies.send(
            sid, blocks, host=live.host, on_wait=lambda text: agent_wait(agent.out, sid, text)
        )
    except BaseException:
        _stopped_thoughts(agent, live, session, before)
        raise
    finally:
        live.naming = None  # not stored: the next prompt names the session
    message = reply.message
    _thoughts(agent, live, message)
    if message.stop_reason == "refusal" and reply.set_aside is not None:
        say_refused(agent, session)
    return STOP_REASONS.get(message.stop_reason or "end_turn", "end_turn")


def _thoughts(agent: BatonAgent, live: Live, message: Message) -> None:
    """A recorded reply's thinking as `agent_thought_chunk`s, once per message."""
    if message.id in live.thought:
        return
    live.thought.add(message.id)
    for block in message.content:
        if isinstance(block, ThinkingBlock) and block.thinking:
            thought = AgentThoughtChunk(
                session_update="agent_thought_chunk",
                content=TextContentBlock(type="text", text=block.thinking),
                message_id=message.id,
            )
            agent.out.update(live.session_id, thought)


def _stopped_thoughts(agent: BatonAgent, live: Live, session: Session, before: set[str]) -> None:
    """A reply stopped mid-way (cancelled, a broken stream) is kept, as interrupted, with
    what arrived of it: its thinking told as a recorded reply's is, as a load replays it."""
    for message in session.view_messages():
        if message.id not in before and message.stop_reason == "interrupted":
            _thoughts(agent, live, message)


def thoughts_before_call(agent: BatonAgent, session_id: str, tool_use_id: str) -> None:
    """Before a tool call is told: the thinking of the reply that made it (a reply of the
    tool loop is recorded before its calls run, and is not the turn's last)."""
    live = agent.live.get(session_id)
    if live is None:
        return
    for message in reversed(agent.service.session(session_id).view_messages()):
        if any(use.id == tool_use_id for use in message.tool_uses()):
            _thoughts(agent, live, message)
            return
