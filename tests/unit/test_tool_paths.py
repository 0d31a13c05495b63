"""The file a path names: spaces around a path are the model's, unless a name holds them."""

from __future__ import annotations

from pathlib import Path

from tool_calls import call, ctx


async def test_a_name_ending_in_a_space_is_that_file_not_its_neighbour(tmp_path: Path) -> None:
    """Every path was stripped of its spaces: `notes ` (listed so by list_dir) read and
    edited `notes`, another file."""
    (tmp_path / "notes").write_text("plain\n")
    (tmp_path / "notes ").write_text("spaced\n")
    listed = await call(ctx(tmp_path), "list_dir", path=".")
    assert listed.text.split("\n") == ["notes", "notes "]
    read = await call(ctx(tmp_path), "read_file", path="notes ")
    assert read.text == "     1\tspaced"
    change = {"command": "str_replace", "old_str": "spaced", "new_str": "edited"}
    edited = await call(ctx(tmp_path), "str_replace_based_edit_tool", path="notes ", **change)
    assert edited.text == "Applied: Edit notes  (+1 -1) at line 1."
    assert (tmp_path / "notes ").read_text() == "edited\n"
    assert (tmp_path / "notes").read_text() == "plain\n"
    stripped = await call(ctx(tmp_path), "read_file", path="  notes\n")
    assert stripped.text == "     1\tplain"  # no such name: the spaces were the model's
