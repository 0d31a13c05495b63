"""What a glob of find_files and search_text matches: braces too (`*.{ts,tsx}`), the form
models write most, bounded like the rest of a glob."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_calls import call, ctx


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name in ("src/a.ts", "src/b.tsx", "src/c.js", "test/d.ts", "e.ts"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x\n")
    return tmp_path


async def test_a_glob_with_braces_matches_each_alternative(root: Path) -> None:
    """`**/*.{ts,tsx}` answered 'No files match': the braces were taken as characters."""
    found = await call(ctx(root), "find_files", pattern="**/*.{ts,tsx}")
    assert found.text.splitlines() == ["e.ts", "src/a.ts", "src/b.tsx", "test/d.ts"], found.text
    named = await call(ctx(root), "find_files", pattern="{src,test}/*.ts")
    assert named.text.splitlines() == ["src/a.ts", "test/d.ts"], named.text
    hits = await call(ctx(root), "search_text", pattern="x", glob="*.{js,tsx}")
    assert hits.text.splitlines() == ["src/b.tsx:1: x", "src/c.js:1: x"], hits.text


async def test_braces_without_a_comma_and_unclosed_ones_are_characters(root: Path) -> None:
    (root / "{x}.ts").write_text("x\n")
    (root / "{y.ts").write_text("x\n")
    assert (await call(ctx(root), "find_files", pattern="{x}.ts")).text == "{x}.ts"
    assert (await call(ctx(root), "find_files", pattern="{y.ts")).text == "{y.ts"


async def test_a_glob_whose_braces_expand_too_far_is_refused(root: Path) -> None:
    pattern = "{a,b,c,d}" * 6 + ".ts"  # 4,096 alternatives
    result = await call(ctx(root), "find_files", pattern=pattern)
    assert result.is_error
    assert result.text == "Error: a glob's braces may expand to at most 100 alternatives"


async def test_braces_inside_an_unclosed_one_still_expand(root: Path) -> None:
    (root / "{ya.ts").write_text("x\n")
    assert (await call(ctx(root), "find_files", pattern="{y{a,b}.ts")).text == "{ya.ts"


async def test_search_texts_glob_may_be_written_from_its_path(root: Path) -> None:
    """With `path` src, the glob `sub/*.ts` (relative to the folder searched, as ripgrep
    takes it) matched nothing: only `src/sub/*.ts` reached src/sub/f.ts."""
    (root / "src" / "sub").mkdir()
    (root / "src" / "sub" / "f.ts").write_text("x\n")
    hits = await call(ctx(root), "search_text", pattern="x", path="src", glob="sub/*.ts")
    assert hits.text == "src/sub/f.ts:1: x", hits.text
    whole = await call(ctx(root), "search_text", pattern="x", path="src", glob="src/sub/*.ts")
    assert whole.text == "src/sub/f.ts:1: x", whole.text


async def test_a_glob_ending_in_a_slash_matches_what_the_folder_holds(root: Path) -> None:
    """`src/` answered 'No files match src/.': the empty name after the slash matched no
    file, where .gitignore's `src/` is the folder and all it holds."""
    found = await call(ctx(root), "find_files", pattern="src/")
    assert found.text.splitlines() == ["src/a.ts", "src/b.tsx", "src/c.js"], found.text


async def test_a_glob_given_as_a_path_says_where_a_glob_goes(root: Path) -> None:
    """read_file and search_text's path took `src/*.ts` for a name and answered only
    "'src/*.ts' does not exist"."""
    read = await call(ctx(root), "read_file", path="src/*.ts")
    assert read.text == (
        "Error: src/*.ts does not exist (it is a glob: find_files lists the files it matches)"
    ), read.text
    searched = await call(ctx(root), "search_text", pattern="x", path="src/**/*.ts")
    assert searched.text == (
        "Error: 'src/**/*.ts' does not exist (path names a file or folder: give a glob as glob)"
    ), searched.text
    listed = await call(ctx(root), "list_dir", path="s*")
    assert listed.text.endswith("(it is a glob: find_files lists the files it matches)")
