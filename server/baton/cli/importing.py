"""`baton import FILE`: a Claude Code session file becomes a Baton session in the data dir."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from baton.cli.common import (
    EXIT_OK,
    Subparsers,
    add_data_dir,
    add_settings_file,
    api_limits,
    data_dir_estimator,
    data_dir_to_write,
    existing_file,
    settings_for,
    utf8_argument,
)
from baton.core.errors import InvalidParams
from baton.core.one_line import one_line

if TYPE_CHECKING:
    from baton.core.usage.estimator import Estimator


def refuse_a_transcript(path: Path, data_dir: Path) -> None:
    """InvalidParams when `path` is a Baton transcript, saying whose and what to do."""
    from baton.core.conversation.listing import SESSION_ID
    from baton.core.conversation.transcript_read import baton_header, headless_transcript

    header = baton_header(path)
    if header is None and headless_transcript(path):
        raise InvalidParams(
            f"{path} is a Baton transcript whose first line is no valid header, not a Claude "
            f"Code session file: {READ}"
        )
    if header is None:
        return
    sid = header.get("sessionId")
    if not (isinstance(sid, str) and SESSION_ID.fullmatch(sid)):
        raise InvalidParams(f"{path} is a Baton transcript, not a Claude Code session file: {READ}")
    held = data_dir / "sessions" / f"{sid}.jsonl"
    if held.is_file() and held.samefile(path):
        raise InvalidParams(
            f"{path} is the transcript of Baton session {sid} in {data_dir} already: "
            "nothing to import"
        )
    if held.exists():
        raise InvalidParams(
            f"{path} is a Baton transcript of session {sid}, which {data_dir} holds already: {READ}"
        )
    raise InvalidParams(
        f"{path} is a Baton transcript (session {sid}), not a Claude Code session file: "
        f"{READ}, and copied into {held.parent} as {held.name} it is a session there"
    )


def remove_untold(path: Path, data_dir: Path, estimator: Estimator, earlier: set[str]) -> None:
    """Remove the session an import stopped before it named it made of `path` (none of the
    `earlier` ones): in place once its transcript was, it was never told, as an import
    cancelled over LSP is never answered."""
    from baton.core.conversation.store import SessionStore
    from baton.core.importers.claude_code import imports_of

    store = SessionStore(data_dir, estimator.count_message)
    try:
        for made in imports_of(path, store):
            if made.session_id not in earlier:
                store.path_for(made.session_id).unlink(missing_ok=True)
    finally:
        store.close()


def given_title(title: str | None) -> None:
    """InvalidParams naming --title, before anything is done, for a title no session can
    take: an empty one (an unset shell variable) would be the file's, unsaid."""
    from baton.core.conversation.session_names import checked_title

    if title is not None and not title.strip():
        raise InvalidParams(
            "--title is empty: give the new session's title, or leave --title out for the one "
            "the file gives"
        )
    if title is not None:
        try:
            checked_title(title)
        except InvalidParams as exc:
            raise InvalidParams(f"--title: {exc.message}") from None


READ = "nothing to import; `baton show`, `usage` and `compact` read it as it is"


def cmd_import(args: argparse.Namespace) -> int:
    from baton.cli.usage_report import left_words, state_words
    from baton.core.conversation.store import SessionStore
    from baton.core.importers.claude_code import (
        ImportClaim,
        another_copy,
        changed_since,
        import_with_report,
        imports_of,
    )
    from baton.core.service.imports import read_again
    from baton.core.usage.session_usage import compute_usage
    from baton.core.usage.wording import share_used

    path = existing_file(args.file)
    utf8_argument(args.title, "--title")
    given_title(args.title)
    settings = settings_for(args)  # the data dir, and the window and thresholds it is told in
    data_dir = data_dir_to_write(settings)
    estimator = data_dir_estimator(data_dir)  # its usage as the data dir's server says it
    refuse_a_transcript(path, data_dir)
    store = SessionStore(data_dir, estimator.count_message)
    claim = ImportClaim(path, store)
    try:
        if not claim.take(wait=False):  # another Baton process imports it into this data dir
            print(
                one_line(f"Waiting for another import of {path} into {data_dir} to end"),
                file=sys.stderr,
                flush=True,
            )
            claim.take(wait=True)
        earlier = imports_of(path, store)
        if earlier and not args.again:
            names = ", ".join(f"{s.session_id} ({s.title!r})" for s in earlier)
            changed = changed_since(path, earlier)
            if changed is None:
                say(f"Already imported {path} as session {names}; nothing changed")
                say("(--again imports another copy)")
            else:  # Claude Code went on with the session: the import is not the file now
                say(f"Already imported {path} as session {names}")
                say(f"Note       {changed}; --again imports it as it is now")
            return EXIT_OK
        try:
            session, report = import_with_report(path.resolve(), store, title=args.title)
            if session.transcript.moved_on():  # another program's doing since it was written
                store.release(session.session_id)
                session = store.adopt(read_again(session, store))
            # within the limits the data dir's server, with the same key, counts against
            limits, _ = api_limits(session.model or settings.model, settings)
            usage = compute_usage(session, settings, estimator, api_limits=limits)
            say(f"Imported {path} as session {session.session_id} ({session.title!r})")
        except (KeyboardInterrupt, SystemExit):  # stopped (Ctrl-C, SIGTERM): nothing stays
            store.close()
            remove_untold(path, data_dir, estimator, {s.session_id for s in earlier})
            raise
        if earlier:
            say(f"Note       {another_copy(earlier)}")
        say(f"Messages   {len(session.view)} in the view, {len(session.messages)} in all")
        rough = "estimated; " if usage.estimated else ""  # as the meter's "~" says it
        say(
            f"Usage      {usage.used_tokens:,} of {usage.context_window:,} tokens "
            f"({rough}{share_used(usage):.1f}% used, {left_words(usage)}, {state_words(usage)})"
        )
        say(f"Transcript {session.transcript.path}")
        for note in report.notes():
            say(f"Note       {note}")
    finally:
        store.close()
        claim.release()
    return EXIT_OK


def say(line: str) -> None:
    """A line of the output, its file names' escape sequences shown, not run."""
    print(one_line(line))


def add_import(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser("import", help="turn a Claude Code session into a Baton one")
    parser.add_argument("file", help="a Claude Code session file (.jsonl or .json)")
    parser.add_argument("--title", help="the new session's title")
    parser.add_argument(
        "--again", action="store_true", help="import it even if it was imported before"
    )
    add_settings_file(parser)
    add_data_dir(parser)
    parser.set_defaults(func=cmd_import)
