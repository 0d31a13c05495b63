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


async def test_a_path_ending_in_a_slash_is_a_folder_no_edit_makes_a_file_of(
    tmp_path: Path,
) -> None:
    """`create` of `docs/` made a file named docs (the slash was dropped with the path's
    spelling), where every later file of docs/ could then not be made."""
    create = {"command": "create", "path": "docs/", "file_text": "# Docs\n"}
    made = await call(ctx(tmp_path), "str_replace_based_edit_tool", **create)
    assert made.is_error
    assert made.text == "Error: 'docs/' names a folder (it ends in /): give the file's path"
    assert not (tmp_path / "docs").exists()
    filled = await call(
        ctx(tmp_path), "edit_file", model="claude-3-5-sonnet", path="a/b/", oldText="", newText="x"
    )
    assert filled.text == "Error: 'a/b/' names a folder (it ends in /): give the file's path"
    assert not (tmp_path / "a").exists()


async def test_a_file_in_the_middle_of_a_path_is_said_before_the_user_is_asked(
    tmp_path: Path,
) -> None:
    """`create` of `src/x.py/y.py` asked the user, then answered "the file cannot be read
    (NotADirectoryError)" (over ACP: "file changed meanwhile")."""
    from baton.core.settings import ToolsSettings
    from baton.core.tools.host import DiskHost

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.py").write_text("x = 1\n")
    host = DiskHost(answer="allowOnce")
    context = ctx(tmp_path, host, ToolsSettings())
    create = {"command": "create", "path": "src/x.py/deep/y.py", "file_text": "y = 1\n"}
    made = await call(context, "str_replace_based_edit_tool", **create)
    assert made.text == (
        "Error: src/x.py/deep/y.py cannot be made: src/x.py is a file, not a folder"
    ), made.text
    assert host.asked == []
    assert (tmp_path / "src" / "x.py").read_text() == "x = 1\n"


async def test_an_absolute_glob_inside_the_workspace_matches_as_a_relative_one(
    tmp_path: Path,
) -> None:
    """A path may be given absolute; a glob so given matched nothing (`No files match
    /…/src/*.py.`), and one outside the workspace was answered as if searched."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.py").write_text("x = 1\n")
    found = await call(ctx(tmp_path), "find_files", pattern=f"{tmp_path}/src/*.py")
    assert found.text == "src/x.py", found.text
    hits = await call(ctx(tmp_path), "search_text", pattern="x", glob=f"{tmp_path}/**/*.py")
    assert hits.text == "src/x.py:1: x = 1", hits.text
    (tmp_path / "top.py").write_text("top = 1\n")
    top = await call(ctx(tmp_path), "find_files", pattern=f"{tmp_path}/*.py")
    assert top.text == "top.py", top.text  # the folder's own files, as `*.py` in a shell
    uri = await call(ctx(tmp_path), "find_files", pattern=f"{tmp_path.as_uri()}/src/*.py")
    assert uri.text == "src/x.py", uri.text  # a path may be a file: URI too
    outside = await call(ctx(tmp_path), "find_files", pattern="/etc/*.conf")
    assert outside.is_error
    assert outside.text == "Error: '/etc/*.conf' is outside the workspace folders"


async def test_an_edit_never_makes_a_name_no_listing_can_show(tmp_path: Path) -> None:
    """`create` of `src/a\\nb.py` made a file whose name holds a line break: list_dir and
    find_files leave such names out (they read as two entries), so it could not be found."""
    create = {"command": "create", "path": "a\nb.py", "file_text": "x = 1\n"}
    made = await call(ctx(tmp_path), "str_replace_based_edit_tool", **create)
    assert made.text == (
        "Error: 'a\\nb.py' holds a line break: a file so named is never listed (list_dir "
        "and find_files leave such names out)"
    ), made.text
    assert list(tmp_path.iterdir()) == []


async def test_a_new_file_under_a_tilde_is_not_made_in_the_workspace(tmp_path: Path) -> None:
    """`create` of `~/notes.md` made a folder named ~ in the workspace (which a shell's
    `rm -rf ~` meant for it would take as the home folder), where the model meant its home."""
    create = {"command": "create", "path": "~/notes.md", "file_text": "x\n"}
    made = await call(ctx(tmp_path), "str_replace_based_edit_tool", **create)
    assert made.text == (
        "Error: '~/notes.md': ~ is the home folder to a shell, not a folder here; give the "
        "path from a workspace folder, or absolute"
    ), made.text
    assert list(tmp_path.iterdir()) == []
    backup = {"command": "create", "path": "~backup.txt", "file_text": "x\n"}
    assert not (await call(ctx(tmp_path), "str_replace_based_edit_tool", **backup)).is_error
    (tmp_path / "~").mkdir()  # one that is there is a folder like any
    made = await call(ctx(tmp_path), "str_replace_based_edit_tool", **create)
    assert not made.is_error, made.text


async def test_a_path_with_a_line_number_says_how_to_read_from_that_line(
    tmp_path: Path,
) -> None:
    """`app.py:42`, as compilers and search results name a line, was answered only
    "app.py:42 does not exist"."""
    (tmp_path / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 51)))
    read = await call(ctx(tmp_path), "read_file", path="app.py:42")
    assert read.text == (
        "Error: app.py:42 does not exist (to read app.py from line 42, give startLine 42)"
    ), read.text
    (tmp_path / "app.py:42").write_text("a name like any\n")
    assert (await call(ctx(tmp_path), "read_file", path="app.py:42")).text.endswith("like any")


async def test_a_file_uri_is_one_whatever_the_case_of_its_scheme(tmp_path: Path) -> None:
    """`FILE:///…/a.py` (a scheme is case-insensitive) was taken for a relative path, a
    folder named 'FILE:' in the workspace, which a create then made."""
    (tmp_path / "a.py").write_text("x = 1\n")
    uri = "FILE://" + (tmp_path / "a.py").as_posix()
    assert (await call(ctx(tmp_path), "read_file", path=uri)).text == "     1\tx = 1"
    create = {"command": "create", "path": "File://" + (tmp_path / "b.py").as_posix()}
    made = await call(ctx(tmp_path), "str_replace_based_edit_tool", file_text="y\n", **create)
    assert not made.is_error, made.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]
