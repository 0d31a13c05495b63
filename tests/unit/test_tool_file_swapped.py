"""A workspace file Baton reads (for a tool, an edit, the project's instructions, a
compaction's restore), swapped by another program after its check: the check (a regular
file, within the bound) was of the name, the read of the name again, on the server's loop.
A FIFO put there in between held the loop (and the server) for as long as its writer
stayed. The file opened is the one checked now."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fifo_probe import checked_as_regular, read_of_fifo

from baton.core.compaction.prompts import project_instructions
from baton.core.compaction.working_set.file_text import read_content
from baton.core.conversation.messages import ToolUseBlock
from baton.core.settings import ToolsSettings
from baton.core.settings_lists import DEFAULT_EXCLUDES
from baton.core.tools.calls import answer
from baton.core.tools.catalog import workspace_registry
from baton.core.tools.host import MAX_FILE_BYTES, DiskHost, EditOutcome, FileEdit
from baton.core.tools.registry import ToolContext, ToolResult
from baton.core.tools.workspace import Workspace
from baton.core.turn.system_prompt import default_system_prompt


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


@pytest.mark.parametrize("read", ["system prompt", "compact instructions", "restore"])
def test_a_project_file_swapped_for_a_fifo_after_its_check_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    """The project's CLAUDE.md, read into each send's system prompt and a compaction's
    instructions, and a file a compaction restores: each was checked by its name (a
    regular file), then read by its name again on the server's loop."""
    root = tmp_path / "ws"
    root.mkdir()
    twin = tmp_path / "twin.md"
    twin.write_text("## Compact Instructions\nkeep the tests\n")
    path = root / "CLAUDE.md"
    checked_as_regular(path, monkeypatch, twin)
    reads: dict[str, Callable[[], object]] = {
        "system prompt": lambda: default_system_prompt(None, [root]),
        "compact instructions": lambda: project_instructions([root]),
        "restore": lambda: read_content(path, None, 10_000, 10_000),
    }

    taken, answers = read_of_fifo(path, reads[read])
    assert not taken, "the FIFO was read"
    assert len(answers) == 1 and "s_other" not in str(answers[0])


def test_an_edit_whose_file_grew_past_the_bound_while_it_waited_is_not_read_whole(
    tmp_path: Path,
) -> None:
    """The comparison at the user's word read the file whole, whatever its size, on the
    server's loop: one grown to gigabytes meanwhile (a log, a dump) was read into memory."""
    path = tmp_path / "app.py"
    with path.open("wb") as grown:
        grown.truncate(MAX_FILE_BYTES + 1)
    edit = FileEdit(path, "x = 1\n", "x = 2\n", "edit app.py")

    outcome = asyncio.run(DiskHost().apply_edit(edit))
    assert outcome == EditOutcome(
        False, f"the file cannot be read (over the {MAX_FILE_BYTES:,} bytes a tool reads)"
    )
