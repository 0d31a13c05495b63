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


class Counting(str):
    """A text that counts how often it is indexed or sliced."""

    looks = 0

    def __getitem__(self, key: object) -> str:
        Counting.looks += 1
        return str.__getitem__(self, key)  # type: ignore[index]


def test_a_large_file_is_compared_in_slices_not_one_character_at_a_time() -> None:
    """The common head and tail were found one character at a time in Python: a 5 MB
    file edited in its middle held the server's event loop (every request, a cancel
    included) for about 1.7 s. Halving compares slices: a few dozen looks."""
    text = "".join(f"line {n}\n" for n in range(100_000))
    middle = len(text) // 2
    before, after = Counting(text), Counting(text[:middle] + "X" + text[middle:])
    Counting.looks = 0
    _, new = minimal_edit(before, after)
    assert new == "X" and applied(text, text[:middle] + "X" + text[middle:]) == after
    assert Counting.looks < 200, Counting.looks
