"""The `baton` command line: one small function per subcommand, errors as one stderr line.

`baton serve` without options, the command editors start, runs the server without
building the parser (argparse's help formatter, every subcommand's module)."""

from __future__ import annotations

import argparse
import codecs
import io
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn, TextIO, cast

from baton import __version__
from baton.cli.common import (
    EXAMPLE_SESSION,
    EXAMPLES_DIR,
    EXIT_ERROR,
    EXIT_OK,
    Subparsers,
)
from baton.cli.output import Output, OutputFailed, Unheard, discard
from baton.core.errors import BatonError, InvalidParams
from baton.core.one_line import OneLineFilter, one_line

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = ["EXAMPLES_DIR", "EXAMPLE_SESSION", "build_parser", "main"]


# ---- subcommands ---------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    from baton.lsp.server import parse_address, serve

    for address in (args.tcp, args.ws):
        if address is not None:
            try:
                parse_address(address)
            except ValueError as exc:
                raise InvalidParams(str(exc)) from None
    return serve(tcp=args.tcp, ws=args.ws, log_level=args.log_level)


def cmd_acp(args: argparse.Namespace) -> int:
    from baton.acp.server import run

    return run(data_dir=args.data_dir, settings=args.settings, log_level=args.log_level)


def cmd_demo(args: argparse.Namespace) -> int:
    from baton.cli.demo import main as demo

    return demo(sys.stdout)


# ---- the parser ----------------------------------------------------------------------------


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


def add_acp(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "acp", help="run the Agent Client Protocol agent on stdio (Zed, JetBrains, Emacs, Neovim)"
    )
    parser.add_argument(
        "--data-dir", metavar="DIR", help="where transcripts live (default: as `baton serve`)"
    )
    parser.add_argument(
        "--settings", metavar="FILE", help="a JSON file of Baton settings (the editor's keys)"
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level (default WARNING)",
    )
    parser.set_defaults(func=cmd_acp)


def add_demo(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="start the server and drive it like an editor: usage, code actions, compact, undo",
    )
    parser.set_defaults(func=cmd_demo)


def subcommands() -> list[Callable[[Subparsers], None]]:
    from baton.cli.compact import add_compact
    from baton.cli.importing import add_import
    from baton.cli.payload import add_payload
    from baton.cli.usage import add_show, add_usage

    return [add_serve, add_acp, add_demo, add_usage, add_show, add_import, add_compact, add_payload]


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage error is one line, as every error of the command
    line is (its subcommands' parsers are made of this class too)."""

    commands: Mapping[str, argparse.ArgumentParser]  # the subcommands' parsers, by name

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: {one_line(message)} (see `{self.prog} --help`)\n")

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        """argparse's, without dropping what the write raised: --help or --version into
        an output that refuses it is told as any other output error."""
        if message:
            (file or sys.stderr).write(message)

    def parse(self, args: Sequence[str]) -> argparse.Namespace:
        """As `parse_args`, with an argument no parser knows told by its subcommand."""
        parsed, extra = self.parse_known_args(args)
        if extra:
            command = self.commands.get(getattr(parsed, "command", None) or "", self)
            command.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed


def build_parser() -> Parser:
    parser = Parser(prog="baton", description="Baton: a context manager for AI chat in editors.")
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in subcommands():
        add(subparsers)
    parser.commands = subparsers.choices
    return parser


def plain_serve() -> argparse.Namespace:
    """What the parser makes of `serve` alone, without building the parser."""
    return argparse.Namespace(command="serve", tcp=None, ws=None, log_level="INFO", func=cmd_serve)


def main(argv: Sequence[str] | None = None) -> int:
    if sys.stderr is None:  # started with it closed (`2>&-`): a print to None goes to stdout
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (the process's)
    for stream in (sys.stdout, sys.stderr):
        # a file name that is not UTF-8 (a lone surrogate in Python) never fails a print,
        # nor does a report's "…" on an ASCII output (the C locale's has surrogateescape)
        if isinstance(stream, io.TextIOWrapper) and (
            stream.errors == "strict" or codecs.lookup(stream.encoding).name != "utf-8"
        ):
            stream.reconfigure(errors="backslashreplace")
    stdout, stderr = sys.stdout, sys.stderr
    sys.stderr = cast(TextIO, Unheard(stderr))
    if stdout is not None:
        sys.stdout = cast(TextIO, Output(stdout))
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(OneLineFilter())  # a name holding a line break never splits a record
    logging.basicConfig(level=logging.WARNING, format="baton: %(message)s", handlers=[handler])
    try:
        code = _run(argv)
        # `baton acp`'s pipe is closed with its reader gone; `serve --tcp >&-` has none
        if sys.stdout is not None and not sys.stdout.closed:
            sys.stdout.flush()  # a reader that went away shows here, not at exit
        return code
    except BrokenPipeError:  # the reader stopped reading (`baton usage | head`)
        discard(stdout)
        return EXIT_OK
    except OutputFailed as exc:  # `baton usage > /dev/full`
        discard(stdout)
        print(f"baton: standard output cannot be written: {exc.reason}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if isinstance(sys.stdout, Output):
            sys.stdout = stdout
        if isinstance(sys.stderr, Unheard):
            sys.stderr = stderr


def _run(argv: Sequence[str] | None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    if sys.stdout is None and not _network_serve(given):  # started with no output (`>&-`)
        print("baton: standard output is closed: no output can be written", file=sys.stderr)
        return EXIT_ERROR
    if sys.stdin is None and given[:1] == ["serve"] and not _network_serve(given):
        print("baton: standard input is closed: no request can be read", file=sys.stderr)
        return EXIT_ERROR
    if given == ["serve"]:
        args = plain_serve()
    else:
        parser = build_parser()
        try:
            args = parser.parse(given)
        except SystemExit as exc:  # --help, --version, or a usage error argparse printed
            return exc.code if isinstance(exc.code, int) else EXIT_ERROR
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return EXIT_ERROR
    # a command stopped cleans up its copies; a server ends as its client says
    stopping = (signal.SIGTERM, getattr(signal, "SIGHUP", None))
    try:
        with stop_cleanly_on(*(stopping if args.command not in ("serve", "acp") else ())):
            refuse_empty_names(args)
            return int(args.func(args))
    except BrokenPipeError:
        raise
    except BatonError as exc:
        print(f"baton: {one_line(exc.message)}", file=sys.stderr)
    except OSError as exc:
        told = f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
        print(f"baton: {one_line(told)}", file=sys.stderr)
    except KeyboardInterrupt:
        return 130
    return EXIT_ERROR


NAMED = (  # the arguments that name a file or a folder: (attribute, as told, what it names)
    ("file", "FILE", "file"),
    ("data_dir", "--data-dir", "folder"),
    ("workspace", "--workspace", "folder"),
    ("settings", "--settings", "file"),
    ("summary_file", "--summary-file", "file"),
    ("summary_out", "--summary-out", "file"),
)


def refuse_empty_names(args: argparse.Namespace) -> None:
    """InvalidParams for an argument that names a file or a folder by an empty name (an
    unset shell variable): it would read as none given, or as the current folder."""
    for attribute, flag, kind in NAMED:
        if getattr(args, attribute, None) == "":
            raise InvalidParams(f"{flag} is empty: it names no {kind}")


@contextmanager
def stop_cleanly_on(*signals: signal.Signals | None) -> Iterator[None]:
    """While in the block, each of `signals` (a job killed, a shell closed) ends the
    command as Ctrl-C does: its `with` and `finally` blocks run (a temporary copy of the
    conversation goes), then it exits quietly with 128 + the signal's number. A signal the
    process was started ignoring (`nohup`) stays ignored; the handlers are put back after."""

    def stop(number: int, _frame: object) -> None:
        raise SystemExit(128 + number)

    taken = [
        each
        for each in signals
        if each is not None
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(each) == signal.SIG_DFL
    ]
    for each in taken:
        signal.signal(each, stop)
    try:
        yield
    finally:
        for each in taken:
            signal.signal(each, signal.SIG_DFL)


def _network_serve(given: list[str]) -> bool:
    """`baton serve --tcp/--ws`, the one command that writes nothing to its output."""
    return given[:1] == ["serve"] and any(a.startswith(("--tcp", "--ws")) for a in given)
