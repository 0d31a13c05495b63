"""Tracking of recently touched editor files, and file URI conversion."""

from __future__ import annotations

from pathlib import Path

import pytest
from editor_clock import Clock

from baton.core.workspace.editor_files import EditorFiles, path_to_uri, uri_to_path


def uris(files: EditorFiles) -> list[str]:
    return [f.uri for f in files.recent()]


def test_uri_to_path_percent_decodes() -> None:
    assert uri_to_path("file:///home/me/my%20project/caf%C3%A9.py") == Path(
        "/home/me/my project/café.py"
    )


@pytest.mark.parametrize("uri", ["untitled:Untitled-1", "baton:/session/s1", "git:/a.py?ref"])
def test_other_schemes_have_no_path(uri: str) -> None:
    assert uri_to_path(uri) is None


def test_windows_drive_and_unc_uris() -> None:
    assert str(uri_to_path("file:///c%3A/Users/me/a.py")).replace("\\", "/") == "c:/Users/me/a.py"
    assert str(uri_to_path("file://server/share/a.py")).replace("\\", "/") == "//server/share/a.py"
    assert uri_to_path("file://localhost/etc/hosts") == Path("/etc/hosts")


def test_path_to_uri_round_trips_odd_names(tmp_path: Path) -> None:
    for name in ("a b.py", "x#y?.md", "naïve%20.txt", "[brackets].ts"):
        path = tmp_path / name
        uri = path_to_uri(path)
        assert uri.startswith("file:///")
        assert " " not in uri and "#" not in uri and "?" not in uri
        assert uri_to_path(uri) == path


def test_recent_is_most_recently_touched_first() -> None:
    files = EditorFiles(clock=Clock(1_000.0, 1.5))
    files.opened("file:///ws/a.py", "a", 1)
    files.opened("file:///ws/b.py", "b", 1)
    files.opened("file:///ws/c.py", "c", 1)
    assert uris(files) == ["file:///ws/c.py", "file:///ws/b.py", "file:///ws/a.py"]
    files.changed("file:///ws/a.py", "a2", 2)
    assert uris(files)[0] == "file:///ws/a.py"
    files.saved("file:///ws/b.py")
    assert uris(files)[:2] == ["file:///ws/b.py", "file:///ws/a.py"]
    files.focused("file:///ws/c.py")
    assert uris(files) == ["file:///ws/c.py", "file:///ws/b.py", "file:///ws/a.py"]


def test_closing_keeps_the_place_but_drops_the_live_text() -> None:
    files = EditorFiles(clock=Clock(1_000.0, 1.5))
    files.opened("file:///ws/a.py", "text a", 1)
    files.opened("file:///ws/b.py", "text b", 1)
    files.closed("file:///ws/b.py")
    first = files.recent()[0]
    assert first.uri == "file:///ws/b.py"
    assert not first.is_open and first.text is None
    assert files.recent()[1].text == "text a"


def test_open_documents_keep_their_current_text() -> None:
    files = EditorFiles(clock=Clock(1_000.0, 1.5))
    files.opened("file:///ws/a.py", "v1", 1)
    files.changed("file:///ws/a.py", "v2", 2)
    files.saved("file:///ws/a.py", "v3")
    tracked = files.get("file:///ws/a.py")
    assert tracked is not None and tracked.text == "v3" and tracked.is_open


def test_a_stale_change_does_not_overwrite_newer_text() -> None:
    files = EditorFiles(clock=Clock(1_000.0, 1.5))
    files.opened("file:///ws/a.py", "v5", 5)
    files.changed("file:///ws/a.py", "v4", 4)
    tracked = files.get("file:///ws/a.py")
    assert tracked is not None and tracked.text == "v5" and tracked.version == 5


def test_touches_record_wall_time_from_the_clock() -> None:
    clock = Clock(1_000.0, 1.5)
    files = EditorFiles(clock=clock)
    files.focused("file:///ws/a.py")
    tracked = files.get("file:///ws/a.py")
    assert tracked is not None and tracked.touched_at == clock.now
    assert not tracked.is_open  # focused without didOpen: read from disk at restore time


def test_order_follows_touches_even_when_the_wall_clock_goes_back() -> None:
    times = iter([50.0, 10.0])
    files = EditorFiles(clock=lambda: next(times))
    files.focused("file:///ws/a.py")
    files.focused("file:///ws/b.py")
    assert uris(files) == ["file:///ws/b.py", "file:///ws/a.py"]


def test_non_file_uris_are_ignored() -> None:
    files = EditorFiles(clock=Clock(1_000.0, 1.5))
    files.opened("untitled:Untitled-1", "scratch", 1)
    files.changed("baton:/session/s1", "x", 1)
    files.focused("output:extension-output")
    assert files.recent() == []
    assert files.active is None


def test_focus_on_nothing_clears_the_active_editor() -> None:
    files = EditorFiles(clock=Clock(1_000.0, 1.5))
    files.focused("file:///ws/a.py")
    assert files.active == "file:///ws/a.py"
    files.focused(None)
    assert files.active is None
    assert len(files) == 1


def test_the_same_file_under_two_spellings_is_one_entry() -> None:
    files = EditorFiles(clock=Clock(1_000.0, 1.5))
    files.opened("file:///ws/my%20file.py", "x", 1)
    files.focused("file:///ws/my file.py")
    assert len(files) == 1


def test_tracking_is_capped_dropping_closed_files_first() -> None:
    files = EditorFiles(clock=Clock(1_000.0, 1.5), max_tracked=3)
    files.opened("file:///ws/open.py", "x", 1)
    files.focused("file:///ws/closed1.py")
    files.focused("file:///ws/closed2.py")
    files.focused("file:///ws/closed3.py")
    assert sorted(uris(files)) == [
        "file:///ws/closed2.py",
        "file:///ws/closed3.py",
        "file:///ws/open.py",
    ]


def test_an_open_document_is_never_dropped_to_stay_within_the_bound() -> None:
    """A document opened with the bound reached was dropped as it was made (it counted as
    closed then), and an open one was dropped when all were open: the tools read the disk
    in place of the editor's unsaved text."""
    files = EditorFiles(clock=Clock(1_000.0, 1.5), max_tracked=3)
    files.focused("file:///ws/closed.py")
    for name in ("a", "b", "c", "d"):
        files.opened(f"file:///ws/{name}.py", name, 1)
    assert sorted(uris(files)) == [f"file:///ws/{n}.py" for n in "abcd"]
    files.focused("file:///ws/other.py")
    files.closed("file:///ws/a.py")
    files.focused("file:///ws/e.py")
    assert sorted(uris(files)) == [f"file:///ws/{n}.py" for n in ("b", "c", "d", "e")]
