"""Which text an edit replaces: the text to replace must match in one place only."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_calls import call, ctx

EDIT = "str_replace_based_edit_tool"


@pytest.mark.parametrize(
    ("text", "old", "times"),
    [
        ("}\n}\n}\n", "}\n}\n", "2 times"),
        ("aaaa", "aa", "3 times"),
        ("x = 1\nx = 1\nx = 1\n", "x = 1\nx = 1", "2 times"),
        ("a" * 5000, "aa", "1,000 times or more"),  # counted no further
    ],
)
async def test_text_that_matches_in_overlapping_places_is_refused_as_ambiguous(
    tmp_path: Path, text: str, old: str, times: str
) -> None:
    """str.count counts matches that do not overlap: '}\\n}\\n' in three closing braces
    counted once, so the edit went to the first two braces although the model may have
    meant the last two, and was told it applied."""
    (tmp_path / "f.js").write_text(text)
    result = await call(
        ctx(tmp_path), EDIT, command="str_replace", path="f.js", old_str=old, new_str="X"
    )
    assert result.is_error
    assert result.text == (
        f"Error: the text to replace occurs {times} in f.js; include more lines so it matches once"
    )
    assert (tmp_path / "f.js").read_text() == text


async def test_text_that_matches_once_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "f.js").write_text("}\n}\n// end\n")
    result = await call(
        ctx(tmp_path), EDIT, command="str_replace", path="f.js", old_str="}\n}\n", new_str="}\n"
    )
    assert result.text == "Applied: Edit f.js (+0 -1) at line 1."
    assert (tmp_path / "f.js").read_text() == "}\n// end\n"
