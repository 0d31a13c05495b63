"""A message's JSON text goes out over a stream in slices: the short pieces the encoder
made written together, the long ones cut, the text as it was."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baton.lsp.dispatch import writing

SLICE = 10
PIECES = st.lists(st.text(alphabet="ab", max_size=3 * SLICE), max_size=12)


@given(PIECES)
def test_the_slices_are_the_text_each_at_most_a_slice_long(pieces: list[str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writing, "WRITE_SLICE", SLICE)
        out = list(writing._slices(pieces))
    assert "".join(out) == "".join(pieces)
    assert all(len(piece) == SLICE for piece in out[:-1])  # as few writes as can be
    assert all(0 < len(piece) <= SLICE for piece in out[-1:])


def test_an_answer_of_many_short_pieces_is_written_in_a_few_slices() -> None:
    """A thousand messages' pieces (`encoded.py` makes one per message beside a long one)
    were written one by one: a system call each. They go out in slices of a MB."""
    pieces = ["x" * 500, ", "] * 4_000  # 2,008,000 characters
    out = list(writing._slices(pieces))
    assert "".join(out) == "".join(pieces)
    assert [len(piece) for piece in out] == [writing.WRITE_SLICE, 2_008_000 - writing.WRITE_SLICE]
