"""A clock for `EditorFiles` in tests: each reading is `step` seconds after the last."""

from __future__ import annotations


class Clock:
    def __init__(self, start: float = 0.0, step: float = 1.0) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now
