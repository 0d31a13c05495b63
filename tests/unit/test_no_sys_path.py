"""Nothing in the repository reaches a module by changing `sys.path`: the tests, bench/,
scripts/ and the VS Code protocol test import `baton` and `baton_testkit`, both installed by
`pip install -e '.[dev]'` (bench/'s own modules import each other as the scripts they are)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIPPED = {"node_modules", "out", "dist", "build", "__pycache__"}


def python_files(folder: Path = ROOT) -> Iterator[Path]:
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.name in SKIPPED:
            continue  # .venv, .git and the caches, the client's dependencies and builds
        if entry.is_dir():
            yield from python_files(entry)
        elif entry.suffix == ".py":
            yield entry


def path_changes(source: str) -> list[int]:
    """The lines that change `sys.path` (a call on it, or an assignment to it)."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            target = next((t for t in targets if _is_sys_path(t)), None)
        if target is not None and _is_sys_path(target):
            lines.append(node.lineno)
    return sorted(lines)


def _is_sys_path(node: ast.expr) -> bool:
    if isinstance(node, ast.Subscript):
        node = node.value
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def test_no_python_file_in_the_repository_changes_sys_path() -> None:
    files = list(python_files())
    assert any(f.parts[-2:] == ("bench", "sessions.py") for f in files)  # the walk sees them
    found = {
        str(f.relative_to(ROOT)): lines
        for f in files
        if "sys.path" in (text := f.read_text(encoding="utf-8")) and (lines := path_changes(text))
    }
    assert found == {}


def test_each_way_of_changing_sys_path_is_found() -> None:
    source = (
        "import sys\n"
        "sys.path.insert(0, 'x')\n"
        "sys.path.append('y')\n"
        "sys.path[:0] = ['z']\n"
        "sys.path += ['w']\n"
        "print(sys.path)\n"
    )
    assert path_changes(source) == [2, 3, 4, 5]
