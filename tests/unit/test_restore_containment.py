"""R5, restore containment: whatever URI an editor names, restore reads only regular files
inside the workspace: no `..`, `%2e%2e`, `file://localhost` or symlink escape, no fifo."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest
from editor_clock import Clock

from baton.core.compaction.retention.facts import approx_tokens, attachment_path
from baton.core.compaction.working_set.restore import restore_files
from baton.core.settings import RestoreSettings
from baton.core.workspace.editor_files import EditorFiles, path_to_uri

SECRET = "outside-the-workspace-7d1e"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.py").write_text(f"notes = {SECRET!r}\n")
    (ws / "ok.py").write_text("fine = 1\n")
    return ws, outside


def restored(files: EditorFiles, ws: Path) -> list[str]:
    result: list[str] = []

    def run() -> None:
        outcome = restore_files(
            files,
            kept=[],
            settings=RestoreSettings(max_files=50),
            workspace_folders=[ws],
            count_text=approx_tokens,
        )
        result.extend(str(attachment_path(m)) for m, _ in outcome.files)
        for message, _ in outcome.files:
            assert SECRET not in str(message.content)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "restore blocked (on a fifo?)"
    return result


def escapes(ws: Path, outside: Path) -> list[str]:
    base = ws.as_uri()
    return [
        f"{base}/../elsewhere/notes.py",
        f"{base}/sub/../../elsewhere/notes.py",
        f"{base}/%2e%2e/elsewhere/notes.py",
        f"{base}/%2E%2E/%2e%2e/{ws.parent.name}/elsewhere/notes.py",
        f"{base}/sub/%2e%2e%2f%2e%2e%2felsewhere%2fnotes.py",
        f"file://localhost{outside}/notes.py",
        f"file://localhost/{outside}/notes.py",
        f"file:///{outside}/notes.py",
        path_to_uri(outside / "notes.py"),
    ]


def test_focused_uris_that_leave_the_workspace_are_never_read(
    layout: tuple[Path, Path],
) -> None:
    ws, outside = layout
    files = EditorFiles(clock=Clock())
    for uri in escapes(ws, outside):
        files.focused(uri)
    files.focused(path_to_uri(ws / "ok.py"))
    assert restored(files, ws) == [str(ws / "ok.py")]


def test_open_documents_outside_the_workspace_are_never_restored(
    layout: tuple[Path, Path],
) -> None:
    ws, outside = layout
    files = EditorFiles(clock=Clock())
    for uri in escapes(ws, outside):
        files.opened(uri, f"unsaved = {SECRET!r}\n")
    files.focused(path_to_uri(ws / "ok.py"))
    assert restored(files, ws) == [str(ws / "ok.py")]


def test_symlinks_out_of_the_workspace_are_not_followed(layout: tuple[Path, Path]) -> None:
    ws, outside = layout
    (ws / "link.py").symlink_to(outside / "notes.py")
    (ws / "linked_dir").symlink_to(outside, target_is_directory=True)
    (ws / "chain.py").symlink_to(ws / "link.py")
    files = EditorFiles(clock=Clock())
    for name in ("link.py", "linked_dir/notes.py", "chain.py", "ok.py"):
        files.focused(path_to_uri(ws / name))
    assert restored(files, ws) == [str(ws / "ok.py")]


def test_a_fifo_in_the_workspace_is_skipped_without_blocking(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    fifo = ws / "pipe.py"
    os.mkfifo(fifo)
    files = EditorFiles(clock=Clock())
    files.focused(path_to_uri(fifo))
    files.focused(path_to_uri(ws / "ok.py"))
    try:
        assert restored(files, ws) == [str(ws / "ok.py")]
    finally:
        _release(fifo)


def _release(fifo: Path) -> None:
    """If restore did open the fifo, a writer that comes and goes lets it read EOF."""
    with contextlib.suppress(OSError):  # no reader: nothing to release
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
