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


@pytest.mark.parametrize(
    "edit",
    [
        {"command": "str_replace", "old_str": "x = 1", "new_str": "x = 1"},
        {"command": "create", "file_text": "x = 1\n"},
    ],
)
async def test_an_edit_that_changes_nothing_is_said_before_the_user_is_asked(
    tmp_path: Path, edit: dict[str, str]
) -> None:
    """It asked the user about an empty diff, then answered 'Applied: Edit f.py (+0 -0)'."""
    from baton.core.settings import ToolsSettings
    from baton.core.tools.host import DiskHost

    (tmp_path / "f.py").write_text("x = 1\n")
    host = DiskHost(answer="allowOnce")
    result = await call(ctx(tmp_path, host, ToolsSettings()), EDIT, path="f.py", **edit)
    assert result.is_error
    assert result.text == "Error: the edit changes nothing: f.py already holds that text"
    assert host.asked == []


@pytest.mark.parametrize(
    "edit",
    [
        {"command": "str_replace", "path": "f.py", "old_str": "1", "new_str": "\ud800"},
        {"command": "create", "path": "g.py", "file_text": "\udc80x"},
    ],
)
async def test_a_text_no_utf8_file_can_hold_changes_nothing(
    tmp_path: Path, edit: dict[str, str]
) -> None:
    """A lone surrogate in the new text: the file was opened for writing, then the text
    failed to encode, so f.py was left empty (and g.py made empty), answered
    'str_replace_based_edit_tool failed (UnicodeEncodeError)'."""
    (tmp_path / "f.py").write_text("x = 1\n")
    result = await call(ctx(tmp_path), EDIT, **edit)
    assert result.text == (
        "Error: the new text holds a lone surrogate, which no UTF-8 file can hold; "
        "nothing was changed"
    ), result.text
    assert (tmp_path / "f.py").read_text() == "x = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.py"]
