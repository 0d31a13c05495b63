"""Imports point one way: each folder imports only the folders below it, and none imports back.

core knows nothing of the LSP, the wire contract or the command line; the contract and its
generator need no LSP stack; between folders there are no cycles.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "server" / "baton"
CORE_FORBIDDEN = (
    "pygls",
    "lsprotocol",
    "acp",
    "baton.acp",
    "baton.lsp",
    "baton.protocol",
    "baton.contract",
    "baton.cli",
)
CONTRACT_FORBIDDEN = ("pygls", "lsprotocol", "baton.lsp", "baton.cli")

# Each unit (a folder, or a module that stands alone at its level) and the units it may
# import. A unit not named here fails the test, so a new folder says where it stands.
ALLOWED: dict[str, set[str]] = {
    "core.errors": set(),
    "core.redaction": set(),
    "core.environment": set(),
    "core.one_line": set(),
    "core.background": set(),
    # hands freed heap memory back (the front ends call it); pauses the cyclic collector
    # for a session's load and an import
    "core.memory": set(),
    "core.models": set(),
    "core.workspace": set(),
    "core.conversation": {"core.errors", "core.memory"},
    "core.settings_lists": set(),
    "core.settings_sections": {"core.conversation", "core.settings_lists"},
    "core.settings": {
        "core.conversation",
        "core.models",
        "core.settings_sections",
        "core.errors",
        "core.environment",
    },
    # a client's values are read onto the settings' own fields
    "core.settings_read": {"core.conversation", "core.settings"},
    # a settings file's keys are checked against the settings' own fields
    "core.settings_file": {"core.conversation", "core.errors", "core.settings"},
    "core.usage": {"core.conversation", "core.models", "core.settings", "core.errors"},
    # an import runs in a daemon thread, which the process's end does not wait for
    "core.importers": {"core.background", "core.conversation", "core.errors", "core.memory"},
    "core.model_api": {
        "core.conversation",
        "core.models",
        "core.usage",
        "core.settings",
        "core.errors",
        "core.redaction",
        "core.background",
        "core.environment",  # the API key as given, without what surrounds it
    },
    "core.compaction": {
        "core.conversation",
        "core.models",
        "core.usage",
        "core.model_api",
        "core.workspace",
        "core.settings",
        "core.errors",
        "core.redaction",  # a hook's stderr, shown to the user
    },
    "core.tools": {
        "core.background",
        "core.conversation",
        "core.compaction",
        "core.workspace",
        "core.settings",
        "core.errors",
    },
    "core.turn": {
        "core.conversation",
        "core.tools",
        "core.usage",
        "core.model_api",
        "core.compaction",
        "core.settings",
        "core.errors",
    },
    "core.service": {
        "core.conversation",
        "core.models",
        "core.usage",
        "core.model_api",
        "core.compaction",
        "core.turn",
        "core.tools",
        "core.importers",
        "core.workspace",
        "core.settings",
        "core.settings_read",
        "core.errors",
        "core.redaction",
        "core.background",
        "core.environment",  # the API timeout a service's model access takes
    },
    "contract": {"core"},
    "lsp": {"core", "contract"},
    "acp": {"core", "contract"},  # the ACP front end, beside lsp/: never imported by core
    "cli": {"core", "contract", "lsp", "acp"},
    "baton.__main__": {"cli"},
}
LAYERS = (
    "core.conversation",
    "core.usage",
    "core.model_api",
    "core.compaction",
    "core.tools",
    "core.turn",
    "core.importers",
    "core.service",
    "core.workspace",
    "core.models",
)


def unit_of(module: str) -> str | None:
    """The unit a dotted module of Baton belongs to (None for the package root itself)."""
    parts = module.split(".")[1:]
    if not parts:
        return None
    if parts[0] == "protocol":
        return "contract"  # the table lives at baton/protocol.py; the contract is one unit
    if parts[0] == "core":
        if len(parts) == 1:
            return None
        return f"core.{parts[1]}"
    if parts[0] in {"lsp", "acp", "contract", "cli"}:
        return parts[0]
    if not (SERVER / f"{parts[0]}.py").exists():
        return None  # an attribute of the package root, such as __version__
    return f"baton.{parts[0]}"


def module_name(path: Path) -> str:
    parts = path.relative_to(SERVER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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


def sources() -> Iterator[Path]:
    for path in sorted(SERVER.rglob("*.py")):
        if "examples" not in path.relative_to(SERVER).parts:
            yield path


def unit_edges() -> dict[str, set[str]]:
    """unit -> the units its modules import (within Baton, itself left out)."""
    edges: dict[str, set[str]] = {}
    for path in sources():
        name = module_name(path)
        source_unit = unit_of(name)
        if source_unit is None:
            continue
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        targets = edges.setdefault(source_unit, set())
        for imported_name in imported(path.read_text(encoding="utf-8"), package):
            if not imported_name.startswith("baton."):
                continue
            target = unit_of(imported_name)
            if target is not None and target != source_unit and known(imported_name):
                targets.add(target)
    return edges


def known(dotted: str) -> bool:
    """Whether `dotted` (or the module it names a member of) is one of Baton's modules."""
    parts = dotted.split(".")
    while parts:
        base = SERVER.parent.joinpath(*parts)
        if base.with_suffix(".py").exists() or base.is_dir():
            return True
        parts.pop()
    return False


def allowed(source_unit: str, target: str) -> bool:
    return any(target == a or target.startswith(f"{a}.") for a in ALLOWED[source_unit])


@pytest.mark.parametrize("path", sorted((SERVER / "core").rglob("*.py")), ids=str)
def test_core_imports_nothing_of_the_lsp_or_the_wire(path: Path) -> None:
    assert breaks(path, CORE_FORBIDDEN) == []


@pytest.mark.parametrize(
    "path",
    [SERVER / "protocol.py", *sorted((SERVER / "contract").rglob("*.py"))],
    ids=str,
)
def test_the_contract_and_its_generator_need_no_lsp_stack(path: Path) -> None:
    assert breaks(path, CONTRACT_FORBIDDEN) == []


def test_every_folder_imports_only_the_folders_it_may() -> None:
    edges = unit_edges()
    unnamed = sorted(set(edges) - set(ALLOWED))
    assert unnamed == [], f"units with no entry in ALLOWED: {unnamed}"
    wrong = sorted(
        f"{source_unit} -> {target}"
        for source_unit, targets in edges.items()
        for target in targets
        if not allowed(source_unit, target)
    )
    assert wrong == []


def test_no_cycles_between_folders() -> None:
    edges = unit_edges()
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(unit: str, trail: list[str]) -> bool:
        state[unit] = 1
        for target in sorted(edges.get(unit, ())):
            if state.get(target) == 1:
                cycle.extend([*trail, unit, target])
                return True
            if state.get(target) is None and visit(target, [*trail, unit]):
                return True
        state[unit] = 2
        return False

    for unit in sorted(edges):
        if state.get(unit) is None and visit(unit, []):
            break
    assert cycle == []


def test_every_core_folder_is_a_known_layer() -> None:
    folders = {
        f"core.{p.name}" for p in (SERVER / "core").iterdir() if (p / "__init__.py").exists()
    }
    assert folders == set(LAYERS)


def test_the_check_sees_a_forbidden_import() -> None:
    lines = ["from baton.lsp.dispatch.errors import guarded", "import pygls.server"]
    source = "\n".join([*lines, "from .. import protocol", ""])
    assert breaks(SERVER / "core" / "probe.py", CORE_FORBIDDEN, source) == [
        "baton.lsp.dispatch.errors",
        "baton.lsp.dispatch.errors.guarded",
        "baton.protocol",
        "pygls.server",
    ]


def test_the_check_sees_a_cycle_and_an_upward_import() -> None:
    assert unit_of("baton.core.conversation.session") == "core.conversation"
    assert unit_of("baton.protocol") == "contract"
    assert not allowed("core.conversation", "core.usage")
    assert allowed("lsp", "core.usage")
