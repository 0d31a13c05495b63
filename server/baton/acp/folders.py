"""Each ACP session's working directory (ACP's `cwd`), kept beside the transcripts in
`<dataDir>/acp-folders.json`, since a transcript has no field for it. A session started
elsewhere (VS Code) has none and is listed under whatever folder the client asks for."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from baton.core.conversation.files import read_small, replace_file
from baton.core.conversation.transcript_read import parse_line  # nested too deep: ValueError
from baton.core.errors import StorageError

log = logging.getLogger(__name__)

FILE_NAME = "acp-folders.json"
MAX_BYTES = 64 * 1024 * 1024  # a few hundred bytes a session: room for 100,000s of them


class Folders:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME

    def read(self) -> dict[str, str]:
        """The folders recorded, {} when none can be read (the reason logged)."""
        folders = self._read()
        return folders if folders is not None else {}

    def _read(self) -> dict[str, str] | None:
        """The folders recorded ({} when there is no file yet); None when the file cannot
        be read: it is read only as a regular file (a link, a FIFO or a folder of that name
        is never followed, waited on or read), of at most MAX_BYTES."""
        try:
            data = read_small(self.path, MAX_BYTES)
            raw = parse_line(data) if data is not None else {}
        except (FileNotFoundError, NotADirectoryError):  # no data dir (told at start)
            return {}
        except StorageError as exc:  # it names the path
            log.warning("%s: session folders unknown", exc.message)
            return None
        except (OSError, ValueError) as exc:
            log.warning("%s cannot be read (%s): session folders unknown", self.path, exc)
            return None
        if not isinstance(raw, dict):
            log.warning("%s holds no JSON object: session folders unknown", self.path)
            return None
        return {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, str)}

    def set(self, session_id: str, cwd: str) -> None:
        """Record `cwd` for the session (one whole-file replace; a failure is logged: the
        session itself is stored and only its folder goes unrecorded). A file that cannot
        be read is left as it is, never replaced by one without the folders it holds.

        The data dir is locked (`flock`) from the read to the replace, so that agents on
        one data dir recording at once each add to what the other wrote."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _locked(self.path.parent):
                folders = self._read()
                if folders is None or folders.get(session_id) == cwd:
                    return
                folders[session_id] = cwd
                data = json.dumps(folders, ensure_ascii=False, indent=0).encode()
                replace_file(self.path, data)
        except OSError as exc:
            log.warning("the folder of session %s is not recorded: %s", session_id, exc)


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """`folder` locked while the block runs; where it cannot be (a file system without
    locks), the block runs as it did before there was a lock."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # the lock goes with it
