"""`baton import FILE`: a Claude Code session file becomes a Baton session in the data dir."""

from __future__ import annotations

import argparse

from baton.cli.common import EXIT_OK, Subparsers, add_data_dir, existing_file, settings_for


def cmd_import(args: argparse.Namespace) -> int:
    from baton.core.conversation.store import SessionStore
    from baton.core.importers.claude_code import (
        another_copy,
        changed_since,
        import_with_report,
        imports_of,
    )
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
            changed = changed_since(path, earlier)
            if changed is None:
                print(f"Already imported {path} as session {names}; nothing changed")
                print("(--again imports another copy)")
            else:  # Claude Code went on with the session: the import is not the file now
                print(f"Already imported {path} as session {names}")
                print(f"Note       {changed}; --again imports it as it is now")
            return EXIT_OK
        session, report = import_with_report(path.resolve(), store, title=args.title)
        usage = compute_usage(session, settings, estimator)
        print(f"Imported {path} as session {session.session_id} ({session.title!r})")
        if earlier:
            print(f"Note       {another_copy(earlier)}")
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
