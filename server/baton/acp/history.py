"""`session/load`: a session's view replayed as ACP updates, in order: user and agent
message chunks with their message ids, thoughts, tool calls with their results (as told
live, also once a microcompaction cleared them), restored files, and each summary as a
compaction entity (or a short agent message)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    UserMessageChunk,
)

from baton.acp.compaction_report import CompactionReport, summary_text
from baton.acp.outbox import Outbox
from baton.acp.told_live import as_told, run_here
from baton.acp.tool_calls import CallReport, absolute, tool_call_notification
from baton.core.conversation.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.meta_records import folders_by_message
from baton.core.conversation.session import Session
from baton.core.tools.display import call_info
from baton.core.workspace.editor_files import path_to_uri

TITLE_INPUT_CHARS = 60


@dataclass(frozen=True)
class ReplayedCall:
    """A stored tool call in the shape `tool_call_notification` takes."""

    tool_use_id: str
    tool: str
    title: str
    status: str
    summary: str | None = None
    path: str | None = None
    diff: str | None = None


def _title(block: ToolUseBlock) -> str:
    given = block.input if isinstance(block.input, dict) else {}
    target = given.get("path") or given.get("pattern") or given.get("file_path")
    if isinstance(target, str) and target:
        return f"{block.name} {target}"[: TITLE_INPUT_CHARS + len(block.name)]
    text = json.dumps(block.input, ensure_ascii=False) if block.input else ""
    return f"{block.name} {text[:TITLE_INPUT_CHARS]}".strip()


def _result_text(block: ToolResultBlock) -> str:
    if isinstance(block.content, str):
        return block.content
    if isinstance(block.content, list):
        parts = [p.get("text", "") for p in block.content if isinstance(p, dict)]
        return "\n".join(p for p in parts if p)
    return ""


def _user(
    outbox: Outbox,
    sid: str,
    message: Message,
    calls: dict[str, ToolUseBlock | None],
    folders: dict[str, Sequence[Path]],
    here: set[str],
) -> None:
    """`folders`: each call's, by its id."""
    for block in message.content:
        if isinstance(block, TextBlock):
            content: Any = TextContentBlock(type="text", text=block.text)
        elif isinstance(block, ImageBlock) and block.source.get("type") == "base64":
            content = ImageContentBlock(
                type="image",
                data=str(block.source.get("data", "")),
                mime_type=str(block.source.get("media_type", "image/png")),
            )
        elif isinstance(block, ToolResultBlock):
            if block.tool_use_id in calls and calls[block.tool_use_id] is None:
                continue  # the answer to a call never told (below)
            use = calls.get(block.tool_use_id)
            text = _result_text(block)
            if use is not None and use.id in here:  # the server's tool loop's: as told live
                info = call_info(use, block, running=False)
                where = folders.get(use.id, ())
                info = info.model_copy(update={"path": absolute(info.path, where)})
                update = tool_call_notification(
                    info, first=False, tool_input=use.input, output=text or None
                )
                outbox.update(sid, update)
                continue
            status = "failed" if block.is_error else "done"
            record = ReplayedCall(
                block.tool_use_id,
                use.name if use else "tool",
                _title(use) if use else "tool",
                status,
                summary=text or None,
            )
            outbox.update(sid, tool_call_notification(record, first=use is None))
            continue
        else:
            continue  # a PDF and other documents are not replayed as content
        chunk = UserMessageChunk(
            session_update="user_message_chunk", content=content, message_id=message.id
        )
        outbox.update(sid, chunk)


def _assistant(
    outbox: Outbox,
    sid: str,
    message: Message,
    calls: dict[str, ToolUseBlock | None],
    folders: Sequence[Path],
    here: set[str],
    places: dict[str, Sequence[Path]],
) -> None:
    """`folders`: the message's (where its calls ran), kept in `places` by call id."""
    for block in message.content:
        if isinstance(block, TextBlock):
            text = TextContentBlock(type="text", text=block.text)
            outbox.update(
                sid,
                AgentMessageChunk(
                    session_update="agent_message_chunk", content=text, message_id=message.id
                ),
            )
        elif isinstance(block, ThinkingBlock) and block.thinking:
            text = TextContentBlock(type="text", text=block.thinking)
            outbox.update(
                sid,
                AgentThoughtChunk(
                    session_update="agent_thought_chunk", content=text, message_id=message.id
                ),
            )
        elif isinstance(block, ToolUseBlock):
            if message.stop_reason == "interrupted":
                # stopped as it streamed: never run, so never told live (a call is told as
                # it runs), nor its answer (the next prompt's "interrupted")
                calls[block.id] = None
                continue
            calls[block.id] = block
            places[block.id] = folders
            if block.id in here:
                info = call_info(block, None, running=False)
                found: Any = info.model_copy(update={"path": absolute(info.path, folders)})
            else:
                found = ReplayedCall(block.id, block.name, _title(block), "pending")
            outbox.update(sid, tool_call_notification(found, first=True, tool_input=block.input))


def _attachment(outbox: Outbox, sid: str, message: Message) -> None:
    """A file the message put back, as a link to it: one the editor attached to a prompt
    (its `kind` says which) as the user's; one a compaction restored (a restored file, the
    project instructions) as Baton's own words, which the user never sent."""
    attachment = message.attachment
    if attachment is None or not attachment.path:
        return
    path = attachment.path
    try:
        uri = path_to_uri(path)
    except ValueError:
        uri = path
    name = PurePath(path).name or path
    link = ResourceContentBlock(
        type="resource_link", name=name, title=attachment.heading(), uri=uri
    )
    if attachment.kind is not None:
        chunk: Any = UserMessageChunk(
            session_update="user_message_chunk", content=link, message_id=message.id
        )
        outbox.update(sid, chunk)
        return
    said = TextContentBlock(type="text", text=f"{attachment.label}, put back by a compaction: ")
    for content in (said, link):
        chunk = AgentMessageChunk(
            session_update="agent_message_chunk", content=content, message_id=message.id
        )
        outbox.update(sid, chunk)


def replaying(
    outbox: Outbox,
    session: Session,
    entity: bool,
    folders: Sequence[Path] = (),
    told_live: set[str] | None = None,
    start: int = 0,
) -> Iterator[int]:
    """Queue the view's updates, yielding how many messages are replayed so far after
    each (a load gives the loop back between slices of them), and 0 as it looks over the
    view before the first. The view, and what it is told from, are taken before the
    first: the replay is the view as it was then. A workspace
    tool's call is told as it was live (title, kind, the path made absolute against
    the folders the session worked in when it was made, else `folders`; summary, diff),
    and so is one of a tool the loop does not have that the loop answered ("Unknown
    tool", or not run: `run_here`; `told_live`: the calls this process's loop told, a
    round in flight's among them); other tools' (an imported transcript's, a client's) by
    name and input. `start`: the view's first messages the client holds already, not
    told (a result among the rest whose call is among them is told by its tool's name)."""
    sid = session.session_id
    calls: dict[str, ToolUseBlock | None] = {}
    view = session.view_messages()
    told = as_told(session)
    marked = session.marks_tool_loop
    here = set(told_live or ())
    yield from run_here([told.get(m.id, m) for m in view], marked, here)
    # the folders each message was added in, as recorded; else (recorded before there
    # was such a record) the session's folders of now
    recorded = folders_by_message(session.messages, session.folders_since)
    places: dict[str, Sequence[Path]] = {}
    for index, message in enumerate(view, 1):
        if index <= start:
            continue
        if message.kind == "summary":
            report = CompactionReport(outbox, sid, entity, f"compaction-{message.boundary_id}")
            text = summary_text(message)
            if entity:
                report.start()
                report.completed(text, "")
            else:
                outbox.update(
                    sid,
                    AgentMessageChunk(
                        session_update="agent_message_chunk",
                        content=TextContentBlock(
                            type="text", text=f"Summary of the earlier conversation:\n\n{text}"
                        ),
                        message_id=message.id,
                    ),
                )
        elif message.kind == "attachment":
            _attachment(outbox, sid, message)
        elif message.role == "user":
            _user(outbox, sid, told.get(message.id, message), calls, places, here)
        else:
            where = [Path(f) for f in recorded[message.id]] if message.id in recorded else folders
            _assistant(outbox, sid, message, calls, where, here, places)
        yield index


def replay_streaming(
    outbox: Outbox,
    session: Session,
    streamed: dict[str, list[str]],
    calls: CallReport | None = None,
) -> None:
    """What the running turn told and the session does not hold yet: its calls' progress
    (a round's results are stored once every call of it is answered: the view replays
    them pending) and the text of its replies streamed so far (a reply is stored once it
    ends), each under its message id."""
    if calls is not None:
        answered = {r.tool_use_id for m in session.view_messages() for r in m.tool_results()}
        for update in calls.told_since(answered):
            outbox.update(session.session_id, update)
    for message_id, pieces in streamed.items():
        if message_id not in session.messages:
            chunk = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "".join(pieces)},
                "messageId": message_id,
            }
            outbox.raw(session.session_id, chunk)
