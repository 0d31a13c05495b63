"""What a model's call may cost: patterns refused before they grow, walks and results
bounded, every cut said."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tool_calls import call, ctx


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("aaaa\nabab\n2024-01-31\n")
    return folder


@pytest.mark.parametrize("pattern", ["((a{1000}){1000}){1000}", "(a{1000}){1000}", "a{4294967296}"])
async def test_nested_counted_repeats_are_refused_before_they_are_compiled(
    root: Path, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`regex` copies what a count repeats: the first pattern, 23 characters, asked for
    about 10^9 nodes (MemoryError at 1 GB, the OOM killer without a cap)."""
    from baton.core.tools import search_text

    compiled: list[str] = []

    def compile(pattern: str, *args: Any, **kwargs: Any) -> Any:
        compiled.append(pattern)
        raise MemoryError

    monkeypatch.setattr(search_text.regex, "compile", compile)
    result = await call(ctx(root), "search_text", pattern=pattern)
    assert result.is_error and "too large to compile" in result.text, result.text
    assert "over 50,000" in result.text
    assert compiled == []


@pytest.mark.parametrize(
    "pattern", [r"\d{4}-\d{2}-\d{2}", "(?:ab){1000}", "a{0,100000}", r"(?P<x>a)(?P=x){3}"]
)
async def test_counted_repeats_of_a_usual_size_still_search(root: Path, pattern: str) -> None:
    result = await call(ctx(root), "search_text", pattern=pattern)
    assert not result.is_error, result.text


def tree(root: Path) -> Path:
    for d in range(5):
        (root / f"pkg{d}").mkdir()
        for n in range(20):
            (root / f"pkg{d}" / f"module_{n}.py").write_text("x\n")
    return root


async def test_a_glob_of_many_globstars_costs_like_a_plain_one(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`"**/" * 333` was expanded into 128 shapes again for every file: about 5 ms a file,
    minutes on a large tree. A run of `**/` is one, and the shapes are made once."""
    from baton.core.tools import find_files

    tree(root)
    tried: list[str] = []
    real = find_files.fnmatch.fnmatchcase

    def counting(name: str, pattern: str) -> bool:
        tried.append(pattern)
        return real(name, pattern)

    monkeypatch.setattr(find_files.fnmatch, "fnmatchcase", counting)
    result = await call(ctx(root), "find_files", pattern="**/" * 330 + "*.py")
    assert "pkg4/module_19.py" in result.text, result.text
    globs = [p for p in tried if p.endswith("*.py")]  # (restore.exclude is matched too)
    assert len(globs) <= 2 * 101, len(globs)


async def test_a_glob_of_too_many_separate_globstars_is_refused(root: Path) -> None:
    pattern = "/".join(["**/x"] * 7)
    for name, input in (
        ("find_files", {"pattern": pattern}),
        ("search_text", {"pattern": "a", "glob": pattern}),
    ):
        result = await call(ctx(root), name, **input)
        assert result.is_error and "at most 6 times" in result.text, result.text


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("src/**/test_*.ts", "src/test_a.ts", True),
        ("src/**/test_*.ts", "src/x/y/test_a.ts", True),
        ("src/**/**/test_*.ts", "src/x/test_a.ts", True),
        ("src/**/test_*.ts", "lib/test_a.ts", False),
        ("*.md", "docs/a.md", True),
    ],
)
def test_globs_match_as_before(pattern: str, path: str, hit: bool) -> None:
    from baton.core.tools.find_files import glob_matcher

    assert glob_matcher(pattern)(path) is hit


async def test_the_walks_stop_at_their_deadline(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """find_files had no deadline; search_text checked its own only on the lines of files
    its glob kept, so a slow glob ran on."""
    from baton.core.tools import find_files, search_text

    tree(root)
    monkeypatch.setattr(find_files, "WALK_SECONDS", -1.0)
    monkeypatch.setattr(search_text, "SEARCH_SECONDS", -1.0)
    found = await call(ctx(root), "find_files", pattern="**/*.nothing")
    searched = await call(ctx(root), "search_text", pattern="zzz", glob="*.nothing")
    for result in (found, searched):
        assert result.is_error and "took too long; narrow it" in result.text, result.text


async def test_folders_count_toward_the_walk_bound(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only files were counted: 300 empty folders were walked whole past a bound of 50,
    and the cut never said."""
    from baton.core.tools import walk

    monkeypatch.setattr(walk, "MAX_VISITED", 50)
    for n in range(300):
        (root / f"d{n:03}" / "inner").mkdir(parents=True)
    entered: list[str] = []
    real_walk = walk.os.walk

    def counting(top: Any, *args: Any, **kwargs: Any) -> Any:
        for item in real_walk(top, *args, **kwargs):
            entered.append(item[0])
            yield item

    monkeypatch.setattr(walk.os, "walk", counting)
    for name, input in (
        ("find_files", {"pattern": "*.nothing"}),
        ("search_text", {"pattern": "z"}),
    ):
        result = await call(ctx(root), name, **input)
        assert "stopped before its end" in result.text, result.text
    assert len(entered) <= 2 * 5, len(entered)


async def test_every_result_is_cut_at_read_files_character_bound(root: Path) -> None:
    """find_files and list_dir bound their entries, not their length: 500 paths 3,000
    characters deep answered 1.5 MB, 1,000 names of 200 characters about 200,000."""
    deep = root.joinpath(*(["d" * 200] * 15))
    deep.mkdir(parents=True)
    for n in range(500):
        (deep / f"f{n}.txt").write_text("x\n")
    for n in range(1000):
        (root / f"{n:04}{'n' * 196}").write_text("x\n")
    found = await call(ctx(root), "find_files", pattern="**/f*.txt")
    listed = await call(ctx(root), "list_dir")
    for result in (found, listed):
        assert len(result.text) <= 100_000, len(result.text)
        assert result.text.endswith(
            "over the 100,000 a tool answers; narrow it (a path, a pattern, a line range)]"
        )
    assert "[cut: 1000 of 1002 entries shown]" in listed.text  # list_dir's own note stays
    assert all(line.startswith(("d" * 200, "[")) for line in found.text.splitlines())


@pytest.mark.parametrize(
    ("name", "input"),
    [
        ("str_replace_based_edit_tool", {"command": "x" * 300_000, "path": "a.txt"}),
        ("read_file_" * 30_000, {"path": "a.txt"}),
    ],
)
async def test_an_error_that_quotes_the_input_is_cut_as_a_result_is(
    root: Path, name: str, input: dict[str, Any]
) -> None:
    """Only a result that ran was cut: an error quoting a 300,000-character input (an
    unknown command, a tool's name) answered it whole, and went whole into every later
    request."""
    result = await call(ctx(root), name, **input)
    assert result.is_error and len(result.text) <= 100_000, len(result.text)
    assert result.text.endswith("narrow it (a path, a pattern, a line range)]")


async def test_read_file_says_where_to_read_on_from_the_last_line_it_shows(root: Path) -> None:
    """Lines that filled read_file's 100,000 characters to the brim left its own note past
    the bound: the result was cut again, line 50 went, and the note still said to read on
    at 51, so the model never saw line 50."""
    lines = ["x" * 2000] * 49 + ["y" * 1590] + ["z" * 2000] * 10
    (root / "big.txt").write_text("\n".join(lines) + "\n")
    result = await call(ctx(root), "read_file", path="big.txt")
    *shown, note = result.text.split("\n")
    assert len(result.text) <= 100_000
    last = int(shown[-1].split("\t", 1)[0])
    assert note == f"[cut: lines 1-{last} of 60 shown; read on with startLine={last + 1}]"


async def test_read_file_counts_only_the_long_lines_it_shows_cut(root: Path) -> None:
    """The line past the last one shown was looked at, counted as cut when long, and the
    result said '[1 line(s) longer than 2000 characters were cut]' with none of its lines
    cut; the model reads on from there and finds it whole."""
    (root / "many.txt").write_text("a\n" * 2000 + "x" * 3000 + "\nb\n")
    result = await call(ctx(root), "read_file", path="many.txt")
    assert result.text.endswith(
        "\n  2000\ta\n[cut: lines 1-2000 of 2002 shown; read on with startLine=2001]"
    )
    rest = await call(ctx(root), "read_file", path="many.txt", startLine=2001)
    assert rest.text.endswith(
        "\n  2002\tb\n[1 line(s) longer than 2000 characters were cut; to read on in line "
        "2001, give startLine=2001, endLine=2001, startColumn=2001]"
    )


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/a/b.py", False),
        ("*/x.py", "a/b/x.py", False),
        ("src/**", "src/a/b.py", True),
        ("src/**", "src", False),
        ("a/**/b/**/c", "a/b/c", True),
        ("a/**/b/**/c", "a/x/b/y/z/c", True),
    ],
)
def test_a_star_of_a_glob_stays_inside_one_name(pattern: str, path: str, hit: bool) -> None:
    """`*` matched across folders (fnmatch's does): `src/*.py` found every Python file
    below src, and search_text's glob searched them, where git and a shell find those
    directly in src."""
    from baton.core.tools.find_files import glob_matcher

    assert glob_matcher(pattern)(path) is hit


async def test_a_hit_far_into_a_long_line_is_shown_with_its_match(root: Path) -> None:
    """A long line's hit was cut to its first 300 characters: a match at column 5,000 (a
    minified file) was shown without the text it matched."""
    (root / "min.js").write_text("x" * 5000 + "needle()" + "y" * 5000 + "\n")
    result = await call(ctx(root), "search_text", pattern="needle")
    hit = result.text
    assert hit.startswith("min.js:1: [cut] ") and hit.endswith(" [cut]"), hit[:80]
    assert "needle()" in hit and len(hit) < 400


async def test_a_pattern_holding_a_line_break_is_refused_with_why(root: Path) -> None:
    """Hits are matched a line at a time: a pattern quoting two lines was answered 'No hits'
    for a text the file holds, as if it held none."""
    (root / "m.py").write_text("def a():\n    pass\n")
    result = await call(ctx(root), "search_text", pattern="def a\\(\\):\n    pass")
    assert result.is_error
    assert result.text == (
        "Error: search_text matches one line at a time: a pattern holding a line break never "
        "matches; search for one of its lines"
    ), result.text
    verbose = await call(ctx(root), "search_text", pattern="(?x) def \\s a\n \\(")
    assert verbose.text == "m.py:1: def a():", verbose.text  # a line break there is a space
