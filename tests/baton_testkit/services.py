"""A BatonService made as a server's start makes one: on a data dir (its calibration kept
there) and a workspace folder, with a key for the fake API and a small kept window so a
few turns can be compacted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton.core.service.service import BatonService
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator

API_KEY = "sk-ant-test-service-0000000000"
SETTINGS: dict[str, Any] = {
    "keepWindow": {"minTokens": 300, "minTextMessages": 2},
    "summarizer": "extractive",
}


def service_on(
    data: Path, estimator: Estimator, workspace: Path | None = None, **settings: Any
) -> BatonService:
    """`settings`: the client's settings (camelCase), over `SETTINGS`."""
    values = {**SETTINGS, **settings, "dataDir": str(data)}
    service = BatonService(Settings.model_validate(values), api_key=API_KEY, estimator=estimator)
    service.keep_calibration()
    if workspace is not None:
        service.set_workspace_folders([workspace.as_uri()])
    return service


def service_with_open_file(tmp_path: Path) -> tuple[BatonService, Path]:
    """A service (data dir under `tmp_path`, no key) whose editor shows one workspace
    file, `ws/app.py` holding "VERSION = 1", and keeps a small window: a compaction of a
    few turns restores that file."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    source = workspace / "app.py"
    source.write_text("VERSION = 1\n")
    service = BatonService(
        Settings(
            data_dir=str(tmp_path / "data"),
            keep_window=KeepWindowSettings(min_tokens=500, min_text_messages=2, max_tokens=3_000),
        )
    )
    service.set_workspace_folders([workspace.as_uri()])
    service.editor_files.focused(source.as_uri())
    return service, source
