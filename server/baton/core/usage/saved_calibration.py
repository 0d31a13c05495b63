"""The estimator's calibration kept in the data dir (`calibration.json`), so that a server
started again estimates as the one before it did: the figure a compacted session's meter
shows (an estimate until the next reply) would otherwise move at every restart.

Several servers on one data dir each start from the file and write it after each reply
that teaches them; the last to learn is what the next one starts from, and what a server
already running takes up when it reads a session from its file (`follow`): another
process may have written both, and the figures it shows of that session are estimated as
that process estimates them."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from baton.core.conversation.files import read_small, replace_file
from baton.core.conversation.transcript_read import parse_line  # nested too deep: ValueError
from baton.core.errors import StorageError
from baton.core.usage.estimator import FACTOR_MAX, FACTOR_MIN, Estimator

log = logging.getLogger(__name__)

FILE_NAME = "calibration.json"
MAX_BYTES = 4096

Stamp = tuple[int, int, int]  # the file's inode, size and modification time (ns)


class SavedCalibration:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME
        self.seen: Stamp | None = None  # the file as this process last read or wrote it

    def follow(self, estimator: Estimator) -> bool:
        """Start `estimator` again from the file when another process wrote it since this
        one last read or wrote it (a stat, when it did not); whether the factor moved."""
        now = self._stamp()
        if now is None or now == self.seen:
            return False
        before = estimator.factor
        self.restore(estimator, replace=True)
        return estimator.factor != before

    def restore(self, estimator: Estimator, *, replace: bool = False) -> bool:
        """Start `estimator` from the saved factor, unless it learned one already (or
        `replace`: the data dir changed, and its factor is the one its sessions were
        estimated with); whether it did. A file that is missing, unreadable or out of range
        changes nothing."""
        self.seen = self._stamp()  # as it stands now: `follow` takes up later writes only
        if estimator.observations and not replace:
            return False
        try:
            data = read_small(self.path, MAX_BYTES)
            saved = parse_line(data) if data is not None else None
        except OSError as exc:  # the data dir itself: the start says what it does not allow
            log.debug("%s is not read: %s", self.path, exc)
            return False
        except (StorageError, ValueError) as exc:
            log.warning("%s is not read (%s): estimates start uncalibrated", self.path, exc)
            return False
        if not isinstance(saved, dict):
            return False
        factor, seen = saved.get("factor"), saved.get("observations")
        if not isinstance(factor, float | int) or isinstance(factor, bool):
            return False
        if not FACTOR_MIN <= factor <= FACTOR_MAX or not isinstance(seen, int) or seen < 1:
            return False
        estimator.factor, estimator.observations = float(factor), seen
        return True

    def save(self, estimator: Estimator) -> None:
        """Write the factor now; a data dir that cannot take it is logged, not an error
        (the reply that taught it is stored all the same)."""
        record = {"factor": estimator.factor, "observations": estimator.observations}
        try:
            replace_file(self.path, (json.dumps(record) + "\n").encode())
        except OSError as exc:
            log.debug("%s is not written: %s", self.path, exc)
        self.seen = self._stamp()

    def _stamp(self) -> Stamp | None:
        try:
            found = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return None
        return found.st_ino, found.st_size, found.st_mtime_ns
