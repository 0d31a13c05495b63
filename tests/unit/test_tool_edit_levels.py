"""An edit's level is looked at before its plan reads the file, and what a failed plan
found is told only when the model may read the file anyway or the user allows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_calls import call, ctx

from baton.core.settings import ToolsSettings
from baton.core.tools.host import DiskHost, PermissionOutcome, PermissionRequest

SECRET = "DB_PASSWORD = 'tr0ub4dor'\n"


def levels(edit: str, reads: str) -> ToolsSettings:
    keys = ("read_file", "list_dir", "find_files", "search_text")
    return ToolsSettings.model_validate(
        {"permissions": {"edit": edit} | dict.fromkeys(keys, reads)}
    )


class Watching(DiskHost):
    """A disk host that notes each file a tool reads through it."""

    def __init__(self, answer: PermissionOutcome = "deny") -> None:
        super().__init__(answer=answer)
        self.read: list[Path] = []

    async def read_text(self, path: Path) -> str | None:
        self.read.append(path)
        return None


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "config.py").write_text(SECRET)
    return folder


def edit(model: str, path: str, old: str) -> dict[str, object]:
    if model.startswith("claude-3"):
        return {"name": "edit_file", "path": path, "oldText": old, "newText": "x"}
    return {
        "name": "str_replace_based_edit_tool",
        "command": "str_replace",
        "path": path,
        "old_str": old,
        "new_str": "x",
    }


@pytest.mark.parametrize("model", ["claude-3-5-sonnet", "claude-sonnet-4-5"])
async def test_an_off_edit_is_denied_before_the_file_is_read(root: Path, model: str) -> None:
    """The plan ran first: "no match" for a wrong guess, "Denied" for the right one."""
    answers = []
    for path, guess in (("config.py", "tr0ub4dor"), ("config.py", "hunter2"), ("nope.py", "a")):
        host = Watching()
        input = edit(model, path, guess)
        name = str(input.pop("name"))
        result = await call(ctx(root, host, levels("off", "off")), name, model=model, **input)
        assert result.is_error and result.status == "denied", result.text
        assert host.read == [] and host.asked == []
        answers.append(result.text)
    assert len(set(answers)) == 1, answers
    assert (root / "config.py").read_text() == SECRET


async def test_an_asked_edit_that_cannot_apply_is_asked_when_reads_are_not_free(
    root: Path,
) -> None:
    """With reads off, a no-match told at once would say what the file holds: the user is
    asked first (never for the session), and a denial reads as any other's."""
    denied = {}
    for guess in ("tr0ub4dor", "hunter2"):
        host = Watching("deny")
        result = await call(
            ctx(root, host, levels("ask", "off")),
            "edit_file",
            model="claude-3-5-sonnet",
            path="config.py",
            oldText=guess,
            newText="x",
        )
        assert result.status == "denied" and len(host.asked) == 1, result.text
        denied[guess] = (result.text, host.asked[0])
    assert denied["tr0ub4dor"][0] == denied["hunter2"][0]
    question: PermissionRequest = denied["hunter2"][1]
    assert "cannot be applied (no match in config.py" in question.title
    assert question.options == ("allowOnce", "deny")
    allowed = await call(
        ctx(root, Watching("allowSession"), levels("ask", "off")),
        "edit_file",
        model="claude-3-5-sonnet",
        path="config.py",
        oldText="hunter2",
        newText="x",
    )
    assert allowed.is_error and allowed.text.startswith("Error: no match in config.py")


async def test_an_asked_edit_that_cannot_apply_is_told_at_once_when_reads_run(root: Path) -> None:
    host = Watching("deny")
    result = await call(
        ctx(root, host, levels("ask", "auto")),
        "edit_file",
        model="claude-3-5-sonnet",
        path="config.py",
        oldText="hunter2",
        newText="x",
    )
    assert result.text.startswith("Error: no match in config.py") and host.asked == []
