"""A workspace file the tools read, swapped by another program after its check: the check
(`_check_file`: a regular file, within the bound) was of the name, the read of the name
again, on the server's loop. A FIFO put there in between held the loop (and the server)
for as long as its writer stayed. The file opened is the one checked now."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fifo_probe import checked_as_regular, read_of_fifo

from baton.core.conversation.messages import ToolUseBlock
from baton.core.settings import ToolsSettings
from baton.core.settings_lists import DEFAULT_EXCLUDES
from baton.core.tools.calls import answer
from baton.core.tools.catalog import workspace_registry
from baton.core.tools.host import DiskHost, EditOutcome, FileEdit
from baton.core.tools.registry import ToolContext, ToolResult
from baton.core.tools.workspace import Workspace


def read_file(root: Path, path: str) -> ToolResult:
    context = ToolContext("s1", Workspace([root], DEFAULT_EXCLUDES), DiskHost(), ToolsSettings())
    use = ToolUseBlock(id="toolu_1", name="read_file", input={"path": path})
    return asyncio.run(answer(use, workspace_registry("claude-sonnet-4-5"), context, set()))


def test_a_fifo_put_in_its_place_after_the_check_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    twin = tmp_path / "twin.py"
    twin.write_text("x = 1\n")
    checked_as_regular(root / "swap.py", monkeypatch, twin)

    answers: list[Any]
    taken, answers = read_of_fifo(root / "swap.py", lambda: read_file(root, "swap.py"))
    assert not taken, "the FIFO was read"
    [result] = answers
    assert result.is_error and result.text == "Error: swap.py is not a regular file"


def test_an_edit_whose_file_became_a_fifo_while_it_waited_is_not_applied(tmp_path: Path) -> None:
    """The text an edit was planned on is compared, at the user's word, with the file as
    it is then, read whole on the server's loop: a FIFO put in its place meanwhile (the
    user may take minutes to answer) held the loop for as long as its writer stayed."""
    path = tmp_path / "app.py"
    edit = FileEdit(path, "x = 1\n", "x = 2\n", "edit app.py")

    taken, answers = read_of_fifo(path, lambda: asyncio.run(DiskHost().apply_edit(edit)))
    assert not taken, "the FIFO was read"
    assert answers == [EditOutcome(False, "the file cannot be read (a FIFO, not a regular file)")]
