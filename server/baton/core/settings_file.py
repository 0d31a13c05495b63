"""A settings file (`--settings`): the object of the editor's `baton.*` keys it holds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from baton.core.conversation.files import read_text_file
from baton.core.errors import InvalidParams
from baton.core.settings import Settings

SETTINGS_BYTES = 1 << 20  # a settings file past this is refused


def read_settings(path: str | None, warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """A settings file's object (the keys of the editor's `baton.*` settings);
    InvalidParams saying why, in one line, for a file that cannot be one. Each key that is
    no setting is told to `warn` (a client's unknown keys go unsaid; a file's are a slip:
    the editor's full name copied, its `baton` section kept whole). A relative `dataDir`
    names a folder beside the file (`~` is the home folder), whatever folder the command
    runs in."""
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
    for key in raw:
        if warn is not None and _setting_named(key) is None:
            warn(f"--settings: unknown key {key!r}, ignored{_meant(key)}")
    return _beside(raw, Path(path).expanduser().absolute().parent)


def _beside(raw: dict[str, Any], folder: Path) -> dict[str, Any]:
    """`raw` with a relative data dir made one in `folder` (a bad value is left to the
    settings' own check, which warns)."""
    out = dict(raw)
    for key in ("dataDir", "data_dir"):
        value = out.get(key)
        if isinstance(value, str) and value.strip() and "\0" not in value:
            given = Path(value).expanduser()
            out[key] = str(given if given.is_absolute() else folder / given)
    return out


def _setting_named(key: str) -> str | None:
    """The setting `key` names at the top level of a settings file (its alias or name)."""
    fields = Settings.model_fields
    by_alias = {(info.alias or name): name for name, info in fields.items()}
    return by_alias.get(key, key if key in fields else None)


def _meant(key: str) -> str:
    """What an unknown key was likely meant as, in parentheses (empty when nothing)."""
    if key == "baton":
        return (
            " (a settings file holds the keys of the editor's 'baton' section themselves, "
            "at its top level)"
        )
    bare = key.removeprefix("baton.")
    if bare != key and _setting_named(bare) is not None:
        return f" (a settings file names it without 'baton.': {bare!r})"
    return ""
