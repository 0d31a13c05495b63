"""A search or a file walk stopped with its call: the user stopping the turn stops the
thread the walk runs on, at its next file."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from tool_calls import ctx

from baton.core.tools import find_files, search_text


@pytest.mark.parametrize(
    ("tool", "reader", "input"),
    [
        (search_text, "_search_line", {"pattern": "x"}),
        (find_files, "glob_matcher", {"pattern": "src/*.py"}),
    ],
)
async def test_a_cancelled_walk_stops_at_its_next_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: Any, reader: str, input: dict[str, str]
) -> None:
    """Cancelling the call left its thread reading on, every file of the workspace (up to
    30 s of a large one), beside the turns that followed."""
    (tmp_path / "src").mkdir()
    for n in range(50):
        (tmp_path / "src" / f"m{n:02}.py").write_text("x = 1\n")
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()
    looked: list[str] = []
    if reader == "_search_line":
        real_line = search_text._search_line

        def line(pattern: Any, text: str, deadline: float, where: str) -> Any:
            looked.append(where)
            entered.set()
            release.wait()
            return real_line(pattern, text, deadline, where)

        monkeypatch.setattr(search_text, "_search_line", line)
        work, name = search_text._search, "_search"
    else:
        real_matcher = find_files.glob_matcher

        def matcher(pattern: str) -> Any:
            match = real_matcher(pattern)

            def slow(shown: str) -> bool:
                looked.append(shown)
                entered.set()
                release.wait()
                return match(shown)

            return slow

        monkeypatch.setattr(find_files, "glob_matcher", matcher)
        work, name = find_files._find, "_find"

    def watched(*args: Any) -> Any:
        try:
            return work(*args)
        finally:
            finished.set()

    monkeypatch.setattr(tool, name, watched)
    task = asyncio.ensure_future(tool.run(input, ctx(tmp_path)))
    await asyncio.to_thread(entered.wait)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    await asyncio.to_thread(finished.wait)
    assert len(looked) == 1, len(looked)
