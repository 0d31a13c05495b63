"""An edit keeps the file's line ends, whatever the model writes: \\r\\n and lone \\r files
stay so when text is replaced, inserted or put after a last line without one."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_calls import call, ctx


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("end", [b"\r\n", b"\r", b"\n"])
async def test_a_one_line_match_replaced_by_several_lines_keeps_the_line_ends(
    root: Path, end: bytes
) -> None:
    """newText was converted only when oldText had needed converting: `one\\ntwo` went
    into a \\r\\n file with a bare \\n."""
    (root / "a.txt").write_bytes(b"alpha" + end + b"beta" + end)
    result = await call(
        ctx(root),
        "edit_file",
        model="claude-3-5-sonnet",
        path="a.txt",
        oldText="alpha",
        newText="one\ntwo",
    )
    assert not result.is_error, result.text
    assert (root / "a.txt").read_bytes() == end.join([b"one", b"two", b"beta", b""])


async def test_several_lines_of_a_cr_file_match_as_read_file_shows_them(root: Path) -> None:
    (root / "mac.txt").write_bytes(b"a\rb\rc\r")
    result = await call(
        ctx(root),
        "edit_file",
        model="claude-3-5-sonnet",
        path="mac.txt",
        oldText="a\nb",
        newText="x\ny",
    )
    assert not result.is_error, result.text
    assert (root / "mac.txt").read_bytes() == b"x\ry\rc\r"


@pytest.mark.parametrize("end", [b"\r\n", b"\r"])
async def test_an_insert_after_a_last_line_without_its_end_keeps_the_line_ends(
    root: Path, end: bytes
) -> None:
    """The last line got a bare \\n before the inserted one."""
    (root / "a.txt").write_bytes(b"alpha" + end + b"beta")
    result = await call(
        ctx(root),
        "str_replace_based_edit_tool",
        path="a.txt",
        command="insert",
        insert_line=2,
        new_str="gamma\ndelta",
    )
    assert not result.is_error, result.text
    assert (root / "a.txt").read_bytes() == end.join([b"alpha", b"beta", b"gamma", b"delta", b""])


async def test_an_insert_at_the_top_of_a_file_with_a_bom_keeps_the_bom_first(root: Path) -> None:
    """The byte order mark is the file's encoding, not text of its first line: an insert
    at line 0 went before it, leaving the file without one and a U+FEFF inside line 2."""
    (root / "b.py").write_bytes(b"\xef\xbb\xbfx = 1\n")
    result = await call(
        ctx(root),
        "str_replace_based_edit_tool",
        path="b.py",
        command="insert",
        insert_line=0,
        new_str="# head",
    )
    assert not result.is_error, result.text
    assert (root / "b.py").read_bytes() == b"\xef\xbb\xbf# head\nx = 1\n"


async def test_lines_of_a_file_of_mixed_line_ends_match_as_read_file_shows_them(
    root: Path,
) -> None:
    """A text quoted across a \\r\\n line and a \\n line was answered "no match": it was
    looked for with \\n, then with the file's first line end only."""
    (root / "mixed.txt").write_bytes(b"a\r\nb\nc\r\nd\n")
    result = await call(
        ctx(root),
        "str_replace_based_edit_tool",
        command="str_replace",
        path="mixed.txt",
        old_str="b\nc\nd",
        new_str="B\nC",
    )
    assert result.text == "Applied: Edit mixed.txt (+2 -3) at line 2.", result.text
    assert (root / "mixed.txt").read_bytes() == b"a\r\nB\nC\n"


async def test_a_text_quoted_twice_in_a_file_of_mixed_line_ends_is_ambiguous(root: Path) -> None:
    (root / "twice.txt").write_bytes(b"x\r\ny\nx\ny\r\n")
    result = await call(
        ctx(root),
        "str_replace_based_edit_tool",
        command="str_replace",
        path="twice.txt",
        old_str="x\ny",
        new_str="z",
    )
    assert result.is_error
    assert "occurs 2 times" in result.text, result.text


@pytest.mark.parametrize("end", [b"\r\n", b"\n"])
async def test_a_text_that_starts_with_a_line_end_matches_it_once(root: Path, end: bytes) -> None:
    (root / "a.txt").write_bytes(b"x" + end + b"y" + end)
    result = await call(
        ctx(root),
        "str_replace_based_edit_tool",
        command="str_replace",
        path="a.txt",
        old_str="\ny",
        new_str="\nz",
    )
    assert not result.is_error, result.text
    assert (root / "a.txt").read_bytes() == b"x" + end + b"z" + end


@pytest.mark.parametrize("end", [b"\r\n", b"\r"])
async def test_a_create_over_a_file_keeps_its_line_ends(root: Path, end: bytes) -> None:
    """The file was written with the model's \\n line ends on the disk (a whole Windows file
    changed in every line), while the editor, applying the same edit to its document,
    keeps the document's own."""
    (root / "w.txt").write_bytes(b"a" + end + b"b" + end)
    result = await call(
        ctx(root), "str_replace_based_edit_tool", command="create", path="w.txt", file_text="x\ny\n"
    )
    assert not result.is_error, result.text
    assert (root / "w.txt").read_bytes() == b"x" + end + b"y" + end
