"""Diagnostics of a session whose transcript cannot be read when they come due (another
program put a folder or a FIFO in its place) are not published, and the log says why in
one line: no traceback, as for any error the server answers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_change_events import FakeServer

from baton.core.conversation.messages import MessageInput
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton.lsp.session_document.publisher import SessionDocuments

PUBLISHER = "baton.lsp.session_document.diagnostics_publisher"


@pytest.fixture
def service(tmp_path: Path, estimator: Estimator) -> Iterator[BatonService]:
    baton = BatonService(Settings(data_dir=str(tmp_path)), estimator=estimator)
    yield baton
    baton.store.close()


async def test_a_transcript_turned_into_a_folder_is_told_in_one_line(
    service: BatonService, caplog: pytest.LogCaptureFixture
) -> None:
    """It was logged as 'publishing diagnostics for ... failed' with the StorageError's
    traceback on stderr."""
    sid = service.create().session_id
    service.append(sid, [MessageInput(role="user", content="hello there")])
    service.store.close()  # read again from the disk at its next use
    server = FakeServer(service)  # a client that looks at it after a restart
    documents = SessionDocuments(server, service)  # type: ignore[arg-type]
    path = service.store.path_for(sid)
    path.unlink()
    path.mkdir()
    caplog.set_level(logging.WARNING, logger=PUBLISHER)

    documents.first_look(sid)  # its diagnostics come due
    while not [r for r in caplog.records if r.name == PUBLISHER]:
        await asyncio.sleep(0.01)

    (record,) = [r for r in caplog.records if r.name == PUBLISHER]
    assert record.exc_info is None and record.levelno == logging.WARNING
    assert record.getMessage() == (
        f"the diagnostics of session {sid} are not published: {path} is a directory; "
        "Baton reads only regular files and never follows a link"
    )
    assert server.published == []
