"""A workspace tool's call as ACP shows it: a `tool_call` when it first appears and a
`tool_call_update` as it moves on (kind, title, locations, content, the diff of an edit),
made from a record shaped like the contract's `ToolCallInfo`; `CallReport` tells a turn's
calls as the server's tool loop runs them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
)

from baton.core.conversation.messages import ToolUseBlock
from baton.core.tools.calls import block
from baton.core.tools.display import call_info
from baton.core.tools.registry import ToolResult
from baton.core.tools.workspace import split_lines
from baton.core.workspace.editor_files import is_file_uri, uri_to_path

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolStatus = Literal["pending", "in_progress", "completed", "failed"]
ToolContent = ContentToolCallContent | FileEditToolCallContent

KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_dir": "read",
    "find_files": "search",
    "search_text": "search",
    "edit_file": "edit",
    "str_replace_based_edit_tool": "edit",
}
STATUSES: dict[str, ToolStatus] = {
    "pending": "pending",
    "running": "in_progress",
    "done": "completed",
    "denied": "failed",
    "failed": "failed",
}


class ToolCallLike(Protocol):
    """What the notification needs of a `ToolCallInfo` (the contract's names, snake_case)."""

    @property
    def tool_use_id(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def summary(self) -> str | None: ...
    @property
    def path(self) -> str | None: ...
    @property
    def diff(self) -> str | None: ...


def absolute(path: str | None, folders: Sequence[Path]) -> str | None:
    """A path as ACP wants it (absolute): one the tools show relative to the session's
    folder is joined to it, a `file:` URI the model gave is its path."""
    if path is not None and is_file_uri(path):
        found = uri_to_path(path)
        return str(found) if found is not None else path
    if path is None or not folders or Path(path).is_absolute():
        return path
    return str(folders[0] / path)


def tool_kind(tool: str, tool_input: Any = None) -> ToolKind:
    """ACP's kind of a tool call: the text editor tool's `view` is a read."""
    view = isinstance(tool_input, dict) and tool_input.get("command") == "view"
    if tool == "str_replace_based_edit_tool" and view:
        return "read"
    return KINDS.get(tool, "other")


def diff_texts(unified: str) -> tuple[str, str]:
    """The old and new text a unified diff's hunks show (context lines in both), for ACP's
    diff content, which wants texts rather than a patch. Hunks are joined in order."""
    old: list[str] = []
    new: list[str] = []
    for line in split_lines(unified):  # the diff's lines as unified() made them
        if line.startswith(("---", "+++", "@@", "\\")):
            continue
        if line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        else:
            text = line[1:] if line.startswith(" ") else line
            old.append(text)
            new.append(text)
    return "\n".join(old), "\n".join(new)


def tool_content(
    info: ToolCallLike, before: str | None = None, after: str | None = None
) -> list[ToolContent]:
    """The summary as text, and the edit as a diff: whole texts when they are known
    (`before` / `after`), else the texts the unified diff shows."""
    content: list[ToolContent] = []
    summary = info.summary or ("denied" if info.status == "denied" else None)
    if summary:
        text = TextContentBlock(type="text", text=summary)
        content.append(ContentToolCallContent(type="content", content=text))
    if info.path and (after is not None or info.diff):
        if after is None:
            old, new = diff_texts(info.diff or "")
        else:
            old, new = before or "", after
        content.append(
            FileEditToolCallContent(type="diff", path=info.path, old_text=old or None, new_text=new)
        )
    return content


def tool_call_notification(
    info: ToolCallLike,
    *,
    first: bool,
    tool_input: Any = None,
    output: Any = None,
    before: str | None = None,
    after: str | None = None,
) -> ToolCallStart | ToolCallProgress:
    """`tool_call` the first time the call is told (`first`), `tool_call_update` after."""
    locations = [ToolCallLocation(path=info.path)] if info.path else None
    content = tool_content(info, before, after) or None
    status = STATUSES.get(info.status, "pending")
    kind = tool_kind(info.tool, tool_input)
    if first:
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=info.tool_use_id,
            title=info.title,
            kind=kind,
            status=status,
            content=content,
            locations=locations,
            raw_input=tool_input,
            raw_output=output,
        )
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=info.tool_use_id,
        title=info.title,
        kind=kind,
        status=status,
        content=content,
        locations=locations,
        raw_input=tool_input,
        raw_output=output,
    )


class CallReport:
    """One session's calls as the tool loop answers them: `tool_call` (in progress) when a
    call is about to run, before any permission request; `tool_call_update` with its status,
    summary, the edit's diff and the text the model reads when it is answered. Paths are
    made absolute against `folders` (the session's cwd); `before` runs first (the turn tells
    the thinking of the reply that made the call)."""

    def __init__(
        self,
        send: Callable[[ToolCallStart | ToolCallProgress], None],
        before: Callable[[str], None] | None = None,
    ) -> None:
        self.send = send
        self.before = before  # called with a call's id before it is told
        self.running: dict[str, ToolUseBlock] = {}
        # the turn's calls as last told: a round's results are stored once all its calls
        # are answered, and a load meanwhile replays its calls from the view as pending
        self.told: dict[str, ToolCallStart | ToolCallProgress] = {}

    def _tell(self, update: ToolCallStart | ToolCallProgress) -> None:
        self.told[update.tool_call_id] = update
        self.send(update)

    def told_since(self, answered: set[str]) -> list[ToolCallProgress]:
        """The turn's calls whose result is not stored yet (not in `answered`) as last told
        (in progress, or answered), each as a `tool_call_update`, for a load to follow its
        replay with."""
        out = []
        for call_id, update in self.told.items():
            if call_id not in answered:
                fields = update.model_dump(exclude={"session_update"})
                out.append(ToolCallProgress(session_update="tool_call_update", **fields))
        return out

    def started(self, use: ToolUseBlock, folders: Sequence[Path] = ()) -> None:
        self.running[use.id] = use
        if self.before is not None:
            self.before(use.id)
        info = call_info(use, None, running=True)
        info = info.model_copy(update={"path": absolute(info.path, folders)})
        self._tell(tool_call_notification(info, first=True, tool_input=use.input))

    def finished(self, tool_use_id: str, result: ToolResult, folders: Sequence[Path] = ()) -> None:
        use = self.running.pop(tool_use_id, None)
        if use is None:
            return
        info = call_info(use, block(tool_use_id, result), running=False)
        # an error's own summary is its whole text (an input it quotes, however long): its
        # first line, cut as the editor's panel and a load's replay show it, instead
        summary = info.summary if result.is_error else result.summary or info.summary
        changes = {
            "status": result.status,
            "summary": summary,
            "path": absolute(info.path, folders),
        }
        update = tool_call_notification(
            info.model_copy(update=changes), first=False, tool_input=use.input, output=result.text
        )
        self._tell(update)
