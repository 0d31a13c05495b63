"""A settings file (`--settings`): the object of the editor's `baton.*` keys it holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baton.core.conversation.files import read_text_file
from baton.core.errors import InvalidParams

SETTINGS_BYTES = 1 << 20  # a settings file past this is refused


def read_settings(path: str | None) -> dict[str, Any]:
    """A settings file's object (the keys of the editor's `baton.*` settings);
    InvalidParams saying why, in one line, for a file that cannot be one."""
    if path is None:
        return {}
    try:
        text = read_text_file(Path(path).expanduser(), "a settings file", SETTINGS_BYTES)
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise InvalidParams(f"--settings {path}: not JSON: {exc.msg} ({where})") from None
    except RecursionError:
        raise InvalidParams(f"--settings {path}: not JSON: nested too deep") from None
    except ValueError as exc:
        raise InvalidParams(f"--settings {path}: {exc}") from None
    if not isinstance(raw, dict):
        raise InvalidParams(f"--settings {path}: the file must hold a JSON object")
    return raw
