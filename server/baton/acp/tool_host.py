"""The workspace tools' host over ACP: permission through `session/request_permission`
(allow once / allow always / deny), the editor's text through `fs/read_text_file` and
edits through `fs/write_text_file` when the client offers them, the disk otherwise.

The shapes are the ToolHost contract's own (`core/tools/host.py`): `PermissionRequest`,
`PermissionOutcome`, `FileEdit`, `EditOutcome`; only ACP's option kinds are added here."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Protocol

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallLocation,
    ToolCallUpdate,
)

from baton.acp.tool_calls import CallReport, ToolContent, absolute, diff_texts
from baton.core.conversation.messages import ToolUseBlock
from baton.core.tools.host import (
    CHANGED_MEANWHILE,
    OPTION_LABELS,
    EditOutcome,
    FileEdit,
    PermissionOutcome,
    PermissionRequest,
    cannot_read,
    cannot_write,
    current_text,
    write_file,
)
from baton.core.tools.registry import ToolResult

__all__ = ["AcpToolHost", "EditOutcome", "FileEdit", "PermissionOutcome", "PermissionRequest"]

log = logging.getLogger(__name__)

PERMISSION_WAIT = 300.0  # seconds a permission request waits for an answer, then: denied
# ACP's kind of each of the contract's options
ACP_KINDS: dict[PermissionOutcome, Literal["allow_once", "allow_always", "reject_once"]] = {
    "allowOnce": "allow_once",
    "allowSession": "allow_always",
    "deny": "reject_once",
}


class AcpClient(Protocol):
    """The client-side methods the host calls (the SDK's `AgentSideConnection` has them)."""

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse: ...

    async def read_text_file(self, session_id: str, path: str) -> Any: ...

    async def write_text_file(self, session_id: str, path: str, content: str) -> Any: ...


def _permission_call(request: PermissionRequest) -> ToolCallUpdate:
    content: list[ToolContent] | None = None
    if request.path and request.diff:
        from acp.schema import FileEditToolCallContent

        old, new = diff_texts(request.diff)
        edit = FileEditToolCallContent(
            type="diff", path=request.path, old_text=old or None, new_text=new
        )
        content = [edit]
    kind = "other" if request.kind == "other" else request.kind
    return ToolCallUpdate(
        tool_call_id=request.tool_use_id,
        title=request.title,
        kind=kind,
        status="pending",
        locations=[ToolCallLocation(path=request.path)] if request.path else None,
        content=content,
        raw_input=request.input,
    )


class AcpToolHost:
    """One session's host. `tell` says something to the user in the turn (a permission
    request nobody answered); `wait` bounds how long a permission request waits; `flush`
    (optional) sends the updates queued so far before a permission request goes out;
    `report` tells each call as it runs; `folders` are the tools' workspace folders."""

    def __init__(
        self,
        client: AcpClient,
        session_id: str,
        *,
        can_read: bool,
        can_write: bool,
        tell: Callable[[str], None] | None = None,
        wait: float = PERMISSION_WAIT,
        flush: Callable[[], Awaitable[None]] | None = None,
        report: CallReport | None = None,
        folders: list[Path] | None = None,
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.can_read = can_read
        self.can_write = can_write
        self.tell = tell
        self.wait = wait
        self.flush = flush
        self.report = report
        self.folders = folders or []  # the session's cwd: the tools' workspace folder

    def call_started(self, use: ToolUseBlock) -> None:
        if self.report is not None:
            self.report.started(use, self.folders)

    def call_finished(self, tool_use_id: str, result: ToolResult) -> None:
        if self.report is not None:
            self.report.finished(tool_use_id, result, self.folders)

    async def ask_permission(self, request: PermissionRequest) -> PermissionOutcome:
        """The option the user picked; deny when they cancelled, the answer is not one of
        the options, the request failed, or nobody answered within `wait` seconds."""
        options = [
            PermissionOption(option_id=o, name=OPTION_LABELS[o], kind=ACP_KINDS[o])
            for o in request.options
        ]
        ids = set(request.options)
        if self.flush is not None:
            await self.flush()  # the call's `tool_call` reaches the client before the question
        shown = replace(request, path=absolute(request.path, self.folders))
        call = self.client.request_permission(self.session_id, _permission_call(shown), options)
        try:
            answer = await asyncio.wait_for(call, self.wait)
        except TimeoutError:
            self._tell(
                f'No answer to the permission request "{request.title}" within '
                f"{self.wait:g} s: it was denied."
            )
            return "deny"
        except (RequestError, ConnectionError, ValueError) as exc:
            log.info("permission request failed (%s): denied", type(exc).__name__)
            return "deny"
        outcome = answer.outcome
        if isinstance(outcome, AllowedOutcome) and outcome.option_id in ids:
            chosen: PermissionOutcome = outcome.option_id
            return chosen
        return "deny"

    async def read_text(self, path: Path) -> str | None:
        """The client's text of the file (its unsaved buffer when open); None when the
        client offers no `fs/read_text_file` or cannot read it."""
        text, _ = await self.client_text(path)
        return text

    async def client_text(self, path: Path) -> tuple[str | None, str | None]:
        """The client's text of the file, or None and why the client gave none (no reason
        when it offers no `fs/read_text_file`)."""
        if not self.can_read:
            return None, None
        try:
            answer = await self.client.read_text_file(self.session_id, str(path))
        except RequestError as exc:
            log.debug("fs/read_text_file failed: %s", type(exc).__name__)
            return None, f"the editor could not read it either: {exc}"
        except (ConnectionError, ValueError) as exc:
            log.debug("fs/read_text_file failed: %s", type(exc).__name__)
            return None, "the editor gave no answer to read"
        content = getattr(answer, "content", None)
        if isinstance(content, str):
            return content, None
        return None, "the editor's answer held no text"

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Write `after` when the file still holds `before` (else: changed meanwhile),
        through `fs/write_text_file` when offered (the editor's buffer follows), else on
        the disk (a new file in one replace)."""
        try:
            current = await self._current(edit.path)
        except (OSError, UnicodeError) as exc:
            return EditOutcome(False, cannot_read(exc))
        if current != edit.before:  # None both: a new file
            return EditOutcome(False, CHANGED_MEANWHILE)
        if self.can_write:
            try:
                await self.client.write_text_file(self.session_id, str(edit.path), edit.after)
            except RequestError as exc:
                return EditOutcome(False, f"the editor refused the write: {exc}")
            except ConnectionError:
                return EditOutcome(False, "the editor went away")
            return EditOutcome(True)
        try:
            write_file(edit.path, edit.after)
        except OSError as exc:
            return EditOutcome(False, cannot_write(exc))
        return EditOutcome(True)

    async def _current(self, path: Path) -> str | None:
        text = await self.read_text(path)
        return text if text is not None else current_text(path)

    def _tell(self, text: str) -> None:
        log.info("%s", text)
        if self.tell is not None:
            self.tell(text)
