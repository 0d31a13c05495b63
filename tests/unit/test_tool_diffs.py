"""An edit's diff as the user is shown it (the permission request, the panel, ACP's diff
content): its lines and numbers are the editor's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tool_calls import call, ctx

from baton.acp.tool_calls import diff_texts
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock
from baton.core.settings import ToolsSettings
from baton.core.tools.display import with_tool_calls
from baton.core.tools.edit import EDIT_FILE, TEXT_EDITOR
from baton.core.tools.host import DiskHost

ASK = ToolsSettings()


async def test_a_diff_numbers_and_splits_lines_as_the_editor_does(tmp_path: Path) -> None:
    """A form feed (a page break, ^L) in a line is no line end: str.splitlines made it one,
    so the hunk of an edit at line 8 said "@@ -6,7" and a changed line holding one came
    cut in two, its second half shown as context in both texts."""
    lines = [f"line {n}" for n in range(1, 11)]
    lines[1] = "line 2\x0c# page two"
    lines[7] = "old\x0c-part"
    (tmp_path / "f.py").write_text("\n".join(lines) + "\n")
    host = DiskHost(answer="allowOnce")
    change = {"command": "str_replace", "old_str": "old\x0c-part", "new_str": "new\x0c-part"}
    result = await call(
        ctx(tmp_path, host, ASK), "str_replace_based_edit_tool", path="f.py", **change
    )

    assert result.text == "Applied: Edit f.py (+1 -1) at line 8."
    diff = host.asked[0].diff or ""
    assert diff.split("\n")[2:6] == ["@@ -5,6 +5,6 @@", " line 5", " line 6", " line 7"]
    old, new = diff_texts(diff)
    assert old.split("\n")[3] == "old\x0c-part" and new.split("\n")[3] == "new\x0c-part"
    assert "old" not in new and "new" not in old


TWENTY = "".join(f"line {n}\n" for n in range(1, 21))


def shown_diff(name: str, input: dict[str, Any], result: str | None) -> str:
    """The diff a view shows of a stored call (and its stored result, when it has one)."""
    messages = [Message(role="assistant", content=[ToolUseBlock(id="t1", name=name, input=input)])]
    if result is not None:
        block = ToolResultBlock(tool_use_id="t1", content=result)
        messages.append(Message(role="user", content=[block]))
    (info,) = with_tool_calls(messages)[0].tool_calls or []
    return info.diff or ""


@pytest.mark.parametrize(
    ("name", "model", "change"),
    [
        (TEXT_EDITOR, "claude-sonnet-4-5", {"command": "str_replace", "old_str": "line 12\n"}),
        (EDIT_FILE, "claude-3-5-sonnet-latest", {"oldText": "line 12\n"}),
    ],
)
async def test_a_stored_replace_is_shown_at_the_line_it_changed(
    tmp_path: Path, name: str, model: str, change: dict[str, str]
) -> None:
    """The view rebuilt the diff from the texts alone: its hunk said "@@ -1 +1 @@" for a
    change at line 12."""
    (tmp_path / "f.py").write_text(TWENTY)
    new = {"new_str": "twelve\n"} if name == TEXT_EDITOR else {"newText": "twelve\n"}
    input = {"path": "f.py", **change, **new}
    result = await call(ctx(tmp_path), name, model=model, **input)
    assert result.text == "Applied: Edit f.py (+1 -1) at line 12.", result.text
    diff = shown_diff(name, input, result.text)
    assert diff.split("\n")[2:5] == ["@@ -12 +12 @@", "-line 12", "+twelve"], diff


def test_an_insert_is_shown_after_the_line_it_names() -> None:
    input = {"command": "insert", "path": "f.py", "insert_line": 5, "new_str": "five and a half"}
    diff = shown_diff(TEXT_EDITOR, input, None)
    assert diff.split("\n")[2:4] == ["@@ -5,0 +6 @@", "+five and a half"], diff


@pytest.mark.parametrize(
    "result",
    [None, "Applied: Edit f.py (+1 -1).", "Not applied: the file changed meanwhile."],
)
def test_a_replace_whose_line_is_not_known_is_shown_without_one(result: str | None) -> None:
    """Not run yet, or stored before its result said the line: "@@ -1 +1 @@" was false."""
    input = {"command": "str_replace", "path": "f.py", "old_str": "a\n", "new_str": "b\n"}
    diff = shown_diff(TEXT_EDITOR, input, result)
    assert diff.split("\n")[2:5] == ["@@ @@", "-a", "+b"], diff
