"""The paths the messages a compaction keeps already show, so that a restore does not put
them back a second time."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from baton.core.compaction.retention.facts import attachment_path, tool_paths
from baton.core.conversation.messages import Message, TextBlock


def resolve_path(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL or a lone surrogate
        return None


class Visible:
    """Paths the kept messages already show: named by a tool call or an attachment, or
    written out in a message's text (not a summary's)."""

    def __init__(self, kept: Sequence[Message], folders: Sequence[Path]) -> None:
        self.paths: set[str] = set()
        texts: list[str] = []
        for message in kept:
            attached = attachment_path(message)
            if attached:
                self._add(attached, folders)
            for use in message.tool_uses():
                for path, _ in tool_paths(use):
                    self._add(path, folders)
            if message.kind != "summary":  # a summary names files without showing them
                texts.extend(b.text for b in message.content if isinstance(b, TextBlock))
        self.text = "\n".join(texts)

    def _add(self, raw: str, folders: Sequence[Path]) -> None:
        path = Path(raw).expanduser()
        candidates = [path] if path.is_absolute() else [folder / path for folder in folders]
        for candidate in candidates:
            self.paths.add(str(candidate))
            resolved = resolve_path(candidate)
            if resolved is not None:
                self.paths.add(str(resolved))

    def shows(self, path: Path, resolved: Path) -> bool:
        names = {str(path), str(resolved)}
        return bool(names & self.paths) or any(named(n, self.text) for n in names)


def named(path: str, text: str) -> bool:
    """Whether `text` writes out `path` whole: not as the start of a longer one
    (`config.js` in `config.json`, `app.py` in `app.py.bak`) or the end of another."""
    pattern = rf"(?<![\w./-]){re.escape(path)}(?![\w/-]|\.\w)"
    return re.search(pattern, text) is not None
