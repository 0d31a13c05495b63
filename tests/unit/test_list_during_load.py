"""A list sent while a load brings the session's entry of the list's index up to date
(issue 26, item 8): the load summarizes the session before it reads it (0.26-0.6 s of
parsing for 100,000 messages when the index has not seen it, the agent just started), and
a list meanwhile waited for that summary (374-462 ms). It now lists the session from its
header alone, read none of it past that, and the load's summary gives way to the list's
read. Checked by order: the load's summary is held until the list is answered."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation import listing, transcript_summary
from baton.core.conversation.listing import SessionIndex
from baton.core.conversation.transcript_summary import GIVE_WAY, summarize

WAIT = 20.0  # an upper bound, never a pause
SID = "s_loading"
LINES = 3_000


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A session renamed after its first messages, a long one (past what is read in one go)."""
    header = {
        "type": "session",
        "format": 1,
        "sessionId": SID,
        "title": "New chat",
        "createdAt": "2026-01-01T00:00:00.000Z",
    }
    lines = [json.dumps(header)]
    for n in range(LINES):
        message = {
            "id": f"m{n}",
            "role": ("user", "assistant")[n % 2],
            "content": [{"type": "text", "text": "word " * 30}],
            "createdAt": f"2026-01-02T00:00:{n % 60:02d}.000Z",
        }
        lines.append(json.dumps({"type": "message", "message": message}))
    lines.append(json.dumps({"type": "meta", "title": "The parser's refactor"}))
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / f"{SID}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sessions


def test_a_list_while_a_load_summarizes_the_session_lists_it_from_its_header(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = SessionIndex()
    summarizing, release = threading.Event(), threading.Event()
    whole_reads: list[str] = []

    def held(path: str, st: os.stat_result, before: Any, *, whole: bool, **kw: Any) -> Any:
        if whole:
            whole_reads.append(threading.current_thread().name)
        if whole and threading.current_thread().name == "load":
            summarizing.set()
            release.wait(WAIT)
        return summarize(path, st, before, whole=whole, **kw)

    monkeypatch.setattr(listing, "summarize", held)
    listed: list[Any] = []
    with index.being_read(SID):
        load = threading.Thread(target=index.note_read, args=(folder, SID), name="load")
        load.start()
        assert summarizing.wait(WAIT)
        lister = threading.Thread(
            target=lambda: listed.extend(index.summaries(folder)), name="list", daemon=True
        )
        lister.start()
        lister.join(WAIT)
        answered = not lister.is_alive()  # while the load's summary is held
        release.set()
        load.join(WAIT)

    assert answered
    (row,) = listed
    assert row.session_id == SID and row.title == "New chat" and row.partial
    assert row.updated_at == "2026-01-01T00:00:00.000Z"  # its header's, nothing past it read
    assert whole_reads == ["load"]
    (row,) = index.summaries(folder)  # the load's summary, nothing read again
    assert row.title == "The parser's refactor" and not row.partial
    assert row.updated_at == "2026-01-02T00:00:59.000Z"
    assert whole_reads == ["load"]


def test_a_list_after_a_load_that_failed_reads_the_session_itself(folder: Path) -> None:
    index = SessionIndex()
    with index.being_read(SID):
        pass  # the load's read never ran (cancelled before its lane took it)
    (row,) = index.summaries(folder)
    assert row.title == "The parser's refactor" and not row.partial


def test_a_long_summary_offers_to_give_way_every_few_hundred_lines(folder: Path) -> None:
    path = folder / f"{SID}.jsonl"
    st = os.lstat(path)
    assert st.st_size > transcript_summary.SMALL  # read line by line, not in one go
    offered: list[int] = []

    given = summarize(str(path), st, None, whole=True, give_way=lambda: offered.append(1))

    assert len(offered) == (LINES + 2) // GIVE_WAY
    assert given == summarize(str(path), st, None, whole=True)
