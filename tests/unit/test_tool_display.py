"""The one line a view shows per tool call: title, status, summary, an edit's diff."""

from __future__ import annotations

from pathlib import Path

from baton.core.conversation.messages import (
    CLEARED_RESULT,
    Message,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.tools import find_files, list_dir, read_file
from baton.core.tools.display import with_tool_calls


def pair(name: str, input: dict, result: str | None, error: bool = False) -> list[Message]:
    use = Message(role="assistant", content=[ToolUseBlock(id="t1", name=name, input=input)])
    if result is None:
        return [use]
    block = ToolResultBlock(tool_use_id="t1", content=result, is_error=True if error else None)
    return [use, Message(role="user", content=[block])]


def info(messages: list[Message]) -> tuple:
    (call,) = with_tool_calls(messages)[0].tool_calls or []
    return call.title, call.status, call.summary


def test_titles_statuses_and_summaries() -> None:
    hits = "a.py:1: parse_date\nb.py:2: parse_date(x)"
    assert info(pair("search_text", {"pattern": "parse_date"}, hits)) == (
        "Search `parse_date` (2 hits)", "done", "2 hits",
    )  # fmt: skip
    numbered = "\n".join(f"{n:6}\tx" for n in range(1, 81))
    read = pair("read_file", {"path": "app.py", "startLine": 1, "endLine": 80}, numbered)
    assert info(read) == ("Read app.py:1-80", "done", "80 lines")
    denied = pair(
        "edit_file", {"path": "u.py", "oldText": "a\n", "newText": "b\nc\n"}, "Denied: no", True
    )
    assert info(denied) == ("Edit u.py (+2 -1)", "denied", "Denied: no")
    assert info(pair("list_dir", {}, None)) == ("List the workspace", "pending", None)


def test_views_get_copies_and_the_stored_message_stays_bare() -> None:
    messages = pair("find_files", {"pattern": "*.py"}, "a.py\nb.py")
    shown = with_tool_calls(messages)
    assert shown[0] is not messages[0] and messages[0].tool_calls is None
    assert "toolCalls" in shown[0].wire() and "toolCalls" not in messages[0].wire()


async def test_a_stored_calls_summary_is_the_one_its_tool_told_as_it_ran(tmp_path: Path) -> None:
    """A load replays the calls from their stored results: list_dir had no summary there
    ("3 entries" live), an empty file read "0 lines" ("empty"), and a cut listing counted
    its notes as files."""
    from baton.core.settings import Settings
    from baton.core.tools.registry import ToolContext
    from baton.core.tools.workspace import Workspace

    (tmp_path / "src").mkdir()
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "hollow").mkdir()
    for n in range(find_files.MAX_RESULTS + 2):
        (tmp_path / "src" / f"m{n}.py").write_text("")
    other = tmp_path.parent / f"{tmp_path.name}-other"
    other.mkdir()
    one = ToolContext("s", Workspace([tmp_path], []), None, Settings().tools)
    two = ToolContext("s", Workspace([tmp_path, other], []), None, Settings().tools)
    calls = [
        (list_dir, {"path": "."}, one),
        (list_dir, {"path": "hollow"}, one),
        (list_dir, {}, two),
        (read_file, {"path": "empty.py"}, one),
        (read_file, {"path": "a.py"}, one),
        (find_files, {"pattern": "src/*.py"}, one),
        (find_files, {"pattern": "*.nothing"}, one),
    ]
    for tool, given, ctx in calls:
        result = await tool.run(given, ctx)
        messages = pair(tool.DEFINITION["name"], given, result.text)
        assert info(messages)[2] == result.summary, (tool.DEFINITION["name"], given)


async def test_one_thing_found_is_counted_in_the_singular(tmp_path: Path) -> None:
    """'1 entries', '1 lines', '1 hits', '1 files' in the panel, live and read back."""
    from baton.core.settings import Settings
    from baton.core.tools import search_text
    from baton.core.tools.registry import ToolContext
    from baton.core.tools.workspace import Workspace

    (tmp_path / "a.py").write_text("x = 1\n")
    ctx = ToolContext("s", Workspace([tmp_path], []), None, Settings().tools)
    calls = [
        (list_dir, {"path": "."}, "1 entry"),
        (read_file, {"path": "a.py"}, "1 line"),
        (find_files, {"pattern": "*.py"}, "1 file"),
        (search_text, {"pattern": "x = 1"}, "1 hit"),
    ]
    for tool, given, summary in calls:
        result = await tool.run(given, ctx)
        assert result.summary == summary
        assert info(pair(tool.DEFINITION["name"], given, result.text))[2] == summary


def test_a_result_cleared_by_a_microcompaction_is_said_cleared() -> None:
    """Its placeholder read as a listing of nothing: '0 entries', '0 lines'."""
    for name, given in (("list_dir", {"path": "."}), ("read_file", {"path": "a.py"})):
        assert info(pair(name, given, CLEARED_RESULT))[2] == "cleared"


async def test_a_stored_search_counts_its_hits_not_its_notes(tmp_path: Path) -> None:
    """A search's notes (a file left out, a walk cut short) were counted as hits when a
    view read the result back: '2 hits' in the panel for the one the search told live."""
    from baton.core.settings import Settings
    from baton.core.tools import search_text
    from baton.core.tools.registry import ToolContext
    from baton.core.tools.workspace import Workspace

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b\nc.py").write_text("x = 1\n")  # left out, and said so in a note
    (tmp_path / "[x].py").write_text("x = 1\n")  # a hit, however it starts
    ctx = ToolContext("s", Workspace([tmp_path], []), None, Settings().tools)
    given = {"pattern": "x = 1"}
    result = await search_text.run(given, ctx)
    assert result.summary == "2 hits" and result.text.count("\n") == 2
    assert info(pair("search_text", given, result.text))[2] == "2 hits"


def test_a_title_quoting_a_huge_input_is_cut() -> None:
    """The title names the call by its input: a path or pattern of megabytes (the model's
    own) made a title of megabytes, sent with every view and every call's update."""
    far = "/" + "x" * 300_000
    title, status, summary = info(pair("read_file", {"path": far}, "Error: outside", True))
    assert title.startswith("Read /xxx") and title.endswith("…")
    assert len(title) == 200
    assert (status, summary) == ("failed", "outside")
    hits = "a.py:1: x\nb.py:2: x"
    title, _, _ = info(pair("search_text", {"pattern": "x" * 900}, hits))
    assert title.endswith("… (2 hits)")  # what the search found still said
