"""Baton's Python package: `python -m build` makes a wheel and an sdist with its metadata and
the `baton` entry point, the wheel carries Baton alone (no test kit), and its version is the
VS Code extension's."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from baton import __version__

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    # the sdist, then the wheel from it (what an installer given the sdist does); offline:
    # the build backend is this environment's setuptools
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def test_the_wheel_holds_baton_and_no_test_code(built: dict[str, Path]) -> None:
    assert built["wheel"].name == f"baton_lsp-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(built["wheel"]) as archive:
        names = archive.namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"baton", f"baton_lsp-{__version__}.dist-info"}
    assert not [n for n in names if "testkit" in n or "/tests/" in n or "conftest" in n]
    for needed in ("baton/cli/main.py", "baton/py.typed", "baton/examples/session.jsonl"):
        assert needed in names


def test_the_wheel_carries_its_metadata_and_the_baton_command(built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as archive:
        check_metadata(archive)


def check_metadata(archive: zipfile.ZipFile) -> None:
    info = f"baton_lsp-{__version__}.dist-info"
    metadata = Parser().parsestr(archive.read(f"{info}/METADATA").decode())
    assert metadata["Name"] == "baton-lsp"
    assert metadata["Version"] == __version__
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Requires-Python"] == ">=3.11"
    assert f"{info}/licenses/LICENSE" in archive.namelist()
    classifiers = metadata.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers
    entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert "[console_scripts]\nbaton = baton.cli.main:main" in entry_points


def test_the_sdist_builds_the_same_package(built: dict[str, Path]) -> None:
    assert built["sdist"].name == f"baton_lsp-{__version__}.tar.gz"
    with tarfile.open(built["sdist"]) as archive:
        names = archive.getnames()
    prefix = f"baton_lsp-{__version__}/"
    for needed in ("pyproject.toml", "LICENSE", "README.md", "server/baton/__init__.py"):
        assert prefix + needed in names


def test_baton_version_is_the_extensions() -> None:
    manifest = json.loads((ROOT / "client-vscode/package.json").read_text(encoding="utf-8"))
    assert manifest["version"] == __version__
    shown = subprocess.run(
        [sys.executable, "-m", "baton", "--version"], capture_output=True, text=True, check=True
    )
    assert shown.stdout.strip() == f"baton {__version__}"
