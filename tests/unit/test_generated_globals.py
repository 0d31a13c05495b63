"""lsprotocol's attrs-generated methods keep only the globals they read, and work as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

# A child process (the trim changes lsprotocol's classes for the whole process), as it is
# ("plain"), trimmed first ("trim"), after the server's load ("load"; "load-untrimmed" with
# the trim left out: what the load imports evaluates some hints first): `get_type_hints`
# of every class's `__init__`, then lsprotocol objects made, shown, compared, checked and
# converted, and the largest of the classes' copies of the globals before and after.
CHILD = textwrap.dedent(
    """
    import json, sys, typing
    import lsprotocol.types as t
    from lsprotocol.converters import get_converter
    from baton.lsp.transport import generated_globals

    MESSAGES = [
        (t.InitializeParams, {
            "processId": 7, "rootUri": None, "locale": "en",
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "textDocument": {
                    "publishDiagnostics": {
                        "versionSupport": True, "tagSupport": {"valueSet": [1, 2]},
                    },
                    "completion": {"completionItem": {"snippetSupport": True}},
                },
                "window": {"workDoneProgress": True},
                "workspace": {"workspaceEdit": {"documentChanges": True}},
            },
            "clientInfo": {"name": "editor", "version": "1"},
            "initializationOptions": {"autoCompact": {"enabled": False}},
        }),
        (t.PublishDiagnosticsParams, {
            "uri": "baton://session/a", "version": 3,
            "diagnostics": [{
                "range": {"start": {"line": 0, "character": 1}, "end": {"line": 2, "character": 0}},
                "severity": 2, "code": "baton.usage", "source": "baton", "message": "ctx 3%",
                "tags": [1], "data": {"k": [1, 2]},
            }],
        }),
        (t.CodeAction, {
            "title": "Compact", "kind": "refactor.rewrite", "isPreferred": True,
            "command": {"title": "Compact", "command": "baton.compact", "arguments": [{"a": 1}]},
            "edit": {"documentChanges": [{
                "textDocument": {"uri": "file:///a.py", "version": 2},
                "edits": [{"range": {"start": {"line": 1, "character": 0},
                                     "end": {"line": 1, "character": 4}}, "newText": "x"}],
            }]},
        }),
        (t.WorkDoneProgressBegin, {"kind": "begin", "title": "Baton", "percentage": 5}),
        (t.Hover, {"contents": {"kind": "markdown", "value": "**x**"}}),
    ]
    BAD = [
        lambda: t.Position(line=-1, character=0),
        lambda: t.WorkDoneProgressBegin(title=3),
        lambda: t.ProgressNotification(params=None, method="$/other"),
    ]

    def hints():
        out = {}
        for name, cls in sorted(vars(t).items()):
            if isinstance(cls, type) and hasattr(cls, "__attrs_attrs__"):
                try:
                    out[name] = repr(typing.get_type_hints(cls.__init__))
                except Exception as exc:
                    out[name] = f"{type(exc).__name__}: {exc}"
        return out

    def behaviour():
        converter = get_converter()
        out = []
        for cls, raw in MESSAGES:
            made = converter.structure(raw, cls)
            again = converter.structure(raw, cls)
            out.append([repr(made), converter.unstructure(made), made == again, made != again])
        out.append(t.Position(line=1, character=2) == t.Position(line=1, character=3))
        for bad in BAD:
            try:
                bad()
                out.append("made")
            except Exception as exc:
                out.append(f"{type(exc).__name__}: {exc}")
        return out

    def largest_copy():
        copies = [
            len(f.__globals__)
            for cls in vars(t).values()
            if isinstance(cls, type) and hasattr(cls, "__attrs_attrs__")
            for f in vars(cls).values()
            if type(f).__name__ == "function" and f.__globals__ is not vars(t)
        ]
        return max(copies)

    largest = largest_copy()
    trimmed = None
    if sys.argv[1] == "trim":
        trimmed = generated_globals.trim()
    elif sys.argv[1].startswith("load"):
        from baton.lsp.server import create_server
        if sys.argv[1] == "load-untrimmed":
            generated_globals.trim = lambda: 0
        create_server().load()
    out = {"hints": hints(), "behaviour": behaviour(), "trimmed": trimmed}
    print(json.dumps({**out, "before": largest, "after": largest_copy()}, default=repr))
    """
)


def run(mode: str, data_dir: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode],
        capture_output=True,
        text=True,
        env={**os.environ, "BATON_DATA_DIR": str(data_dir)},
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_generated_methods_keep_only_what_they_read_and_answer_as_before(tmp_path: Path) -> None:
    plain, trimmed = run("plain", tmp_path), run("trim", tmp_path)
    assert trimmed["trimmed"] > 500  # one copy per generated class
    assert plain["after"] > 500  # the module's whole namespace, copied
    assert trimmed["after"] < 120
    assert trimmed["behaviour"] == plain["behaviour"]
    assert trimmed["hints"] == plain["hints"]
    refused = plain["behaviour"][-3:]
    assert all(isinstance(outcome, str) and outcome != "made" for outcome in refused)


def test_the_server_trims_them_as_it_loads(tmp_path: Path) -> None:
    untrimmed, loaded = run("load-untrimmed", tmp_path), run("load", tmp_path)
    assert untrimmed["after"] > 500
    assert loaded["before"] > 500
    assert loaded["after"] < 120
    assert loaded["behaviour"] == untrimmed["behaviour"]
    assert loaded["hints"] == untrimmed["hints"]
