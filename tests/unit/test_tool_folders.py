"""The tools in a workspace of several folders: a path is shown with its folder's name in
front, and a path given that way reaches that folder's file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.messages import ToolUseBlock
from baton.core.settings import ToolsSettings
from baton.core.settings_lists import DEFAULT_EXCLUDES
from baton.core.tools.calls import answer
from baton.core.tools.catalog import workspace_registry
from baton.core.tools.host import DiskHost
from baton.core.tools.registry import ToolContext, ToolResult
from baton.core.tools.workspace import Workspace

AUTO_EDITS = ToolsSettings.model_validate({"permissions": {"edit": "auto"}})


@pytest.fixture
def folders(tmp_path: Path) -> list[Path]:
    front, back = tmp_path / "front", tmp_path / "back"
    for folder in (front, back):
        (folder / "src").mkdir(parents=True)
        (folder / "src" / "x.py").write_text(f"{folder.name} = 1\n")
    (back / "src" / "only.py").write_text("only = 1\n")
    return [front, back]


async def call(folders: list[Path], name: str, **input: Any) -> ToolResult:
    context = ToolContext("s1", Workspace(folders, DEFAULT_EXCLUDES), DiskHost(), AUTO_EDITS)
    use = ToolUseBlock(id="toolu_1", name=name, input=input)
    return await answer(use, workspace_registry("claude-sonnet-4-5"), context, set())


async def test_the_paths_the_tools_show_reach_the_files_they_name(folders: list[Path]) -> None:
    """find_files and search_text show `back/src/x.py`, list_dir `back/`; read_file, list_dir,
    search_text and the edits answered each such path "does not exist"."""
    found = await call(folders, "find_files", pattern="**/x.py")
    assert found.text.splitlines() == ["front/src/x.py", "back/src/x.py"]
    read = await call(folders, "read_file", path="back/src/x.py")
    assert read.text == "     1\tback = 1", read.text
    assert (await call(folders, "read_file", path="back/src/only.py")).text == "     1\tonly = 1"
    listed = await call(folders, "list_dir", path="back/src")
    assert listed.text.splitlines() == ["only.py", "x.py"]
    hits = await call(folders, "search_text", pattern="= 1", path="back")
    assert hits.text.splitlines() == ["back/src/only.py:1: only = 1", "back/src/x.py:1: back = 1"]
    edit = {"command": "str_replace", "path": "back/src/x.py", "old_str": "1", "new_str": "2"}
    edited = await call(folders, "str_replace_based_edit_tool", **edit)
    assert edited.text == "Applied: Edit back/src/x.py (+1 -1) at line 1.", edited.text
    assert (folders[1] / "src" / "x.py").read_text() == "back = 2\n"
    assert (folders[0] / "src" / "x.py").read_text() == "front = 1\n"


async def test_a_path_without_a_folders_name_is_still_looked_for_in_each(
    folders: list[Path],
) -> None:
    assert (await call(folders, "read_file", path="src/x.py")).text == "     1\tfront = 1"
    assert (await call(folders, "read_file", path="src/only.py")).text == "     1\tonly = 1"
    searched = await call(folders, "search_text", pattern="only", path="back/src/only.py")
    assert searched.text == "back/src/only.py:1: only = 1"


def test_a_file_read_by_its_folders_name_is_a_file_the_session_touched(
    folders: list[Path],
) -> None:
    """As the tools read it: the restore looked for `back/src/only.py` under each folder,
    found none, and never brought the file back after a compaction."""
    from baton.core.compaction.working_set.session_files import session_files
    from baton.core.conversation.messages import Message, ToolResultBlock

    use = ToolUseBlock(id="t1", name="read_file", input={"path": "back/src/only.py"})
    messages = [
        Message(role="assistant", content=[use]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="1\tonly")]),
    ]
    found = session_files(messages, folders)
    assert [f.path for f in found] == [folders[1] / "src" / "only.py"]


@pytest.fixture
def twins(tmp_path: Path) -> list[Path]:
    """Two workspace folders of the same name, `one/app` and `two/app`."""
    folders = [tmp_path / "one" / "app", tmp_path / "two" / "app"]
    for folder in folders:
        folder.mkdir(parents=True)
        (folder / "x.py").write_text(f"{folder.parent.name} = 1\n")
    return folders


async def test_folders_of_the_same_name_are_told_apart_by_their_parents(
    twins: list[Path],
) -> None:
    """Both were `app`: find_files listed `app/x.py` twice, and that path, read or edited,
    always reached the first folder's file."""
    found = await call(twins, "find_files", pattern="**/x.py")
    assert found.text.splitlines() == ["one/app/x.py", "two/app/x.py"], found.text
    hits = await call(twins, "search_text", pattern="= 1")
    assert hits.text.splitlines() == ["one/app/x.py:1: one = 1", "two/app/x.py:1: two = 1"]
    roots = await call(twins, "list_dir")
    assert roots.text.splitlines() == [f"one/app/  ({twins[0]})", f"two/app/  ({twins[1]})"]
    assert (await call(twins, "list_dir", path="two/app")).text == "x.py"
    assert (await call(twins, "read_file", path="two/app/x.py")).text == "     1\ttwo = 1"
    assert (await call(twins, "read_file", path="one/app/x.py")).text == "     1\tone = 1"
    edit = {"command": "str_replace", "path": "two/app/x.py", "old_str": "1", "new_str": "2"}
    edited = await call(twins, "str_replace_based_edit_tool", **edit)
    assert edited.text.startswith("Applied: Edit two/app/x.py (+1 -1)"), edited.text
    assert (twins[1] / "x.py").read_text() == "two = 2\n"
    assert (twins[0] / "x.py").read_text() == "one = 1\n"


async def test_a_search_in_one_of_two_folders_of_the_same_name_shows_its_own_paths(
    twins: list[Path],
) -> None:
    hits = await call(twins, "search_text", pattern="= 1", path="two/app")
    assert hits.text == "two/app/x.py:1: two = 1"
    found = await call(twins, "search_text", pattern="= 1", path="one/app/x.py")
    assert found.text == "one/app/x.py:1: one = 1"


def test_a_file_read_in_the_second_of_two_folders_of_the_same_name_is_touched_there(
    twins: list[Path],
) -> None:
    from baton.core.compaction.working_set.session_files import session_files
    from baton.core.conversation.messages import Message, ToolResultBlock

    use = ToolUseBlock(id="t1", name="read_file", input={"path": "two/app/x.py"})
    messages = [
        Message(role="assistant", content=[use]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="1\ttwo")]),
    ]
    assert [f.path for f in session_files(messages, twins)] == [twins[1] / "x.py"]


async def test_a_path_by_a_name_two_folders_share_says_how_to_name_them(
    twins: list[Path],
) -> None:
    """`app/x.py` once named the first folder's file; now that the two are shown apart it
    named none, answered only "does not exist"."""
    read = await call(twins, "read_file", path="app/x.py")
    assert read.is_error
    assert read.text == (
        "Error: 'app/x.py' does not exist (2 workspace folders are named app: "
        "start the path with one/app or two/app)"
    ), read.text


async def test_a_glob_by_a_name_two_folders_share_matches_in_both(twins: list[Path]) -> None:
    """`app/*.py` matched nothing: the glob was matched against `one/app/x.py` only, while
    `**/app/*.py` found both files."""
    (twins[1] / "y.py").write_text("y = 1\n")
    found = await call(twins, "find_files", pattern="app/*.py")
    assert found.text.splitlines() == ["one/app/x.py", "two/app/x.py", "two/app/y.py"]
    shown = await call(twins, "find_files", pattern="two/app/*.py")
    assert shown.text.splitlines() == ["two/app/x.py", "two/app/y.py"]
    hits = await call(twins, "search_text", pattern="= 1", glob="app/x.py")
    assert hits.text.splitlines() == ["one/app/x.py:1: one = 1", "two/app/x.py:1: two = 1"]
    inside = await call(twins, "search_text", pattern="= 1", path="two/app", glob="app/y.py")
    assert inside.text == "two/app/y.py:1: y = 1"


async def test_a_glob_without_a_folders_name_matches_in_each_folder(folders: list[Path]) -> None:
    """`src/*.py` matched nothing once there were two folders (each path shown as
    front/src/x.py), though a path so written is looked for in each folder."""
    found = await call(folders, "find_files", pattern="src/*.py")
    assert found.text.splitlines() == ["front/src/x.py", "back/src/only.py", "back/src/x.py"]
    hits = await call(folders, "search_text", pattern="= 1", glob="src/x.py")
    assert hits.text.splitlines() == ["front/src/x.py:1: front = 1", "back/src/x.py:1: back = 1"]
    named = await call(folders, "find_files", pattern="back/src/*.py")
    assert named.text.splitlines() == ["back/src/only.py", "back/src/x.py"]


async def test_an_absolute_glob_matches_in_the_folder_it_names(folders: list[Path]) -> None:
    found = await call(folders, "find_files", pattern=f"{folders[1]}/src/*.py")
    assert found.text.splitlines() == ["back/src/only.py", "back/src/x.py"], found.text


@pytest.mark.parametrize(
    ("order", "shown"), [("outer first", "w/sub/x.py"), ("inner first", "sub/x.py")]
)
async def test_a_folder_inside_another_is_walked_once(
    tmp_path: Path, order: str, shown: str
) -> None:
    """With a workspace folder inside another (w and w/sub), find_files listed w/sub/x.py
    twice and search_text counted each of its hits twice. A file is shown once, under the
    first folder that holds it, as a path so shown is read."""
    outer, inner = tmp_path / "w", tmp_path / "w" / "sub"
    inner.mkdir(parents=True)
    (inner / "x.py").write_text("x = 1\n")
    (outer / "top.py").write_text("t = 1\n")
    folders = [outer, inner] if order == "outer first" else [inner, outer]
    found = await call(folders, "find_files", pattern="**/x.py")
    assert found.text == shown, found.text
    hits = await call(folders, "search_text", pattern="= 1")
    assert sorted(hits.text.splitlines()) == sorted([f"{shown}:1: x = 1", "w/top.py:1: t = 1"])
    assert (await call(folders, "read_file", path=shown)).text == "     1\tx = 1"


async def test_a_folder_named_twice_is_one_folder(tmp_path: Path) -> None:
    """The same folder given twice (or by a link to it) was two folders of the same name,
    each labelled by its whole path (/tmp/.../w/x.py) and listed twice by list_dir."""
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "x.py").write_text("x = 1\n")
    (tmp_path / "alias").symlink_to(folder)
    for folders in ([folder, folder], [folder, tmp_path / "alias"]):
        assert (await call(folders, "list_dir")).text == "x.py"
        assert (await call(folders, "find_files", pattern="**/*.py")).text == "x.py"
        assert (await call(folders, "search_text", pattern="x")).text == "x.py:1: x = 1"
