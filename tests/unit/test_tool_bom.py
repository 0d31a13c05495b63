"""A UTF-8 byte order mark is the file's encoding, as editors take it, not a character of
its first line: the tools read and search the file without it, and an edit keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_calls import call, ctx

BOM = b"\xef\xbb\xbf"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "b.py").write_bytes(BOM + b"import os\nimport re\n")
    return folder


async def test_a_search_anchored_at_a_line_start_finds_the_first_line(root: Path) -> None:
    """`^import` found line 2 only: line 1 started with U+FEFF."""
    result = await call(ctx(root), "search_text", pattern="^import")
    assert result.text.splitlines() == ["b.py:1: import os", "b.py:2: import re"], result.text


async def test_read_file_shows_the_first_line_without_the_mark(root: Path) -> None:
    """Line 1 was shown as '\\ufeffimport os', which the editor's copy of the file (open
    there) never holds."""
    result = await call(ctx(root), "read_file", path="b.py")
    assert result.text == "     1\timport os\n     2\timport re", repr(result.text)


async def test_a_create_over_a_file_with_the_mark_keeps_it(root: Path) -> None:
    """The file lost its mark on the disk, while the editor, applying the same edit to its
    document, keeps the file's encoding."""
    create = {"command": "create", "path": "b.py", "file_text": "import sys\n"}
    result = await call(ctx(root), "str_replace_based_edit_tool", **create)
    assert not result.is_error, result.text
    assert (root / "b.py").read_bytes() == BOM + b"import sys\n"


async def test_a_file_holding_only_the_mark_is_empty_and_filled(root: Path) -> None:
    """read_file says such a file is empty; edit_file's empty oldText, which fills an empty
    file, was answered "the text to replace must not be empty"."""
    (root / "e.py").write_bytes(BOM)
    assert (await call(ctx(root), "read_file", path="e.py")).text == "e.py is empty."
    filled = await call(
        ctx(root), "edit_file", model="claude-3-5-sonnet", path="e.py", oldText="", newText="x\n"
    )
    assert not filled.is_error, filled.text
    assert (root / "e.py").read_bytes() == BOM + b"x\n"


async def test_a_whole_file_attached_from_the_disk_has_no_mark(root: Path) -> None:
    """Its block began with U+FEFF, as a range of it (split_lines) and the editor's copy
    of it do not."""
    from baton.core.settings_lists import DEFAULT_EXCLUDES
    from baton.core.tools.attachments import EditorAttachment, attachment_messages
    from baton.core.tools.workspace import Workspace

    item = EditorAttachment("file", str(root / "b.py"))
    [message] = await attachment_messages([item], Workspace([root], DEFAULT_EXCLUDES), None)
    assert message.text() == f"Attached file: {root / 'b.py'}\n```\nimport os\nimport re\n```"


@pytest.mark.parametrize("mark", [b"\xff\xfe", b"\xfe\xff"])
async def test_a_utf16_file_is_said_to_be_text_the_tools_cannot_read(
    root: Path, mark: bytes
) -> None:
    """It was called 'a binary file' (its every other byte is NUL), so the model told the
    user a text file of theirs was binary."""
    codec = "utf-16-le" if mark == b"\xff\xfe" else "utf-16-be"
    (root / "w.txt").write_bytes(mark + "hello\r\n".encode(codec))
    result = await call(ctx(root), "read_file", path="w.txt")
    assert result.text == (
        "Error: w.txt is UTF-16 text (its byte order mark says so): the tools read UTF-8 only"
    ), result.text
