"""Each ACP session's working directory (ACP's `cwd`), kept beside the transcripts in
`<dataDir>/acp-folders.json`, since a transcript has no field for it. A session started
elsewhere (VS Code) has none and is listed under whatever folder the client asks for."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from baton.core.conversation.files import replace_file

log = logging.getLogger(__name__)

FILE_NAME = "acp-folders.json"


class Folders:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME

    def read(self) -> dict[str, str]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError):  # none yet, or no data dir (told at start)
            return {}
        except (OSError, ValueError) as exc:
            log.warning("%s cannot be read (%s): session folders unknown", self.path, exc)
            return {}
        if not isinstance(raw, dict):
            return {}
        return {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, str)}

    def set(self, session_id: str, cwd: str) -> None:
        """Record `cwd` for the session (one whole-file replace; a failure is logged: the
        session itself is stored and only its folder goes unrecorded)."""
        folders = self.read()
        if folders.get(session_id) == cwd:
            return
        folders[session_id] = cwd
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(self.path, json.dumps(folders, ensure_ascii=False, indent=0).encode())
        except OSError as exc:
            log.warning("the folder of session %s is not recorded: %s", session_id, exc)
