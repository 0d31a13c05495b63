"""`python -m baton.contract [--check]`: write the generated contract files, or check them.

Writes docs/protocol.schema.json, client-vscode/src/protocol.ts, the settings block of
client-vscode/package.json and the shape listing of docs/PROTOCOL.md from protocol.py.
`--check` writes nothing and exits 1 when a file differs from what it would write.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from baton.contract.generate import schema, settings_block, shapes, typescript

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = Path("docs/protocol.schema.json")
TYPESCRIPT = Path("client-vscode/src/protocol.ts")
MANIFEST = Path("client-vscode/package.json")
PROTOCOL_DOC = Path("docs/PROTOCOL.md")


def outputs(root: Path = ROOT) -> dict[Path, str]:
    """Each generated file (relative to `root`) and the text it should hold."""
    document = schema.build()

    def current(path: Path) -> str | None:
        full = root / path
        return full.read_text(encoding="utf-8") if full.exists() else None

    doc = current(PROTOCOL_DOC)
    if doc is None:
        raise FileNotFoundError(f"{root / PROTOCOL_DOC} is missing")
    builders: dict[Path, Callable[[], str]] = {
        SCHEMA: lambda: json.dumps(document, indent=2, ensure_ascii=False) + "\n",
        TYPESCRIPT: lambda: typescript.render(document),
        MANIFEST: lambda: settings_block.merged_manifest(current(MANIFEST)),
        PROTOCOL_DOC: lambda: shapes.replaced(doc, document),
    }
    return {path: build() for path, build in builders.items()}


def stale(root: Path = ROOT) -> list[Path]:
    """The generated files whose text differs from what the generator writes."""
    found = []
    for path, text in outputs(root).items():
        full = root / path
        if not full.exists() or full.read_text(encoding="utf-8") != text:
            found.append(path)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m baton.contract", description=__doc__)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository's root")
    args = parser.parse_args(argv)
    if args.check:
        differing = stale(args.root)
        for path in differing:
            print(f"stale: {path} (run python -m baton.contract)", file=sys.stderr)
        return 1 if differing else 0
    for path, text in outputs(args.root).items():
        full = args.root / path
        if not full.exists() or full.read_text(encoding="utf-8") != text:
            full.parent.mkdir(parents=True, exist_ok=True)
            full.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
