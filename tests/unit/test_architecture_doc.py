"""docs/ARCHITECTURE.md names every module of the server, so a newcomer finds each one there."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server" / "baton"
DOC = ROOT / "docs" / "ARCHITECTURE.md"


def modules() -> list[Path]:
    return sorted(
        path.relative_to(SERVER)
        for path in SERVER.rglob("*.py")
        if path.name != "__init__.py" and "examples" not in path.relative_to(SERVER).parts
    )


def mentions(text: str) -> set[str]:
    """Every name the doc writes in backticks (a path, a module, a folder)."""
    return {token.strip() for token in re.findall(r"`([^`\n]+)`", text)}


def accepted_names(module: Path, unique: bool) -> set[str]:
    """How the doc may name `module`: its path from server/baton, or a shorter tail of it
    (just the file name where no other module has that name)."""
    parts = module.parts
    shortest = 1 if unique else 2
    return {"/".join(parts[i:]) for i in range(len(parts)) if len(parts) - i >= shortest} | {
        module.as_posix()
    }


def missing(doc_text: str) -> list[str]:
    named = mentions(doc_text)
    counts = Counter(module.name for module in modules())
    return [
        module.as_posix()
        for module in modules()
        if not accepted_names(module, counts[module.name] == 1) & named
    ]


def test_architecture_names_every_module() -> None:
    assert missing(DOC.read_text(encoding="utf-8")) == []


def test_the_check_sees_a_module_left_out() -> None:
    text = DOC.read_text(encoding="utf-8").replace("`upkeep.py`", "upkeep")
    assert missing(text) == ["core/service/upkeep.py"]


def test_a_shared_file_name_needs_its_folder() -> None:
    assert accepted_names(Path("lsp/dispatch/errors.py"), unique=False) == {
        "dispatch/errors.py",
        "lsp/dispatch/errors.py",
    }
