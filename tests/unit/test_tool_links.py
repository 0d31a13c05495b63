"""A path through a link: the editor's text is looked up under the name the path gives,
and only when that name is the same file (`sub/../x.py` through a link `sub` is not the
`x.py` beside `sub`)."""

from __future__ import annotations

from pathlib import Path

from tool_calls import call, ctx

from baton.core.tools.host import DiskHost


class Editor(DiskHost):
    """An editor with `open` (a path -> its unsaved text) open."""

    def __init__(self, open: dict[Path, str]) -> None:
        super().__init__()
        self.open = open

    async def read_text(self, path: Path) -> str | None:
        return self.open.get(path)


async def test_a_name_that_is_another_file_once_links_are_resolved_is_not_asked(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    (root / "a" / "b").mkdir(parents=True)
    (root / "sub").symlink_to(root / "a" / "b")
    (root / "a" / "x.py").write_text("the file named\n")
    (root / "x.py").write_text("another file\n")
    editor = Editor({root / "x.py": "another file, unsaved\n"})
    result = await call(ctx(root, editor), "read_file", path="sub/../x.py")
    assert result.text == "     1\tthe file named"


async def test_a_link_open_in_the_editor_is_read_there(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "real.py").write_text("saved\n")
    (root / "alias.py").symlink_to(root / "real.py")
    editor = Editor({root / "alias.py": "unsaved\n"})
    assert (await call(ctx(root, editor), "read_file", path="alias.py")).text == "     1\tunsaved"
    assert (await call(ctx(root, editor), "read_file", path="real.py")).text == "     1\tsaved"


async def test_a_loop_of_links_is_said_to_be_one(tmp_path: Path) -> None:
    """A link to itself (or a ring of them) was answered "'loop/x.py' is outside the
    workspace folders", though it is inside them."""
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    for path in ("loop", "loop/x.py", "a"):
        read = await call(ctx(tmp_path), "read_file", path=path)
        assert read.text == f"Error: {path!r} cannot be reached: a link on its way leads to itself"


async def test_list_dir_marks_a_link_to_a_folder_of_the_workspace_as_a_folder(
    tmp_path: Path,
) -> None:
    """It was listed as `link`, a file to the model, whose read_file then answered 'link is
    a folder', though list_dir, read_file of link/x.py and search_text in link all reach
    the folder it leads to. A link out of the workspace, which no tool follows, stays bare."""
    (tmp_path / "ws" / "real").mkdir(parents=True)
    (tmp_path / "ws" / "real" / "x.py").write_text("x = 1\n")
    (tmp_path / "ws" / "link").symlink_to(tmp_path / "ws" / "real")
    (tmp_path / "ws" / "out").symlink_to(tmp_path)
    listed = await call(ctx(tmp_path / "ws"), "list_dir")
    assert listed.text.splitlines() == ["link/", "out", "real/"], listed.text
