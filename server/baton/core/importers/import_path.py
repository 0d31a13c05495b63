"""The file a request names for import: a path a person typed, checked before it is read."""

from __future__ import annotations

import stat
from pathlib import Path

from baton.core.conversation.files import kind_of
from baton.core.errors import InvalidParams

MAX_PATH = 4096  # characters in a path a request names


def named_file(path: str) -> Path:
    """The file a request names for import, or InvalidParams saying why it cannot be read."""
    if len(path) > MAX_PATH:
        raise InvalidParams(f"path is longer than {MAX_PATH} characters")
    shown = path if len(path) <= 200 else path[:200] + "..."
    file = Path(path).expanduser()
    try:
        mode = file.stat().st_mode
    except FileNotFoundError:
        raise InvalidParams(f"no file at {shown!r}") from None
    except (OSError, ValueError) as exc:  # a name too long, a NUL, an unreadable folder
        reason = getattr(exc, "strerror", None) or "not a usable path"
        raise InvalidParams(f"cannot read {shown!r}: {reason}") from None
    if not stat.S_ISREG(mode):  # a folder of sessions, a FIFO: there, but no session file
        raise InvalidParams(f"{shown!r} is {kind_of(mode)}, not a Claude Code session file")
    return file
