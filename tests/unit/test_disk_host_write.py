"""The disk host (the command line's, the tests') writes an edit as the ACP host does with
no editor: a new file beside the old one renamed over it, the mode kept, a link written
through."""

from __future__ import annotations

import resource
import signal
from pathlib import Path

from baton.core.tools.host import DiskHost, FileEdit


async def test_a_write_that_fails_partway_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    """The file was written in place: a write stopped partway (here by the file size limit,
    as a full disk would) left the first part of the new text where the old text was. The
    old file stays whole, and nothing is left beside it."""
    path = tmp_path / "f.py"
    path.write_text("x = 1\n" * 10)
    edit = FileEdit(path, "x = 1\n" * 10, "y = 2\n" * 10, "Edit f.py")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    ignored = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (30, hard))
    try:
        done = await DiskHost().apply_edit(edit)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, ignored)

    assert not done.applied and "File too large" in (done.reason or "")
    assert path.read_text() == "x = 1\n" * 10
    assert [p.name for p in tmp_path.iterdir()] == ["f.py"]


async def test_an_edit_keeps_the_mode_and_writes_through_a_link(tmp_path: Path) -> None:
    real, link = tmp_path / "run.sh", tmp_path / "alias.sh"
    real.write_text("echo 1\n")
    real.chmod(0o750)
    link.symlink_to(real)
    done = await DiskHost().apply_edit(FileEdit(link, "echo 1\n", "echo 2\n", "Edit"))
    assert done.applied and link.is_symlink() and real.read_text() == "echo 2\n"
    assert real.stat().st_mode & 0o777 == 0o750


async def test_a_new_file_is_never_made_through_a_link_put_in_its_place(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    link = workspace / "new.py"
    link.symlink_to(outside / "planted.py")
    made = await DiskHost().apply_edit(FileEdit(link, None, "x = 1\n", "Create new.py"))
    assert not made.applied and list(outside.iterdir()) == [] and link.is_symlink()
