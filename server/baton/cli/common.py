"""What the command line's subcommands share: file arguments, session files, exit codes.

The subcommand modules import core only when they run: `baton serve` builds the whole
parser and must start without the session code it does not use."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from baton.core.errors import InvalidParams
from baton.core.one_line import one_line

if TYPE_CHECKING:
    from baton.cli.session_files import LoadedFile
    from baton.core.conversation.session import Session, TokenCounter
    from baton.core.settings import Settings
    from baton.core.usage.budget import ModelLimits
    from baton.core.usage.estimator import Estimator

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE_SESSION = EXAMPLES_DIR / "session.jsonl"
EXIT_OK, EXIT_ERROR = 0, 2

Subparsers = Any  # argparse's _SubParsersAction is private


def existing_file(name: str, data_dir: Path | None = None) -> Path:
    """`name` as a path to a readable file, or a clear InvalidParams (a session id named
    for it: where its transcript is in `data_dir`, by default the default data dir)."""
    path = Path(name).expanduser()
    if path.is_dir():
        raise InvalidParams(f"{name} is a directory, not a session file")
    if not path.is_file():
        if path.exists():  # a FIFO, a device: never read
            raise InvalidParams(f"{name} is not a regular file (a FIFO, a device): no session")
        if path.is_symlink():  # it is there, as a link: "no such file" would deny it
            raise InvalidParams(
                f"{name} is a link that leads to no file (its target is missing, or it is a "
                "loop of links): name the session file itself"
            )
        raise InvalidParams(f"no such file: {name}{_as_session_id(name, data_dir)}")
    return path


def _as_session_id(name: str, data_dir: Path | None) -> str:
    """What a missing file's `name` names when it is a session's id (the id the editor's
    session list shows): that session's transcript in the data dir, or that it has none."""
    if not re.fullmatch(r"s_[0-9a-f]{16}", name):
        return ""
    if data_dir is None:
        from baton.core.settings import Settings

        data_dir = Settings().resolved_data_dir()
    transcript = data_dir / "sessions" / f"{name}.jsonl"
    if transcript.is_file():
        return f"; the data dir's session {name} is {transcript}: name that file"
    return (
        f"; a session id names a transcript of the data dir, and {transcript.parent} holds "
        "none of that id"
    )


def utf8_argument(value: str | None, flag: str) -> None:
    """InvalidParams when an argument holds a byte that is not UTF-8 (Python keeps it as a
    lone surrogate, which no transcript or request can hold), before any work is done."""
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        byte = os.fsencode(value[exc.start])[0]
        raise InvalidParams(
            f"{flag} is not UTF-8 text (the byte 0x{byte:02x} at character {exc.start + 1})"
        ) from None


def file_or_example(name: str | None) -> Path:
    """The session file a command names, or the bundled example when it names none."""
    return existing_file(name) if name else EXAMPLE_SESSION


@contextmanager
def open_session_file(
    path: Path, count: TokenCounter, *, writable: bool = False
) -> Iterator[LoadedFile]:
    """A session read from a Baton transcript (read-only, or with `writable` a copy that
    may be changed) or imported from a Claude Code file into a temporary data directory
    that is deleted afterwards; `path` is never changed."""
    import tempfile

    from baton.cli.session_files import session_from_file
    from baton.core.conversation.store import SessionStore

    with tempfile.TemporaryDirectory(prefix="baton-") as scratch:
        store = SessionStore(Path(scratch), count)
        try:
            with session_from_file(path, store, writable=writable) as loaded:
                yield loaded
        finally:
            store.close()


UNTITLED = "(untitled)"


def title_line(title: str) -> str:
    """A session's title as the output's text gives it: one line, its escape sequences
    shown, not run; UNTITLED for a file that holds none (a Baton transcript whose header
    has no title, or one of blanks), where a blank opened the line."""
    return one_line(title).strip() or UNTITLED


def json_text(value: Any, stream: TextIO | None = None) -> str:
    """`value` as the JSON a --json option prints: characters as they are where `stream`
    (stdout) can write them, else as JSON escapes (an ASCII output would write them as
    \\xNN, which no JSON parser reads)."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    try:
        text.encode(getattr(stream or sys.stdout, "encoding", None) or "utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a name not UTF-8) included
        return json.dumps(value, indent=2)
    except LookupError:
        pass
    return text


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="where Baton sessions live (default: BATON_DATA_DIR, else the platform's "
        "user data dir)",
    )


def settings_for(args: argparse.Namespace) -> Settings:
    """The settings a command counts and compacts with: its settings file's (`--settings`,
    where it takes one), else the defaults; `--data-dir` over the file's `dataDir`."""
    settings = file_settings(getattr(args, "settings", None))
    data_dir = getattr(args, "data_dir", None)
    return settings.model_copy(update={"data_dir": data_dir}) if data_dir else settings


def file_settings(path: str | None) -> Settings:
    """The settings a server given the settings file `path` counts with (the file `baton acp
    --settings` takes, the editor's `baton.*` keys); the defaults without one. A bad value
    warns and keeps its default, as the server's does."""
    from baton.core.settings_file import read_settings
    from baton.core.settings_read import parse_settings

    def warn(text: str) -> None:
        print(f"baton: warning: {text}", file=sys.stderr)

    return parse_settings(read_settings(path, warn), warn)


def data_dir_of(path: Path) -> Path | None:
    """The data dir `path` is a session transcript of (it is in its `sessions` folder), or
    None; a name relative to that folder too."""
    folder = path.absolute().parent
    return folder.parent if folder.name == "sessions" else None


def data_dir_estimator(data_dir: Path | None) -> Estimator:
    """The estimator a server on `data_dir` counts with: the default one, from the data
    dir's saved calibration when it has one (None: no data dir's session)."""
    from baton.core.usage.estimator import default_estimator
    from baton.core.usage.saved_calibration import SavedCalibration

    estimator = default_estimator()
    saved = SavedCalibration(data_dir) if data_dir is not None else None
    if saved is not None and saved.path.is_file():
        estimator = estimator.fresh()
        saved.restore(estimator)
    return estimator


def add_settings_file(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--settings",
        metavar="FILE",
        help="a JSON file of Baton settings (the editor's keys, as `baton acp --settings` "
        "takes); without it, the defaults",
    )


def data_dir_to_write(settings: Settings) -> Path:
    """The data dir a command keeps sessions in; InvalidParams, before any work is done,
    when none can be kept there (a file on the way, a read-only disk, no permission)."""
    from baton.core.conversation.folders import write_problem

    data_dir = settings.resolved_data_dir()
    problem = write_problem(data_dir / "sessions")
    if problem:
        raise InvalidParams(f"cannot keep sessions in the data dir {data_dir}: {problem}")
    return data_dir


def use_model(session: Session, model: str | None, settings: Settings) -> None:
    """Count `session` against `model` (in memory only); say so when its window is a guess."""
    from baton.core.usage.budget import budget_for

    if not model:
        return
    session.model = model
    _, warning = budget_for(model, settings)
    if warning:
        print(f"baton: warning: {warning}", file=sys.stderr)


def api_limits(model: str, settings: Settings) -> tuple[ModelLimits | None, str | None]:
    """The Models API's limits for `model`, asked as a send with a key asks them before its
    request (once, no retry), or None and why the model table's stand instead. A server
    with a key counts its meter against the same limits."""
    import asyncio

    from baton.core import environment
    from baton.core.service.model_access import KEY_ENV, api_timeout
    from baton.core.usage.budget import ModelLimits

    key = environment.api_key(os.environ.get(KEY_ENV))
    if key is None:
        return None, f"no {KEY_ENV}: a send asks the Models API, whose limits may differ"
    base_url = settings.resolved_base_url()
    if base_url is not None and not environment.is_http_url(base_url):
        return None, "the API's address is no http:// or https:// URL"

    async def ask() -> dict[str, int] | None:
        from baton.core.model_api.client import AnthropicClient

        client = AnthropicClient(key, base_url=base_url, timeout=api_timeout())
        try:
            return await client.model_limits(model)
        finally:
            await client.aclose()

    found = asyncio.run(ask())
    if not found:
        return None, "the Models API did not answer for it: a send then uses them too"
    return ModelLimits.from_api(found), None
