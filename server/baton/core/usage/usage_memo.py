"""One session's memo of its usage: the figures computed since its last change, and its
system prompt's count. The session's runtime holds it (core/service/runtime.py), so every
reader of one change shares one computation and nothing outlives the session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baton.core.usage.budget import Usage
    from baton.core.usage.estimator import Estimator

Key = tuple[object, ...]  # the session's revision first, then every other input
KEPT = 4  # a few figures per change (the meter's, auto-compact's), never a session's history


@dataclass(eq=False)
class UsageMemo:
    usages: list[tuple[Key, Usage]] = field(default_factory=list)
    system: tuple[str, Estimator, int] | None = None  # (prompt, estimator, its tokens)

    def find(self, key: Key) -> Usage | None:
        for known, usage in self.usages:
            if all(a is b or a == b for a, b in zip(known, key, strict=True)):
                return usage
        return None

    def keep(self, key: Key, usage: Usage) -> None:
        same_revision = [(k, u) for k, u in self.usages if k[0] == key[0]]
        self.usages[:] = [*same_revision[-(KEPT - 1) :], (key, usage)]

    def system_tokens(self, text: str, estimator: Estimator) -> int | None:
        known = self.system
        if known is not None and known[0] == text and known[1] is estimator:
            return known[2]
        return None
