"""A module of bench/ (a folder of scripts, not a package) loaded from its file, for tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench_module(name: str) -> ModuleType:
    """bench/<name>.py as a module of its own (`bench_<name>`), loaded once per process."""
    module_name = f"bench_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses read their module's namespace
    spec.loader.exec_module(module)
    return module
