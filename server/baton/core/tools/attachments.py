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
from baton.core.tools.file_reads import read_contained
from baton.core.tools.host import ToolHost
from baton.core.tools.workspace import ToolError, Workspace, split_lines

MAX_ATTACHMENT_CHARS = 100_000
MAX_ATTACHMENTS = 20


@dataclass(frozen=True)
class EditorAttachment:
    kind: Literal["file", "selection"]
    path: str  # an absolute path or a file: URI
    text: str | None = None  # the editor's text; None: read it
    range: LineRange | None = None
    language_id: str | None = None


def _lines(text: str, where: LineRange | None, shown: str) -> tuple[str, LineRange | None]:
    """The range's lines of `text`, and the range they are (its end at the file's last
    line): a range past the end is refused, never attached as nothing. A byte order mark
    is left out, as the editor's lines have none (`split_lines`)."""
    if where is None:
        return text.removeprefix("\ufeff"), None
    if where.end_line < where.start_line:
        raise ToolError("range.endLine must not be before range.startLine")
    lines = split_lines(text, keepends=True)  # the editor's lines, as read_file numbers them
    last = max(len(lines), 1)  # an empty file has its line 1, as the editor shows it
    if where.start_line > last:
        raise ToolError(
            f"range.startLine {where.start_line} is past the end of {shown} ({len(lines)} lines)"
        )
    end = min(where.end_line, last)
    got = LineRange(start_line=where.start_line, end_line=end)
    return "".join(lines[where.start_line - 1 : end]), got


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
            given, where = item.text, item.range
            if given is None:
                # text read whole, then the range: the editor sends the range's text itself
                read = (await read_contained(located, host)).text
                given, where = _lines(read, item.range, located.shown)
            text = given
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
        attachment = Attachment(path=str(located.path), label=label, kind=item.kind, range=where)
        lines = ""
        if where is not None:
            lines = f" (lines {where.start_line}-{where.end_line})"
        marks = fence(text)
        body = (
            f"{attachment.heading()}{lines}\n{marks}{item.language_id or ''}\n"
            f"{text.rstrip(chr(10))}\n{marks}{note}"
        )
        out.append(text_message("user", body, "attachment", attachment=attachment))
    return out
