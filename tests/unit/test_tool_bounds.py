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
