"""The estimator's calibration kept in the data dir: a server started again starts from
the factor the one before it learned; a bad file changes nothing and breaks nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from baton.cli.main import main
from baton.core.conversation.messages import MessageInput
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton.core.usage.saved_calibration import FILE_NAME, MAX_BYTES, SavedCalibration


def learned(factor_from: tuple[int, int] = (1_000, 1_300)) -> Estimator:
    estimator = Estimator(encoder=None)
    estimator.observe(*factor_from)
    return estimator


def test_a_learned_factor_is_kept_and_a_new_estimator_starts_from_it(tmp_path: Path) -> None:
    service = BatonService(Settings(data_dir=str(tmp_path)), estimator=Estimator(encoder=None))
    service.keep_calibration()
    assert not (tmp_path / FILE_NAME).exists()  # nothing learned, nothing written
    service.estimator.observe(1_000, 1_300)
    service.estimator.observe(1_000, 1_250)
    saved = json.loads((tmp_path / FILE_NAME).read_text())
    assert saved == {"factor": service.estimator.factor, "observations": 2}
    assert oct((tmp_path / FILE_NAME).stat().st_mode & 0o777) == "0o600"

    fresh = Estimator(encoder=None)
    assert SavedCalibration(tmp_path).restore(fresh)
    assert (fresh.factor, fresh.observations) == (service.estimator.factor, 2)
    assert fresh.calibrated(10_000) == service.estimator.calibrated(10_000)


def test_an_estimator_that_learned_already_keeps_its_own(tmp_path: Path) -> None:
    SavedCalibration(tmp_path).save(learned((1_000, 1_900)))
    own = learned((1_000, 1_100))
    before = own.factor
    assert not SavedCalibration(tmp_path).restore(own)
    assert own.factor == before


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"[1.2]",
        b'{"factor": 9.0, "observations": 3}',  # out of the estimator's range
        b'{"factor": true, "observations": 3}',
        b'{"factor": 1.2, "observations": 0}',
        b'{"factor": 1.2}',
        b'{"factor": 1.2, "observations": 3, "pad": "' + b"x" * MAX_BYTES + b'"}',
        # nested past the JSON parser's depth: a RecursionError failed the server's start
        # half-way (the workspace folders it was given were never set)
        b"[" * 4_000,
    ],
)
def test_a_bad_file_changes_nothing(tmp_path: Path, content: bytes) -> None:
    (tmp_path / FILE_NAME).write_bytes(content)
    estimator = Estimator(encoder=None)
    assert not SavedCalibration(tmp_path).restore(estimator)
    assert (estimator.factor, estimator.observations) == (1.0, 0)


def test_what_is_no_regular_file_is_never_read(tmp_path: Path) -> None:
    """A FIFO would block the start, a link could point anywhere."""
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"factor": 1.5, "observations": 4}')
    data = tmp_path / "data"
    data.mkdir()
    (data / FILE_NAME).symlink_to(outside)
    estimator = Estimator(encoder=None)
    assert not SavedCalibration(data).restore(estimator)
    (data / FILE_NAME).unlink()
    os.mkfifo(data / FILE_NAME)
    assert not SavedCalibration(data).restore(estimator)
    assert estimator.factor == 1.0


def test_a_data_dir_that_cannot_take_it_is_no_error(tmp_path: Path) -> None:
    """Logged, not raised: the reply that taught the factor is stored all the same."""
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    SavedCalibration(not_a_folder).save(learned())
    assert not_a_folder.read_text() == "x"


def test_a_missing_folder_is_no_error_and_leaves_nothing(tmp_path: Path) -> None:
    SavedCalibration(tmp_path / "not-there").save(learned())
    assert not (tmp_path / "not-there").exists()


def test_a_data_dir_given_after_the_start_brings_its_own_factor(tmp_path: Path) -> None:
    """A client that names the data dir only in its settings (pulled after `initialize`,
    where the server's start kept the calibration of the default dir), or changes it: the
    new directory's factor is the one its sessions were estimated with, and what is
    learned from then on is kept there."""
    (tmp_path / "A").mkdir()
    SavedCalibration(tmp_path / "A").save(learned((1_000, 1_900)))
    service = BatonService(
        Settings(data_dir=str(tmp_path / "default")), estimator=Estimator(encoder=None)
    )
    service.keep_calibration()
    service.estimator.observe(1_000, 1_100)  # learned in the default dir
    assert service.estimator.factor != learned((1_000, 1_900)).factor

    service.configure({"dataDir": str(tmp_path / "A")})

    assert service.estimator.factor == learned((1_000, 1_900)).factor
    service.estimator.observe(1_000, 1_500)
    saved = json.loads((tmp_path / "A" / FILE_NAME).read_text())
    assert saved["factor"] == service.estimator.factor

    service.configure({"dataDir": str(tmp_path / "empty")})  # nothing kept there: unchanged
    assert json.loads((tmp_path / "A" / FILE_NAME).read_text())["factor"] == (
        service.estimator.factor
    )


def test_the_command_line_estimates_a_data_dirs_session_with_its_factor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service = BatonService(Settings(data_dir=str(tmp_path)), estimator=Estimator())
    service.keep_calibration()
    session = service.create("calibrated")
    session.append([MessageInput(role="user", content="how big is this? " * 400)])
    path = tmp_path / "sessions" / f"{session.session_id}.jsonl"
    capsys.readouterr()
    assert main(["usage", str(path), "--json"]) == 0
    uncalibrated = json.loads(capsys.readouterr().out)["usedTokens"]

    service.estimator.observe(1_000, 1_600)  # what a reply taught the server: kept
    served = service.usage(session.session_id).used_tokens
    assert main(["usage", str(path), "--json"]) == 0
    reported = json.loads(capsys.readouterr().out)["usedTokens"]

    assert reported == served > uncalibrated
    assert main(["usage", str(path), "--json"]) == 0  # the process's estimator is not moved
    assert json.loads(capsys.readouterr().out)["usedTokens"] == reported


def test_a_factor_another_process_wrote_since_is_followed_never_its_own(tmp_path: Path) -> None:
    """A server reading a session another process writes takes up what that process
    learned since; what it wrote itself, or a file unchanged since, it does not read again."""
    mine, theirs = SavedCalibration(tmp_path), SavedCalibration(tmp_path)
    estimator = learned((1_000, 1_100))
    mine.restore(estimator)  # nothing kept yet
    assert not mine.follow(estimator)
    mine.save(estimator)
    assert not mine.follow(estimator)  # its own write

    other = learned((1_000, 1_300))
    theirs.save(other)
    assert mine.follow(estimator)
    assert estimator.factor == other.factor != learned((1_000, 1_100)).factor
    estimator.factor = 1.2  # learned here meanwhile, not written
    assert not mine.follow(estimator)  # the file did not change since it was read
    assert estimator.factor == 1.2
