"""The `baton` command line: one small function per subcommand, errors as one stderr line."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from baton import __version__
from baton.core.budget import compute_usage
from baton.core.claude_code import import_with_report
from baton.core.errors import BatonError, InvalidParams
from baton.core.session import TokenCounter
from baton.core.settings import Settings
from baton.core.store import SessionStore
from baton.core.tokens import default_estimator
from baton.report import plain_text, usage_report
from baton.session_files import LoadedFile, session_from_file

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"
EXAMPLE_SESSION = EXAMPLES_DIR / "session.jsonl"
EXIT_OK, EXIT_ERROR = 0, 2

Subparsers = Any  # argparse's _SubParsersAction is private


def existing_file(name: str) -> Path:
    path = Path(name).expanduser()
    if not path.is_file():
        raise InvalidParams(f"no such file: {name}")
    return path


@contextmanager
def open_session_file(path: Path, count: TokenCounter) -> Iterator[LoadedFile]:
    """A session read from a Baton transcript (read-only) or imported from a Claude Code
    file into a temporary data directory that is deleted afterwards."""
    with tempfile.TemporaryDirectory(prefix="baton-") as scratch:
        store = SessionStore(Path(scratch), count)
        try:
            with session_from_file(path, store, writable=False) as loaded:
                yield loaded
        finally:
            store.close()


# ---- subcommands ---------------------------------------------------------------------------


def cmd_usage(args: argparse.Namespace) -> int:
    path = existing_file(args.file) if args.file else EXAMPLE_SESSION
    estimator = default_estimator()
    settings = Settings()
    with open_session_file(path, estimator.count_message) as loaded:
        session = loaded.session
        if args.model:
            session.model = args.model  # in memory only; the file is never changed
        usage = compute_usage(session, settings, estimator)
        if args.json:
            print(json.dumps(usage.wire(), indent=2))
            return EXIT_OK
        messages = session.view_messages()
        anchor = session.anchor()
        what = "Baton transcript" if loaded.kind == "baton" else "Claude Code session file"
        print(
            usage_report(
                title=session.title,
                source=f"{path} ({what})",
                messages=messages,
                usage=usage,
                plain_tokens=estimator.count_text(plain_text(messages)),
                imported=loaded.imported,
                anchored_on=f"message {messages[anchor[0]].id}" if anchor else None,
                estimate_only=estimator.calibrated(sum(m.tokens for m in messages)),
            )
        )
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    path = existing_file(args.file)
    settings = Settings()
    estimator = default_estimator()
    store = SessionStore(settings.resolved_data_dir(), estimator.count_message)
    try:
        session, report = import_with_report(path, store, title=args.title)
        usage = compute_usage(session, settings, estimator)
        print(f"Imported {path} as session {session.session_id} ({session.title!r})")
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


def cmd_compact(args: argparse.Namespace) -> int:
    from baton.compact_report import compact_file, compact_request

    request = compact_request(
        up_to=args.up_to,
        from_id=args.from_id,
        span=args.range,
        dry_run=args.dry_run,
        instructions=args.instructions,
    )
    workspace = Path(args.workspace).expanduser() if args.workspace else None
    compact_file(
        existing_file(args.file),
        request,
        as_json=args.json,
        out=sys.stdout,
        err=sys.stderr,
        workspace=workspace,
    )
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from baton.lsp.server import parse_address, serve

    for address in (args.tcp, args.ws):
        if address is not None:
            try:
                parse_address(address)
            except ValueError as exc:
                raise InvalidParams(str(exc)) from None
    return serve(tcp=args.tcp, ws=args.ws, log_level=args.log_level)


def cmd_demo(args: argparse.Namespace) -> int:
    from baton.demo import main as demo

    return demo(sys.stdout)


# ---- the parser ----------------------------------------------------------------------------


def add_usage(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "usage", help="context usage of a Claude Code session file or a Baton transcript"
    )
    parser.add_argument("file", nargs="?", help="the file (default: the bundled example)")
    parser.add_argument("--model", help="count against this model's window")
    parser.add_argument("--json", action="store_true", help="print the Usage wire object")
    parser.set_defaults(func=cmd_usage)


def add_import(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("import", help="turn a Claude Code session into a Baton one")
    parser.add_argument("file", help="a Claude Code session file (.jsonl or .json)")
    parser.add_argument("--title", help="the new session's title")
    parser.set_defaults(func=cmd_import)


def add_compact(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "compact",
        help="compact a temporary copy of a session file with the offline summarizer; report it",
    )
    parser.add_argument("file", help="a Claude Code session file or a Baton transcript")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--all", action="store_true", help="the whole conversation (default)")
    where.add_argument("--up-to", metavar="ID", help="summarize up to and including message ID")
    where.add_argument("--from", dest="from_id", metavar="ID", help="summarize from message ID")
    where.add_argument("--range", nargs=2, metavar=("ID", "END_ID"), help="summarize a span")
    parser.add_argument("--dry-run", action="store_true", help="plan only; summarize nothing")
    parser.add_argument("--instructions", help="custom instructions for the summary")
    parser.add_argument("--workspace", help="a project folder: its compact instructions apply")
    parser.add_argument("--json", action="store_true", help="print the CompactResult wire object")
    parser.set_defaults(func=cmd_compact)


def add_serve(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="run the language server (stdio unless --tcp or --ws is given)"
    )
    network = parser.add_mutually_exclusive_group()
    network.add_argument(
        "--tcp", metavar="HOST:PORT", help="listen on TCP (a bare PORT binds 127.0.0.1)"
    )
    network.add_argument(
        "--ws", metavar="HOST:PORT", help="listen on a WebSocket (a bare PORT binds 127.0.0.1)"
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level (default INFO)",
    )
    parser.set_defaults(func=cmd_serve)


def add_demo(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="start the server and drive it like an editor: usage, code actions, compact, undo",
    )
    parser.set_defaults(func=cmd_demo)


COMMANDS: list[Callable[[Subparsers], None]] = [
    add_serve,
    add_demo,
    add_usage,
    add_import,
    add_compact,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="baton", description="Baton: a context manager for AI chat in editors."
    )
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="baton: %(message)s", stream=sys.stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse printed
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return int(args.func(args))
    except BatonError as exc:
        print(f"baton: {exc.message}", file=sys.stderr)
    except OSError as exc:
        print(f"baton: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    return EXIT_ERROR
