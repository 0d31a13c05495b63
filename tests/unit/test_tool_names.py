"""Files whose names are not UTF-8 (bytes a Latin-1 system wrote): no tool can name them
(a path must be UTF-8 to reach the transcript), so the listings leave them out and say how
many, and a result never holds text that cannot be written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tool_calls import call, ctx


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "ok.txt").write_text("match here\n")
    raw = os.fsencode(folder / "src")
    with open(raw + b"/caf\xe9.txt", "w") as latin:  # the name holds a lone surrogate
        latin.write("match there\n")
    os.mkdir(raw + b"/d\xe9j\xe0")
    with open(raw + b"/d\xe9j\xe0/inner.txt", "w") as inner:
        inner.write("match inside\n")
    return folder


NOTE = "[{} not shown: their names are not UTF-8 or hold a line break, which no result can show]"


def writable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize(
    ("name", "input", "shown"),
    [
        ("list_dir", {"path": "src"}, "ok.txt"),
        ("find_files", {"pattern": "**/*.txt"}, "src/ok.txt"),
        ("search_text", {"pattern": "match"}, "src/ok.txt:1: match here"),
    ],
)
async def test_a_name_that_is_not_utf8_is_left_out_and_counted(
    root: Path, name: str, input: dict[str, str], shown: str
) -> None:
    """The names came into the result as lone surrogates: the send failed (invalid_params,
    the results could not be written) and the turn with it."""
    result = await call(ctx(root), name, **input)
    assert writable(result.text), repr(result.text)
    lines = result.text.splitlines()
    assert lines[0] == shown, result.text
    assert lines[-1] == NOTE.format(2)


async def test_any_result_holding_a_lone_surrogate_is_made_writable(tmp_path: Path) -> None:
    """Whatever a tool answers (one added to the registry included) goes into the
    transcript: a lone surrogate there refused the results, and the turn failed."""
    from baton.core.conversation.messages import ToolUseBlock
    from baton.core.tools.calls import answer
    from baton.core.tools.registry import Registry, Tool, ToolContext, ToolResult

    async def run(input: dict[str, object], context: ToolContext) -> ToolResult:
        return ToolResult("caf\udce9.txt")

    definition = {"name": "names", "input_schema": {"type": "object"}}
    registry = Registry().register(Tool(definition, "auto", "read", run))
    use = ToolUseBlock(id="toolu_1", name="names", input={})
    result = await answer(use, registry, ctx(tmp_path), set())
    assert result.text == "caf\ufffd.txt"


@pytest.mark.parametrize(
    ("name", "input"),
    [
        ("list_dir", {"path": "src"}),
        ("find_files", {"pattern": "**/*"}),
        ("search_text", {"pattern": "x"}),
    ],
)
async def test_a_name_holding_a_line_break_is_left_out_and_counted(
    tmp_path: Path, name: str, input: dict[str, str]
) -> None:
    """The name went into the result as it is: `a\\nb.py` read as two files, `a` and
    `b.py`, neither of which exists, and a name can make a line that reads as the tool's
    own note."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "ok.py").write_text("x = 1\n")
    (src / "a\nb.py").write_text("x = 1\n")
    (src / "x\r[cut: 1 of 9 files shown]").write_text("x = 1\n")
    result = await call(ctx(tmp_path), name, **input)
    shown = {"list_dir": "ok.py", "find_files": "src/ok.py", "search_text": "src/ok.py:1: x = 1"}
    assert result.text.split("\n") == [shown[name], NOTE.format(2)]
