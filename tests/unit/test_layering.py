"""Imports point one way: core knows nothing of the LSP, the wire contract or the server."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "server" / "baton"
CORE_FORBIDDEN = ("pygls", "lsprotocol", "baton.lsp", "baton.protocol", "baton.payloads")
CONTRACT_FORBIDDEN = ("pygls", "lsprotocol", "baton.lsp")


def imported(source: str, package: str) -> set[str]:
    """Every module `source` imports, relative imports resolved against `package`."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def breaks(path: Path, forbidden: tuple[str, ...], source: str | None = None) -> list[str]:
    package = ".".join(path.relative_to(SERVER.parent).with_suffix("").parts[:-1])
    text = path.read_text(encoding="utf-8") if source is None else source
    return sorted(
        name
        for name in imported(text, package)
        if any(name == f or name.startswith(f"{f}.") for f in forbidden)
    )


@pytest.mark.parametrize("path", sorted((SERVER / "core").rglob("*.py")), ids=str)
def test_core_imports_nothing_of_the_lsp_or_the_wire(path: Path) -> None:
    assert breaks(path, CORE_FORBIDDEN) == []


@pytest.mark.parametrize(
    "path",
    [
        SERVER / "protocol.py",
        SERVER / "protocol_names.py",
        SERVER / "payloads.py",
        *sorted((SERVER / "contract").glob("*.py")),
    ],
    ids=str,
)
def test_the_contract_and_its_generator_need_no_lsp_stack(path: Path) -> None:
    assert breaks(path, CONTRACT_FORBIDDEN) == []


def test_the_check_sees_a_forbidden_import() -> None:
    source = "from baton.lsp.errors import guarded\nimport pygls.server\nfrom .. import protocol\n"
    assert breaks(SERVER / "core" / "probe.py", CORE_FORBIDDEN, source) == [
        "baton.lsp.errors",
        "baton.lsp.errors.guarded",
        "baton.protocol",
        "pygls.server",
    ]
