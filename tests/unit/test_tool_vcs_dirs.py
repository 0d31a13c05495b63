"""`.git` (and `.hg`, `.svn`) is version control's own: its config often carries a remote
URL with a token no credential shape catches. No tool reads, lists, searches or edits
inside it, an attachment of it is refused and a compaction does not restore it."""

from __future__ import annotations

from pathlib import Path

import pytest
from editor_clock import Clock
from tool_calls import AUTO_EDITS, call, ctx

from baton.core.compaction.retention.facts import approx_tokens
from baton.core.compaction.working_set.restore import restore_files
from baton.core.errors import InvalidParams
from baton.core.settings import RestoreSettings
from baton.core.settings_lists import DEFAULT_EXCLUDES
from baton.core.tools.attachments import EditorAttachment, attachment_messages
from baton.core.tools.host import DiskHost
from baton.core.tools.registry import ToolContext
from baton.core.tools.workspace import Workspace
from baton.core.workspace.editor_files import EditorFiles, path_to_uri

TOKEN = "s3cr3t-deploy-token"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "config").write_text(
        f'[remote "origin"]\n\turl = https://deploy:{TOKEN}@git.example.com/app.git\n'
    )
    (folder / "app.py").write_text("x = 1\n")
    return folder


@pytest.mark.parametrize(
    ("name", "input"),
    [
        ("read_file", {"path": ".git/config"}),
        ("read_file", {"path": "./.GIT/config"}),
        ("search_text", {"pattern": "s3cr3t", "path": ".git"}),
        ("search_text", {"pattern": "s3cr3t", "path": ".git/config"}),
        ("list_dir", {"path": ".git"}),
        ("str_replace_based_edit_tool", {"command": "view", "path": ".git/config"}),
        ("str_replace_based_edit_tool", {"command": "create", "path": ".git/x", "file_text": "a"}),
    ],
)
async def test_no_tool_reaches_inside_git(root: Path, name: str, input: dict[str, str]) -> None:
    result = await call(ctx(root), name, **input)
    assert result.is_error and "inside .git" in result.text.lower(), result.text
    assert TOKEN not in result.text and not (root / ".git" / "x").exists()


async def test_a_link_into_git_is_neither_read_nor_found(root: Path) -> None:
    (root / "config.ini").symlink_to(root / ".git" / "config")
    read = await call(ctx(root), "read_file", path="config.ini")
    assert read.is_error and "inside .git" in read.text and TOKEN not in read.text
    for name, input in (("find_files", {"pattern": "*.ini"}), ("search_text", {"pattern": "s3"})):
        result = await call(ctx(root), name, **input)
        assert "config.ini" not in result.text and TOKEN not in result.text, result.text


async def test_an_attachment_inside_git_is_refused(root: Path) -> None:
    item = EditorAttachment(kind="file", path=str(root / ".git" / "config"))
    with pytest.raises(InvalidParams, match=r"inside \.git"):
        await attachment_messages([item], Workspace([root], DEFAULT_EXCLUDES), None)


def test_a_compaction_does_not_restore_a_file_inside_git(root: Path) -> None:
    files = EditorFiles(clock=Clock())
    for path in (root / ".git" / "config", root / "app.py"):
        files.opened(path_to_uri(path), path.read_text())  # open in the editor
    outcome = restore_files(
        files,
        kept=[],
        settings=RestoreSettings(max_files=50),
        workspace_folders=[root],
        count_text=approx_tokens,
    )
    texts = [str(message.content) for message, _ in outcome.files]
    assert len(texts) == 1 and "x = 1" in texts[0]
    assert [s.reason for s in outcome.skipped if ".git" in s.uri] != []
    assert all(TOKEN not in t for t in texts)


def test_a_compaction_does_not_restore_a_link_into_git(root: Path) -> None:
    """An editor file that is a link into .git under another name is skipped as the
    tools refuse it: what it shows is the link's target."""
    (root / "settings.ini").symlink_to(root / ".git" / "config")
    files = EditorFiles(clock=Clock())
    files.focused(path_to_uri(root / "settings.ini"))  # not open: read from disk
    outcome = restore_files(
        files,
        kept=[],
        settings=RestoreSettings(max_files=50),
        workspace_folders=[root],
        count_text=approx_tokens,
    )
    assert all(TOKEN not in str(message.content) for message, _ in outcome.files)
    assert [s.reason for s in outcome.skipped if s.uri.endswith("settings.ini")] != []


async def test_list_dir_leaves_every_version_control_folder_out_unsaid(root: Path) -> None:
    """`.git` was left out silently, but `.hg`, `.svn` or `.GIT` were counted in the note
    '[1 not shown: they may hold credentials (restore.exclude)]', a reason that was not
    theirs and a setting that does not name them."""
    for name in (".hg", ".SVN"):
        (root / name).mkdir()
    result = await call(ctx(root), "list_dir", path=".")
    assert result.text == "app.py" and result.summary == "1 entry"


@pytest.mark.parametrize("through_link", [False, True])
@pytest.mark.parametrize(
    ("name", "input"),
    [
        ("read_file", {"path": "config"}),
        ("search_text", {"pattern": "s3cr3t"}),
        ("find_files", {"pattern": "*"}),
        ("list_dir", {"path": "."}),
    ],
)
async def test_a_workspace_folder_inside_git_is_no_folder_of_the_tools(
    root: Path, tmp_path: Path, through_link: bool, name: str, input: dict[str, str]
) -> None:
    """An editor opened on `.git` itself (or on a link to it): the paths the tools see are
    relative to that folder and hold no `.git`, yet every file there is version control's."""
    folder = root / ".git"
    if through_link:
        folder = tmp_path / "repo-meta"
        folder.symlink_to(root / ".git")
    result = await call(ctx(folder), name, **input)
    assert result.is_error and "inside .git" in result.text, result.text
    assert TOKEN not in result.text and "config" not in result.text.replace(".git", "")


async def test_a_folder_inside_git_leaves_the_other_folders_working(root: Path) -> None:
    other = root.parent / "other"
    other.mkdir()
    (other / "b.py").write_text("y = 2\n")
    workspace = Workspace([root / ".git", other], DEFAULT_EXCLUDES)
    context = ToolContext("s1", workspace, DiskHost(), AUTO_EDITS)
    result = await call(context, "find_files", pattern="*")
    assert not result.is_error and "b.py" in result.text and "config" not in result.text
