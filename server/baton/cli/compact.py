"""`baton compact FILE`: compact a copy of a session file, report it, optionally keep it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from baton.cli.common import (
    EXIT_OK,
    Subparsers,
    add_data_dir,
    add_settings_file,
    data_dir_to_write,
    existing_file,
    settings_for,
    utf8_argument,
)
from baton.core.errors import InvalidParams


def cmd_compact(args: argparse.Namespace) -> int:
    from baton.core.compaction.plan import ALL_KEPT
    from baton.core.errors import NothingToCompact

    try:
        return _compact(args)
    except NothingToCompact as exc:
        if exc.message != ALL_KEPT:
            raise
        raise NothingToCompact(
            f"{ALL_KEPT}: --up-to ID summarizes up to a message `baton show` names, or a "
            "smaller keepWindow in --settings keeps less"
        ) from None


def _compact(args: argparse.Namespace) -> int:
    from baton.cli.compact_report import compact_file, compact_request

    utf8_argument(args.instructions, "--instructions")
    if args.instructions is not None and not args.instructions.strip():
        raise InvalidParams(
            "--instructions is empty: give the instructions for the summary, or leave "
            "--instructions out for a summary without them"
        )
    settings = settings_for(args)  # a bad settings file: one line, before any work
    request = compact_request(
        up_to=args.up_to,
        from_id=args.from_id,
        span=args.range,
        dry_run=args.dry_run,
        instructions=args.instructions,
    )
    if args.summary_out is not None and not args.preview:
        raise InvalidParams("--summary-out goes with --preview")
    if args.summary_file is not None and not args.apply_draft:
        raise InvalidParams("--summary-file goes with --apply-draft")
    if args.preview or args.apply_draft or args.discard_draft:
        from baton.cli.compact_draft import cmd_draft

        return cmd_draft(args, request, settings)
    workspace = Path(args.workspace).expanduser() if args.workspace else None
    compact_file(
        existing_file(args.file, settings.resolved_data_dir()),
        request,
        as_json=args.json,
        out=sys.stdout,
        err=sys.stderr,
        workspace=workspace,
        settings=settings,
        save_in=data_dir_to_write(settings) if args.save else None,
    )
    return EXIT_OK


def add_compact(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "compact",
        help="compact a temporary copy of a session file with the offline summarizer and "
        "report it (the file itself is never changed; --save keeps the copy)",
        description="Compact a temporary copy of FILE with the offline summarizer and report "
        "what was summarized, kept and restored. FILE itself is never changed; --save keeps "
        "the compacted copy as a new Baton session in the data dir. Message ids are the "
        "ones `baton show FILE` prints, whole or shortened.",
    )
    parser.add_argument("file", help="a Claude Code session file or a Baton transcript")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--all", action="store_true", help="the whole conversation (default)")
    where.add_argument("--up-to", metavar="ID", help="summarize up to and including message ID")
    where.add_argument("--from", dest="from_id", metavar="ID", help="summarize from message ID")
    where.add_argument("--range", nargs=2, metavar=("ID", "END_ID"), help="summarize a span")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="measure only: the summary is written offline to size the context after it, "
        "and nothing is kept",
    )
    parser.add_argument("--instructions", help="custom instructions for the summary")
    parser.add_argument("--workspace", help="a project folder: its compact instructions apply")
    parser.add_argument("--json", action="store_true", help="print the CompactResult wire object")
    parser.add_argument(
        "--save",
        action="store_true",
        help="keep the compacted copy as a new Baton session in the data dir; print its id",
    )
    drafts = parser.add_argument_group(
        "drafts", "a compaction of a data-dir session (FILE: its id or transcript), seen first"
    )
    draft = drafts.add_mutually_exclusive_group()
    draft.add_argument(
        "--preview",
        action="store_true",
        help="write and measure the compaction without committing it; print the draft",
    )
    draft.add_argument("--apply-draft", metavar="ID", help="commit the session's draft ID")
    draft.add_argument("--discard-draft", metavar="ID", help="drop the session's draft ID")
    drafts.add_argument(
        "--summary-file", metavar="F", help="with --apply-draft: the summary as edited, in F"
    )
    drafts.add_argument("--summary-out", metavar="F", help="with --preview: write the summary to F")
    add_settings_file(parser)
    add_data_dir(parser)
    parser.set_defaults(func=cmd_compact)
