"""read_file cuts a line at 2,000 characters and tells the model where the rest is and how
to read it (`startColumn`): following the note reads the whole line."""

from __future__ import annotations

import re
from pathlib import Path

from test_workspace_tools import call, ctx, root  # noqa: F401 (the fixture)

LINE = "".join(f"{n:05d}," for n in range(1_000))  # 6,000 characters, none alike


async def test_a_cut_line_is_read_to_its_end_by_following_the_note(
    root: Path,  # noqa: F811
) -> None:
    """The note said only "[1 line(s) longer than 2000 characters were cut]": the rest of
    a long line (minified code, a line of JSON) could not be read at all."""
    (root / "wide.js").write_text("short\n" + LINE + "\nlast\n")
    result = await call(ctx(root), "read_file", path="wide.js")
    assert "     1\tshort\n" in result.text and "     3\tlast" in result.text
    assert "     2\t" + LINE[:2_000] + " [line cut at character 2,000 of 6,000]" in result.text
    pieces = []
    for _ in range(5):
        pieces.append(line_two(result.text))
        how = re.search(r"give startLine=(\d+), endLine=(\d+), startColumn=(\d+)", result.text)
        if how is None:
            break
        asked = {"startLine": int(how[1]), "endLine": int(how[2]), "startColumn": int(how[3])}
        result = await call(ctx(root), "read_file", path="wide.js", **asked)
    assert pieces == [LINE[:2_000], LINE[2_000:4_000], LINE[4_000:]]


def line_two(text: str) -> str:
    entry = next(line for line in text.splitlines() if line.startswith("     2\t"))
    return entry.removeprefix("     2\t").split(" [line cut")[0]


async def test_a_column_past_a_lines_end_shows_it_empty_and_a_bad_one_is_refused(
    root: Path,  # noqa: F811
) -> None:
    (root / "two.txt").write_text("abc\n" + "x" * 10 + "\n")
    result = await call(ctx(root), "read_file", path="two.txt", startColumn=5)
    assert result.text == "     1\t\n     2\txxxxxx"
    bad = await call(ctx(root), "read_file", path="two.txt", startColumn=0)
    assert bad.is_error and "startColumn must be a positive integer" in bad.text
