"""The text editor tool's `view_range`: [start, end], 1-based, an end of -1 reading to the
end; anything else is told in the tool's own words (it has no startLine or endLine)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_calls import call, ctx

EDITOR = "str_replace_based_edit_tool"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.py").write_text("one\ntwo\nthree\n")
    return folder


@pytest.mark.parametrize(
    ("view_range", "shown"),
    [([2, -1], "     2\ttwo\n     3\tthree"), ([1, 1], "     1\tone\n[lines 1-1 of 3]")],
)
async def test_a_range_reads_its_lines(root: Path, view_range: list[int], shown: str) -> None:
    result = await call(ctx(root), EDITOR, command="view", path="a.py", view_range=view_range)
    assert result.text == shown


@pytest.mark.parametrize(
    "view_range", [["1", "2"], [0, 2], [3, 1], [1, 0], [1], "1-2", [1.0, 2.0], [True, 2]]
)
async def test_a_range_that_is_no_range_is_refused_naming_view_range(
    root: Path, view_range: object
) -> None:
    """It was read as startLine/endLine and refused in their names ("startLine must be a
    positive integer"), or, when not a list of two, ignored: the whole file was shown."""
    result = await call(ctx(root), EDITOR, command="view", path="a.py", view_range=view_range)
    assert result.is_error, result.text
    assert "view_range" in result.text and "startLine" not in result.text, result.text
