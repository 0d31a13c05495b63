"""An edit's diff as the user is shown it (the permission request, the panel, ACP's diff
content): its lines and numbers are the editor's."""

from __future__ import annotations

from pathlib import Path

from tool_calls import call, ctx

from baton.acp.tool_calls import diff_texts
from baton.core.settings import ToolsSettings
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

    assert result.text == "Applied: Edit f.py (+1 -1)."
    diff = host.asked[0].diff or ""
    assert diff.split("\n")[2:6] == ["@@ -5,6 +5,6 @@", " line 5", " line 6", " line 7"]
    old, new = diff_texts(diff)
    assert old.split("\n")[3] == "old\x0c-part" and new.split("\n")[3] == "new\x0c-part"
    assert "old" not in new and "new" not in old
