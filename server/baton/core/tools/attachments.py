"""What the editor attaches to a prompt (a file, its visible range, a selection) as
`attachment` messages before it, read and contained by the tools' rules, bounded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from baton.core.compaction.working_set.credentials import credential_in
from baton.core.compaction.working_set.file_text import fence
from baton.core.conversation.messages import (
    ATTACHED_FILE,
    SELECTION,
    Attachment,
    LineRange,
    Message,
    text_message,
)
from baton.core.errors import InvalidParams
from baton.core.tools.host import ToolHost
from baton.core.tools.workspace import ToolError, Workspace, read_contained, split_lines

MAX_ATTACHMENT_CHARS = 100_000
MAX_ATTACHMENTS = 20


@dataclass(frozen=True)
class EditorAttachment:
    kind: Literal["file", "selection"]
    path: str  # an absolute path or a file: URI
    text: str | None = None  # the editor's text; None: read it
    range: LineRange | None = None
    language_id: str | None = None


def _lines(text: str, where: LineRange | None) -> str:
    if where is None:
        return text
    if where.end_line < where.start_line:
        raise ToolError("range.endLine must not be before range.startLine")
    lines = split_lines(text, keepends=True)  # the editor's lines, as read_file numbers them
    return "".join(lines[where.start_line - 1 : where.end_line])


async def attachment_messages(
    items: Sequence[EditorAttachment], workspace: Workspace, host: ToolHost | None
) -> list[Message]:
    """One message per attachment; InvalidParams naming the first that cannot be attached
    (outside the workspace, a credential file, binary), before anything is written."""
    if len(items) > MAX_ATTACHMENTS:
        raise InvalidParams(f"at most {MAX_ATTACHMENTS} attachments per prompt")
    out: list[Message] = []
    for n, item in enumerate(items):
        try:
            # the editor's buffer is the file even when the disk has none (not saved yet,
            # deleted meanwhile): read_contained says when neither has it
            located = workspace.locate(item.path, must_exist=False, what=f"attachments[{n}].path")
            given = item.text
            if given is None:
                given = (await read_contained(located, host)).text
                # text read whole, then the range: the editor sends the range's text itself
            text = _lines(given, item.range) if item.text is None else given
            kind = credential_in(text)
            if kind is not None:
                raise ToolError(f"{located.shown} looks like it holds {kind}; it is not attached")
        except ToolError as exc:
            raise InvalidParams(f"attachments[{n}]: {exc}") from None
        note = ""
        if len(text) > MAX_ATTACHMENT_CHARS:
            text = text[:MAX_ATTACHMENT_CHARS]
            note = f"\n[cut at {MAX_ATTACHMENT_CHARS:,} characters]"
        label = SELECTION if item.kind == "selection" else ATTACHED_FILE
        attachment = Attachment(
            path=str(located.path), label=label, kind=item.kind, range=item.range
        )
        where = ""
        if item.range is not None:
            where = f" (lines {item.range.start_line}-{item.range.end_line})"
        marks = fence(text)
        body = (
            f"{attachment.heading()}{where}\n{marks}{item.language_id or ''}\n"
            f"{text.rstrip(chr(10))}\n{marks}{note}"
        )
        out.append(text_message("user", body, "attachment", attachment=attachment))
    return out
