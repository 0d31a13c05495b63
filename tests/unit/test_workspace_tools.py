"""The workspace tools one by one: what each returns, containment, bounds, the text editor."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.messages import ToolUseBlock
from baton.core.settings import ToolsSettings
from baton.core.settings_lists import DEFAULT_EXCLUDES
from baton.core.tools.calls import answer
from baton.core.tools.catalog import workspace_registry
from baton.core.tools.edit import supports_text_editor
from baton.core.tools.host import DiskHost
from baton.core.tools.registry import ToolContext, ToolResult
from baton.core.tools.workspace import Workspace

AUTO_EDITS = ToolsSettings.model_validate({"permissions": {"edit": "auto"}})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "utils.py").write_text("def parse_date(s):\n    return s\n")
    (folder / "src" / "app.py").write_text("from utils import parse_date\nparse_date('x')\n")
    (folder / "README.md").write_text("# demo\n")
    return folder


def ctx(
    root: Path, host: DiskHost | None = None, settings: ToolsSettings = AUTO_EDITS
) -> ToolContext:
    workspace = Workspace([root], DEFAULT_EXCLUDES)
    return ToolContext("s1", workspace, host or DiskHost(), settings)


async def call(
    context: ToolContext, name: str, model: str = "claude-sonnet-4-5", **input: Any
) -> ToolResult:
    use = ToolUseBlock(id="toolu_1", name=name, input=input)
    return await answer(use, workspace_registry(model), context, set())


async def test_read_file_numbers_lines_and_reads_a_range(root: Path) -> None:
    whole = await call(ctx(root), "read_file", path="src/utils.py")
    assert whole.text == "     1\tdef parse_date(s):\n     2\t    return s"
    assert not whole.is_error
    part = await call(ctx(root), "read_file", path="src/utils.py", startLine=1, endLine=1)
    assert part.text == "     1\tdef parse_date(s):\n[lines 1-1 of 2]"


async def test_read_file_prefers_the_editors_unsaved_text(root: Path) -> None:
    class Editor(DiskHost):
        async def read_text(self, path: Path) -> str | None:
            return "unsaved\n" if path.name == "utils.py" else None

    result = await call(ctx(root, Editor()), "read_file", path="src/utils.py")
    assert result.text == "     1\tunsaved"


async def test_list_dir_marks_folders(root: Path) -> None:
    result = await call(ctx(root), "list_dir")
    assert result.text.splitlines() == ["README.md", "src/"]
    assert (await call(ctx(root), "list_dir", path="src")).text.splitlines() == [
        "app.py",
        "utils.py",
    ]


async def test_list_dir_never_names_a_credential_file(root: Path) -> None:
    """As find_files: a name restore.exclude matches is left out, and the count said."""
    (root / ".env").write_text("API_KEY=sk-live-000\n")
    (root / "src" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    top = await call(ctx(root), "list_dir")
    assert top.text.splitlines() == [
        "README.md",
        "src/",
        "[1 not shown: they may hold credentials (restore.exclude)]",
    ]
    inner = (await call(ctx(root), "list_dir", path="src")).text
    assert "server.pem" not in inner and inner.startswith("app.py\nutils.py\n[1 not shown")
    assert ".env" not in (await call(ctx(root), "find_files", pattern="**/*")).text


async def test_find_files_globs_and_honours_gitignore(root: Path) -> None:
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("x = 1\n")
    (root / "debug.log").write_text("noise\n")
    result = await call(ctx(root), "find_files", pattern="**/*.py")
    assert result.text.splitlines() == ["src/app.py", "src/utils.py"]
    assert (await call(ctx(root), "find_files", pattern="*.log")).text.startswith("No files")


async def test_a_glob_starting_with_dot_slash_matches_as_without_it(root: Path) -> None:
    """find_files took `./src/*.py` as `src/*.py`; search_text's glob matched it against
    `src/app.py` as given and found nothing."""
    for name, input in (
        ("find_files", {"pattern": "./src/app.py"}),
        ("search_text", {"pattern": "parse_date", "glob": "./src/app.py"}),
    ):
        result = await call(ctx(root), name, **input)
        assert result.text.startswith("src/app.py"), result.text


async def test_search_text_finds_hits_and_honours_gitignore(root: Path) -> None:
    (root / ".gitignore").write_text("vendor/\n")
    (root / "vendor").mkdir()
    (root / "vendor" / "lib.py").write_text("parse_date = None\n")
    result = await call(ctx(root), "search_text", pattern=r"parse_date\(")
    assert result.text.splitlines() == [
        "src/app.py:2: parse_date('x')",
        "src/utils.py:1: def parse_date(s):",
    ]
    assert result.summary == "2 hits"
    only = await call(ctx(root), "search_text", pattern="parse_date", glob="app.py")
    assert only.text.splitlines() == [
        "src/app.py:1: from utils import parse_date",
        "src/app.py:2: parse_date('x')",
    ]
    bad = await call(ctx(root), "search_text", pattern="(")
    assert bad.is_error and "not a valid regular expression" in bad.text


@pytest.mark.parametrize("path", ["../outside.txt", "src/../../outside.txt"])
async def test_paths_outside_the_workspace_are_refused(root: Path, path: str) -> None:
    (root.parent / "outside.txt").write_text("secret\n")
    result = await call(ctx(root), "read_file", path=path)
    assert result.is_error and "outside the workspace" in result.text
    absolute = await call(ctx(root), "read_file", path=str(root.parent / "outside.txt"))
    assert absolute.is_error and "outside the workspace" in absolute.text


async def test_a_symlink_out_of_the_workspace_is_refused(root: Path) -> None:
    (root.parent / "outside.txt").write_text("secret\n")
    os.symlink(root.parent / "outside.txt", root / "link.txt")
    os.symlink(root.parent, root / "linkdir")
    for path in ("link.txt", "linkdir/outside.txt"):
        result = await call(ctx(root), "read_file", path=path)
        assert result.is_error and "outside the workspace" in result.text, path
    found = await call(ctx(root), "search_text", pattern="secret")
    assert found.text.startswith("No hits")


async def test_credential_files_and_texts_are_refused(root: Path) -> None:
    (root / ".env").write_text("API_KEY=abc\n")
    (root / "notes.txt").write_text(
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n"
    )
    env = await call(ctx(root), "read_file", path=".env")
    assert env.is_error and "credentials" in env.text and "abc" not in env.text
    key = await call(ctx(root), "read_file", path="notes.txt")
    assert key.is_error and "MIIE" not in key.text
    hits = await call(ctx(root), "search_text", pattern="API_KEY|MIIE")
    assert hits.text.startswith("No hits")
    edit = await call(
        ctx(root), "edit_file", model="claude-2", path=".env", oldText="", newText="x"
    )
    assert edit.is_error and (root / ".env").read_text() == "API_KEY=abc\n"


async def test_a_huge_file_is_cut_with_a_note(root: Path) -> None:
    (root / "big.txt").write_text("".join(f"line {n}\n" for n in range(10_000)))
    result = await call(ctx(root), "read_file", path="big.txt")
    assert "[cut: lines 1-2000 of 10000 shown; read on with startLine=2001]" in result.text
    assert result.summary == "2000 lines (cut)"
    (root / "wide.txt").write_text("x" * 50_000 + "\n")
    wide = await call(ctx(root), "read_file", path="wide.txt")
    assert "[line cut at character 2,000 of 50,000]" in wide.text and len(wide.text) < 3_000


async def test_a_binary_file_is_refused(root: Path) -> None:
    (root / "blob.bin").write_bytes(b"\x89PNG\x00\x00\x01")
    result = await call(ctx(root), "read_file", path="blob.bin")
    assert result.is_error and "binary" in result.text


async def test_many_hits_are_cut(root: Path) -> None:
    (root / "many.txt").write_text("hit\n" * 1000)
    result = await call(ctx(root), "search_text", pattern="hit")
    assert result.text.count("\n") == 200
    assert "[cut: 200 of 1000 hits shown" in result.text
    assert result.summary == "1000 hits"


async def test_edit_file_replaces_once_and_says_what_was_applied(root: Path) -> None:
    result = await call(
        ctx(root),
        "edit_file",
        model="claude-3-5-haiku",
        path="src/utils.py",
        oldText="def parse_date(s):",
        newText="def parse_day(s):",
    )
    assert result.text == "Applied: Edit src/utils.py (+1 -1) at line 1."
    assert (root / "src" / "utils.py").read_text().startswith("def parse_day(s):")
    again = await call(
        ctx(root),
        "edit_file",
        model="claude-3-5-haiku",
        path="src/utils.py",
        oldText="nope",
        newText="x",
    )
    assert again.is_error and "no match" in again.text


async def test_edit_file_fills_an_empty_file_given_an_empty_old_text(root: Path) -> None:
    """No oldText matches in an empty file, and an empty one was refused as it is on a file
    with text: a model with edit_file only could never write into an empty file."""
    (root / "src" / "__init__.py").write_text("")
    filled = await call(
        ctx(root),
        "edit_file",
        model="claude-3-5-haiku",
        path="src/__init__.py",
        oldText="",
        newText="from .utils import parse_date\n",
    )
    assert filled.text == "Applied: Edit src/__init__.py (+1 -0).", filled.text
    assert (root / "src" / "__init__.py").read_text() == "from .utils import parse_date\n"
    again = await call(
        ctx(root),
        "edit_file",
        model="claude-3-5-haiku",
        path="src/__init__.py",
        oldText="",
        newText="x",
    )
    assert again.is_error and "must not be empty" in again.text


async def test_the_text_editor_tool_views_replaces_creates_and_inserts(root: Path) -> None:
    assert supports_text_editor("claude-sonnet-4-5") and not supports_text_editor(
        "claude-3-5-haiku"
    )
    names = [d["name"] for d in workspace_registry("claude-sonnet-4-5").definitions()]
    assert names[-1] == "str_replace_based_edit_tool"
    tool = "str_replace_based_edit_tool"
    view = await call(ctx(root), tool, command="view", path="src/utils.py", view_range=[1, 1])
    assert view.text.startswith("     1\tdef parse_date(s):")
    await call(
        ctx(root),
        tool,
        command="str_replace",
        path="src/utils.py",
        old_str="return s",
        new_str="return s.strip()",
    )
    await call(
        ctx(root), tool, command="insert", path="src/utils.py", insert_line=0, new_str="import os"
    )
    created = await call(ctx(root), tool, command="create", path="src/new.py", file_text="x = 1\n")
    assert created.text == "Applied: Create src/new.py (+1 -0)."
    assert (
        root / "src" / "utils.py"
    ).read_text() == "import os\ndef parse_date(s):\n    return s.strip()\n"
    assert (root / "src" / "new.py").read_text() == "x = 1\n"


async def test_an_edit_of_a_file_changed_meanwhile_is_not_applied(root: Path) -> None:
    class Racing(DiskHost):
        async def ask_permission(self, request: Any) -> Any:
            (root / "src" / "utils.py").write_text("someone else\n")
            return "allowOnce"

    ask = ToolsSettings()
    result = await call(
        ctx(root, Racing(), ask),
        "edit_file",
        model="claude-2",
        path="src/utils.py",
        oldText="return s",
        newText="return 1",
    )
    assert result.is_error and result.text.startswith("Not applied: the file changed meanwhile")
    assert (root / "src" / "utils.py").read_text() == "someone else\n"


# ---- the model's inputs that hung or crashed the server ------------------------------------


async def test_a_gitignore_that_is_no_regular_file_is_never_read(root: Path) -> None:
    """A FIFO blocked the walk for good, a link to /dev/zero read until memory ran out."""
    os.mkfifo(root / "src" / ".gitignore")
    (root / ".gitignore").symlink_to("/dev/zero")
    for name, input in (("find_files", {"pattern": "**/*.py"}), ("search_text", {"pattern": "x"})):
        result = await asyncio.wait_for(call(ctx(root), name, **input), 30)
        assert not result.is_error, result.text


async def test_a_pattern_that_backtracks_without_end_is_stopped_with_a_sentence(
    root: Path,
) -> None:
    (root / "src" / "long.txt").write_text("a" * 80 + "!\n")
    result = await asyncio.wait_for(call(ctx(root), "search_text", pattern="(a|aa)+$"), 30)
    assert result.is_error and "takes too long to match" in result.text


@pytest.mark.parametrize("pattern", ["(" * 499 + ")" * 499, "["])
async def test_patterns_the_engine_cannot_take_are_a_tool_error(root: Path, pattern: str) -> None:
    result = await call(ctx(root), "search_text", pattern=pattern)
    assert result.is_error and "not a valid regular expression" in result.text


async def test_a_loop_of_links_is_skipped_by_the_walks(root: Path) -> None:
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    found = await call(ctx(root), "find_files", pattern="**/*.py")
    assert not found.is_error and "src/utils.py" in found.text
    hits = await call(ctx(root), "search_text", pattern="parse_date")
    assert not hits.is_error and "src/app.py:1:" in hits.text


async def test_any_other_fault_of_a_tool_is_answered_to_the_model(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.core.tools import find_files

    def broken(*_: object) -> None:
        raise RuntimeError("a fault of the tool's own")

    monkeypatch.setattr(find_files, "_find", broken)
    result = await call(ctx(root), "find_files", pattern="*.py")
    assert result.is_error and result.text == "Error: find_files failed (RuntimeError)"


async def test_find_files_refuses_a_huge_pattern_and_lists_no_credential_file(root: Path) -> None:
    (root / ".env").write_text("KEY=1\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "prod.txt").write_text("x\n")
    huge = await call(ctx(root), "find_files", pattern="**/" * 20_000 + "*.py")
    assert huge.is_error and "longer than 1000 characters" in huge.text
    listed = await call(ctx(root), "find_files", pattern="**/*")
    assert "README.md" in listed.text
    assert ".env" not in listed.text and "prod.txt" not in listed.text


async def test_a_nested_gitignore_can_keep_what_an_outer_one_ignores(root: Path) -> None:
    (root / ".gitignore").write_text("*.log\n")
    (root / "sub").mkdir()
    (root / "sub" / ".gitignore").write_text("!keep.log\n")
    (root / "sub" / "keep.log").write_text("kept\n")
    (root / "sub" / "drop.log").write_text("dropped\n")
    listed = await call(ctx(root), "find_files", pattern="**/*.log")
    assert listed.text == "sub/keep.log"


# ---- line ends and line numbers as the editor has them --------------------------------------


async def edit_file(root: Path, path: str, old: str, new: str) -> ToolResult:
    """An `edit_file` call, the tool a model without the API's text editor has."""
    return await call(
        ctx(root), "edit_file", model="claude-3-5-haiku", path=path, oldText=old, newText=new
    )


async def test_a_crlf_file_is_edited_with_text_as_read_file_shows_it(root: Path) -> None:
    path = root / "win.py"
    path.write_bytes(b"def a():\r\n    return 1\r\n\r\ndef b():\r\n    return 2\r\n")
    shown = await call(ctx(root), "read_file", path="win.py")
    assert "\r" not in shown.text and "     4\tdef b():" in shown.text
    result = await edit_file(root, "win.py", "def b():\n    return 2", "def b():\n    return 3")
    assert not result.is_error, result.text
    assert path.read_bytes() == b"def a():\r\n    return 1\r\n\r\ndef b():\r\n    return 3\r\n"


async def test_line_numbers_break_only_where_an_editor_breaks_lines(root: Path) -> None:
    """A form feed or a Unicode line separator is no line break for an editor."""
    path = root / "ff.py"
    path.write_text("def a():\n    pass\n\x0c\ndef b():\n    s = 'x\u2028y'\n")
    shown = await call(ctx(root), "read_file", path="ff.py")
    assert "     4\tdef b():" in shown.text
    hits = await call(ctx(root), "search_text", pattern="def b")
    assert "ff.py:4:" in hits.text
    result = await edit_file(root, "ff.py", "s = 'x\u2028y'", "s = 'z'")
    assert not result.is_error, result.text


@pytest.mark.parametrize("name", ["read_file", "list_dir", "str_replace_based_edit_tool"])
async def test_a_name_too_long_for_the_file_system_is_told_as_such(root: Path, name: str) -> None:
    """The OSError of looking at it was answered "failed (OSError)", which said nothing."""
    input = {"path": "a" * 300, "command": "create", "file_text": "x"}
    result = await call(ctx(root), name, **input)
    assert result.is_error and "cannot be reached (File name too long)" in result.text, result.text


async def test_the_diff_of_a_large_file_is_worked_out_off_the_event_loop(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """difflib over a file of 200,000 lines holds its thread for about a second: on the
    event loop's thread no other request would be answered meanwhile."""
    import threading

    from baton.core.tools import edit

    ran_on: list[str] = []
    real = edit.unified

    def spied(shown: str, before: str, after: str) -> str:
        ran_on.append(threading.current_thread().name)
        return real(shown, before, after)

    monkeypatch.setattr(edit, "unified", spied)
    big = "".join(f"line {n}\n" for n in range(40_000))
    (root / "big.txt").write_text(big)
    loop_thread = threading.current_thread().name
    editor, replace = "str_replace_based_edit_tool", "str_replace"
    small = await call(
        ctx(root), editor, command=replace, path="README.md", old_str="demo", new_str="Demo"
    )
    large = await call(
        ctx(root), editor, command=replace, path="big.txt", old_str="line 7\n", new_str="x\n"
    )
    assert not small.is_error and not large.is_error
    assert ran_on[0] == loop_thread  # a small file's diff is quicker than a hand-off
    assert ran_on[1] != loop_thread
    assert (root / "big.txt").read_text().startswith("line 0\nline 1\n")
    assert "x\nline 8\n" in (root / "big.txt").read_text()


async def test_list_dir_reads_a_bounded_part_of_a_huge_folder_off_the_loop(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder of a million entries was read, checked and sorted whole on the event loop
    (seconds with no request answered): it is listed on a thread, from its first MAX_READ
    entries, saying so."""
    import threading

    from baton.core.tools import list_dir

    monkeypatch.setattr(list_dir, "MAX_READ", 50)
    crowd = root / "crowd"
    crowd.mkdir()
    for n in range(60):
        (crowd / f"f{n:03d}.txt").write_text("")
    (crowd / "sub").mkdir()
    read_on: list[str] = []
    real = list_dir._read

    def spied(located: Any) -> Any:
        read_on.append(threading.current_thread().name)
        return real(located)

    monkeypatch.setattr(list_dir, "_read", spied)
    result = await call(ctx(root), "list_dir", path="crowd")
    assert read_on and read_on[0] != threading.current_thread().name
    lines = result.text.splitlines()
    assert len(lines) == 51  # 50 entries read, then the note
    assert lines[-1].startswith("[the folder holds more than 50 entries")
    assert result.summary == "50+ entries"
    whole = await call(ctx(root), "list_dir", path="src")
    assert whole.text.splitlines() == ["app.py", "utils.py"]
