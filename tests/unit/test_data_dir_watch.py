"""The data dir looked at again while the service runs (`DataDirWatch`): each change since
the start told once, in the start's words, and its return told once; what is no change
(a folder another process made in a fresh data dir, another data dir) says nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_data_dir_files import read_only_disk

from baton.cli.main import EXAMPLE_SESSION
from baton.core.conversation.store import SessionStore
from baton.core.service.events import DataDirChanged, Event
from baton.core.service.service import BatonService
from baton.core.settings import Settings


def watched(data_dir: Path) -> tuple[BatonService, list[DataDirChanged]]:
    """A service on `data_dir` whose start said what it does not allow, and what it tells."""
    service = BatonService(Settings(data_dir=str(data_dir)))
    told: list[DataDirChanged] = []

    def heard(event: Event) -> None:
        if isinstance(event, DataDirChanged):
            told.append(event)

    service.connect(heard)
    service.data_dir_problems()  # the start's word
    return service, told


def listed(service: BatonService) -> list[tuple[str, bool]]:
    found = asyncio.run(service.list_sessions())
    return [(s.session_id, s.read_only) for s in found]


def test_a_data_dir_made_read_only_while_it_runs_is_told_once_then_its_return(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, told = watched(tmp_path / "data")
    sid = service.create(title="kept").session_id
    service.store.close()  # opened again read-only by the next use
    with monkeypatch.context() as patched:
        read_only_disk(patched)
        assert listed(service) == [(sid, True)]
        assert len(told) == 1 and not told[0].back
        assert told[0].lines == told[0].problems == tuple(service.store.access_problems())
        assert str(service.store.sessions_dir) in told[0].lines[0]
        assert "Read-only file system" in told[0].lines[0]
        assert "served read-only" in told[0].lines[0]  # what it can no longer do
        assert listed(service) == [(sid, True)]
        service.looked(sid)
        assert len(told) == 1  # no repeat per request
    service.store.close()
    assert listed(service) == [(sid, False)]
    assert len(told) == 2 and told[1].back and told[1].problems == ()
    assert told[1].before == told[0].problems
    assert str(service.store.sessions_dir) in told[1].lines[0] and "again" in told[1].lines[0]
    listed(service)
    assert len(told) == 2


def test_a_sessions_folder_another_process_makes_in_a_fresh_data_dir_is_no_news(
    tmp_path: Path,
) -> None:
    service, told = watched(tmp_path / "data")
    assert listed(service) == []
    other = SessionStore(tmp_path / "data", lambda m: 1)
    sid = other.create(title="made elsewhere").session_id
    other.close()
    assert listed(service) == [(sid, False)]
    assert told == []


def test_another_data_dir_is_said_by_the_settings_not_told_as_a_change(tmp_path: Path) -> None:
    service, told = watched(tmp_path / "data")
    service.create(title="kept")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    service.configure({"dataDir": str(blocker / "data")})
    assert len(service.data_dir_problems()) == 1  # what the settings' warning says
    assert listed(service) == []
    assert told == []


def test_a_change_of_settings_tells_what_changed_since_as_a_look_does(tmp_path: Path) -> None:
    service, told = watched(tmp_path / "data")
    service.create(title="kept")
    folder = service.store.sessions_dir
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    service.configure({"contextWindow": 30_000})
    problems = service.data_dir_problems()  # what the settings' warning says
    assert len(told) == 1 and told[0].problems == tuple(problems)
    assert "symbolic link" in problems[0]
    folder.unlink()
    elsewhere.rename(folder)
    assert service.data_dir_problems() == []
    assert len(told) == 2 and told[1].back  # the settings' warning would say nothing of it
    assert listed(service) != [] and len(told) == 2


def test_an_import_after_the_data_dir_went_away_makes_it_again_without_a_second_word(
    tmp_path: Path,
) -> None:
    service, told = watched(tmp_path / "data")
    service.create(title="first")
    (tmp_path / "data").rename(tmp_path / "moved")
    sid = asyncio.run(service.import_file(str(EXAMPLE_SESSION))).session.session_id
    assert len(told) == 1 and "gone" in told[0].lines[0]  # its list, before the import
    assert listed(service) == [(sid, False)]
    assert len(told) == 1  # the folder the import made is no news
