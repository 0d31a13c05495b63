"""`baton import FILE`: a Claude Code session file becomes a Baton session in the data dir."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from baton.cli.common import EXIT_OK, Subparsers, add_data_dir, existing_file, settings_for

if TYPE_CHECKING:
    from baton.core.conversation.listing import Summary
    from baton.core.conversation.session import Session
    from baton.core.conversation.store import SessionStore


def imports_of(path: Path, store: SessionStore) -> list[Session | Summary]:
    """The live sessions of `store` imported from `path` (not compacted copies of it)."""
    from baton.core.conversation.files import path_text

    target = path_text(path.resolve())  # as the import wrote it
    return [
        s
        for s in store.list()
        if s.imported_from
        and path_text(Path(s.imported_from).resolve()) == target
        and not (s.header or {}).get("compactedFrom")
    ]


def cmd_import(args: argparse.Namespace) -> int:
    from baton.core.conversation.store import SessionStore
    from baton.core.importers.claude_code import import_with_report
    from baton.core.usage.estimator import default_estimator
    from baton.core.usage.session_usage import compute_usage

    path = existing_file(args.file)
    settings = settings_for(args)
    estimator = default_estimator()
    store = SessionStore(settings.resolved_data_dir(), estimator.count_message)
    try:
        earlier = imports_of(path, store)
        if earlier and not args.again:
            names = ", ".join(f"{s.session_id} ({s.title!r})" for s in earlier)
            print(f"Already imported {path} as session {names}; nothing changed")
            print("(--again imports another copy)")
            return EXIT_OK
        session, report = import_with_report(path.resolve(), store, title=args.title)
        usage = compute_usage(session, settings, estimator)
        print(f"Imported {path} as session {session.session_id} ({session.title!r})")
        if earlier:
            names = ", ".join(s.session_id for s in earlier)
            print(f"Note       another copy: this file was imported before as {names}")
        print(f"Messages   {len(session.view)} in the view, {len(session.messages)} in all")
        print(
            f"Usage      {usage.used_tokens:,} of {usage.context_window:,} tokens "
            f"({usage.percent_used:.1f}% used, {usage.percent_left}% left, {usage.state})"
        )
        print(f"Transcript {session.transcript.path}")
        for note in report.notes():
            print(f"Note       {note}")
    finally:
        store.close()
    return EXIT_OK


def add_import(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("import", help="turn a Claude Code session into a Baton one")
    parser.add_argument("file", help="a Claude Code session file (.jsonl or .json)")
    parser.add_argument("--title", help="the new session's title")
    parser.add_argument(
        "--again", action="store_true", help="import it even if it was imported before"
    )
    add_data_dir(parser)
    parser.set_defaults(func=cmd_import)
