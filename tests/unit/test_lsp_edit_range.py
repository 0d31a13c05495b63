"""The one range the LSP host sends for an edit: positions as the editor counts them (lines
broken at \\n, \\r\\n and \\r; columns in UTF-16 code units), so the change lands in place."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from baton.lsp.features.tool_host import minimal_edit

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def applied(before: str, after: str) -> str:
    """`before` with the range and text `minimal_edit` gives put in, as an editor would."""
    where, text = minimal_edit(before, after)
    lines = _LINE.findall(before) or [""]
    if lines[-1].endswith(("\r", "\n")):
        lines.append("")

    def offset(line: int, character: int) -> int:
        head = sum(len(x) for x in lines[:line])
        units = lines[line].encode("utf-16-le")[: character * 2]
        return head + len(units.decode("utf-16-le"))

    start = offset(where.start.line, where.start.character)
    end = offset(where.end.line, where.end.character)
    return before[:start] + text + before[end:]


def test_a_change_on_the_second_line_of_a_cr_file_is_on_line_1() -> None:
    """Only \\n was counted: the range fell on line 0, past its end."""
    where, text = minimal_edit("alpha\rbeta\rgamma\r", "alpha\rBETA\rgamma\r")
    assert text == "BETA"
    assert (where.start.line, where.start.character) == (1, 0)
    assert (where.end.line, where.end.character) == (1, 4)
    assert applied("alpha\rbeta\rgamma\r", "alpha\rBETA\rgamma\r") == "alpha\rBETA\rgamma\r"


def test_a_range_never_splits_a_crlf_line_end() -> None:
    before, after = "a\r\nb\r\n", "a\rX\nb\r\n"
    where, _ = minimal_edit(before, after)
    assert where.start.line == 0 and where.start.character == 1
    assert applied(before, after) == after


@given(
    st.text(alphabet="ab\r\n😀é", max_size=12),
    st.text(alphabet="ab\r\n😀é", max_size=12),
)
def test_the_range_puts_in_exactly_the_new_text(before: str, after: str) -> None:
    assert applied(before, after) == after
