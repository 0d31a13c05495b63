"""A contained file's text for the tools: the editor's when it has the file open, else the
disk's, refused when binary, over the bound, not UTF-8 (UTF-16 said so) or holding a
credential."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from baton.core.compaction.working_set.credentials import credential_in
from baton.core.compaction.working_set.file_text import SNIFF_BYTES, decode_utf8
from baton.core.conversation.files import NotRegularFile, open_read
from baton.core.tools.host import MAX_FILE_BYTES, ToolHost
from baton.core.tools.workspace import Located, ToolError, Unreadable, exists, glob_hint, why


@dataclass(frozen=True)
class FileText:
    text: str
    from_editor: bool
    path: Path  # the file as the text's source names it (where an edit of the text goes)


async def read_contained(located: Located, host: ToolHost | None) -> FileText:
    """The file's text: the editor's (unsaved changes included) when it has it open, else
    the disk's; refused when binary, too large, not UTF-8 or holding a credential, or
    when neither has the file."""
    found = await read_any(located, host)
    if found is None:
        raise ToolError(f"{located.shown} does not exist{glob_hint(located.shown)}")
    return found


async def read_any(located: Located, host: ToolHost | None) -> FileText | None:
    """As `read_contained`, None when the file is neither on the disk nor open in the
    editor (a buffer not saved yet is a file). A folder, a FIFO, a device or a file over
    the bound is refused before the editor is asked: an ACP client reads what it is asked
    (a FIFO waits for a writer, a huge file comes whole)."""
    on_disk = exists(located.real, located.shown)
    if on_disk:
        _check_file(located)
    if host is not None:
        for path in _names(located):
            live = await host.read_text(path)
            if live is None:
                continue
            if "\x00" in live:
                raise ToolError(f"{located.shown} is a binary file")
            return _shown(located, live, True, path)
    return _shown(located, _read_checked(located), False, located.path) if on_disk else None


def _shown(located: Located, text: str, from_editor: bool, path: Path) -> FileText:
    kind = credential_in(text)
    if kind is not None:
        raise ToolError(f"{located.shown} looks like it holds {kind}; it is not shown")
    return FileText(text, from_editor, path)


def _names(located: Located) -> list[Path]:
    """The names the editor may have the file open by: as given (through a link), then
    as its folder names it (`alias.py`, a link to `real.py`, is open as `alias.py`)."""
    given = located.named
    return [given, located.path] if given is not None and given != located.path else [located.path]


def _check_file(located: Located) -> None:
    """ToolError unless `located` is a regular file within the size a tool reads."""
    path = located.real
    try:
        if path.is_dir():
            raise ToolError(f"{located.shown} is a folder (list it with list_dir)")
        if not path.is_file():
            raise ToolError(f"{located.shown} is not a regular file")
        size = path.stat().st_size
    except OSError as exc:
        said = why(exc)
        raise Unreadable(f"{located.shown} cannot be read ({said})", said) from None
    if size > MAX_FILE_BYTES:
        raise ToolError(
            f"{located.shown} is {size:,} bytes, over the {MAX_FILE_BYTES:,} bytes a tool reads"
        )


def read_disk(located: Located) -> str:
    _check_file(located)
    return _read_checked(located)


def _utf16(data: bytes) -> bool:
    try:
        data.decode("utf-16")  # the byte order mark says which end first
    except UnicodeDecodeError:
        return False
    return True


def _read_checked(located: Located) -> str:
    """The text of a file `_check_file` passed, as the file opened is (another program may
    have put a FIFO or a larger file in its place since the check): never waited on, read
    no further than the bound."""
    try:
        with open_read(located.real) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except NotRegularFile:
        raise ToolError(f"{located.shown} is not a regular file") from None
    except OSError as exc:
        said = why(exc)
        raise Unreadable(f"{located.shown} cannot be read ({said})", said) from None
    if len(data) > MAX_FILE_BYTES:
        raise ToolError(f"{located.shown} is over the {MAX_FILE_BYTES:,} bytes a tool reads")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) and _utf16(data):  # NULs: no binary
        raise ToolError(
            f"{located.shown} is UTF-16 text (its byte order mark says so): the tools read "
            "UTF-8 only"
        )
    if decode_utf8(data[:SNIFF_BYTES], True) is None and b"\x00" in data[:SNIFF_BYTES]:
        raise ToolError(f"{located.shown} is a binary file")
    text = decode_utf8(data, False)
    if text is None:
        raise ToolError(f"{located.shown} is a binary file or not UTF-8 text")
    return text
