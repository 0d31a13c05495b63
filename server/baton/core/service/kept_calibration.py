"""The estimator's calibration kept in the data dir: restored as a server starts and when
the data dir changes, saved after each reply that teaches it, and followed when another
process that writes a session read here learned since."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from baton.core.service.changes import Changes
from baton.core.service.runtime import Runtimes
from baton.core.usage.estimator import Estimator
from baton.core.usage.saved_calibration import SavedCalibration


class KeptCalibration:
    """Front ends call it through `service.keep_calibration`; `service.configure` calls
    `data_dir_changed`."""

    def __init__(
        self,
        data_dir: Callable[[], Path],
        estimator: Estimator,
        changes: Changes,
        runtimes: Runtimes,
    ) -> None:
        self._data_dir = data_dir  # the service's settings of now
        self.estimator = estimator
        self.changes = changes
        self._runtimes = runtimes
        self._saved: SavedCalibration | None = None  # the data dir's, once kept there

    def keep_calibration(self) -> None:
        """The estimator starts from the factor the data dir keeps, and keeps it there after
        each reply that teaches it, so that a restart estimates as before (a server's start)."""
        self._calibration().restore(self.estimator)
        self.changes.recalibrated()  # the factor the sessions are told with from now on
        self.estimator.on_learned = lambda: self._calibration().save(self.estimator)
        # a session read from its file: another process that writes it may have learned since
        self._runtimes.from_disk = self._follow_calibration

    def data_dir_changed(self) -> None:
        """The data dir changed (its old store let go): a kept factor is the new one's."""
        if self.estimator.on_learned is not None:  # kept: the new directory's factor
            self._calibration().restore(self.estimator, replace=True)
            self.changes.recalibrated()  # no session is open: the factor is only noted

    def _calibration(self) -> SavedCalibration:
        """The data dir's kept calibration (a new one once the data dir changed)."""
        data_dir = self._data_dir()
        if self._saved is None or self._saved.path.parent != data_dir:
            self._saved = SavedCalibration(data_dir)
        return self._saved

    def _follow_calibration(self) -> None:
        """Estimate as the data dir's calibration says when another process wrote it since
        (the figures of the session it writes are then as it shows them); the open sessions
        whose figure moved are told with the next change (`recalibrated`), as this read's
        reload is."""
        self._calibration().follow(self.estimator)
