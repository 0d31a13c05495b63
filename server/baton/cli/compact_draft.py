"""`baton compact SESSION --preview / --apply-draft ID / --discard-draft ID`: compaction
drafts of a session in the data dir, written and measured, then applied (as written or
with an edited summary from a file) or discarded."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import os
import sys
from pathlib import Path
from typing import TextIO

from baton.cli.common import EXIT_OK, data_dir_estimator, data_dir_to_write, json_text
from baton.cli.compact_report import ProgressDisplay, resolved_request, run_interruptible
from baton.core.compaction.draft_record import CompactDraft, discard
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.conversation.files import read_text_file
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import read_events
from baton.core.errors import DraftNotFound, InvalidParams, SessionNotFound
from baton.core.one_line import one_line
from baton.core.service.service import BatonService
from baton.core.settings import Settings

SUMMARY_CHARS = 1_000_000  # a summary file past this is refused


def cmd_draft(args: argparse.Namespace, request: CompactRequest, settings: Settings) -> int:
    """Run the draft action the flags ask for, on the session FILE names."""
    if args.save or args.dry_run:
        raise InvalidParams("--save and --dry-run do not go with a compaction draft")
    summary = _read_summary(Path(args.summary_file)) if args.summary_file else None
    data_dir = data_dir_to_write(settings)  # a draft is written beside the transcript
    held = None  # a FIFO's open, held until the summary is written (its reader stays)
    if args.summary_out:
        # before the draft replaces the one there
        held = _check_writable(Path(args.summary_out).expanduser(), data_dir)
    # the draft's figures as the data dir's server says them (its saved calibration)
    service = BatonService(settings, estimator=data_dir_estimator(settings.resolved_data_dir()))
    # one event loop for the work and the close: the API's connections end in the loop
    # that opened them. Ctrl-C stops a draft's work wherever it is (a preview's measure
    # and the write of its record, an apply's check and commit have no await, where the
    # loop's own handler would stop it): the transcript's append is written whole or cut
    # back, and the command says which it was
    try:
        run_interruptible(_run_draft(service, args, request, summary, held))
    finally:
        if held is not None:
            os.close(held)
    return EXIT_OK


async def _run_draft(
    service: BatonService,
    args: argparse.Namespace,
    request: CompactRequest,
    summary: str | None,
    held: int | None = None,
) -> None:
    try:
        sid = session_of(service, args.file)
        if args.preview:
            request = resolved_request(service.session(sid), request)  # ids as `show` prints
            earlier = service.drafts.current(sid)
            try:
                await _preview(service, sid, request, args, held)
            except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C
                _tell_if_saved(service, sid, earlier[0].draft_id if earlier else None)
                raise
        elif args.apply_draft:
            session = service.session(sid)
            boundaries = set(session.boundaries)
            try:
                result = await service.drafts.apply(sid, args.apply_draft, summary)
            except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C
                _tell_if_applied(session, args.apply_draft, boundaries)
                raise
            _print(applied_report(result, sid) if not args.json else result, args.json, sys.stdout)
        else:
            service.drafts.discard(sid, args.discard_draft)
            if args.json:
                told = {"sessionId": sid, "draftId": args.discard_draft, "discarded": True}
                print(json_text(told))
            else:
                print(f"Discarded draft {args.discard_draft} of session {sid}; nothing changed")
    finally:
        await service.close()


async def _preview(
    service: BatonService,
    sid: str,
    request: CompactRequest,
    args: argparse.Namespace,
    held: int | None = None,
) -> None:
    display = ProgressDisplay(sys.stderr, steps=False)  # off a terminal: waits alone
    try:
        draft = await service.drafts.preview(sid, request, display)
    finally:
        display.close()
    if args.summary_out:
        _write_summary(Path(args.summary_out), draft, held)
    _print(draft_report(draft) if not args.json else draft, args.json, sys.stdout)


def _tell_if_saved(service: BatonService, sid: str, earlier: str | None) -> None:
    """Say so when a preview interrupted had saved its draft already (in place of the
    `earlier` one): the record is written whole or not at all, so it is there or not."""
    current = service.drafts.current(sid)
    if current is None or current[0].draft_id == earlier:
        return
    draft_id = current[0].draft_id
    print(
        f"baton: interrupted once the draft {draft_id} of session {sid} was saved: apply it "
        f"with `baton compact {sid} --apply-draft {draft_id}`, or drop it with "
        f"--discard-draft {draft_id}",
        file=sys.stderr,
    )


def _tell_if_applied(session: Session, draft_id: str, earlier: set[str]) -> None:
    """Say whether an apply interrupted had committed its draft, as the transcript on disk
    holds it (a compaction's line is written whole or cut back): a boundary that is none
    of the `earlier` ones is the draft's, whose record then goes."""
    events, _ = read_events(session.transcript.path)
    made = [
        str(event["boundary"].get("id"))
        for event in events
        if event.get("type") == "boundary"
        and isinstance(event.get("boundary"), dict)
        and event["boundary"].get("id") not in earlier
    ]
    sid = session.session_id
    if not made:
        print(
            f"baton: interrupted before the draft {draft_id} of session {sid} was applied: "
            f"nothing changed; apply it with `baton compact {sid} --apply-draft {draft_id}`, "
            f"or drop it with --discard-draft {draft_id}",
            file=sys.stderr,
        )
        return
    with contextlib.suppress(DraftNotFound, OSError):  # the commit's own removal, if it missed
        discard(session, draft_id)
    print(
        f"baton: interrupted once the draft {draft_id} of session {sid} was applied: the "
        f"session is compacted (boundary {made[-1]})",
        file=sys.stderr,
    )


def session_of(service: BatonService, name: str) -> str:
    """The data dir's session `name` names: its id, or the path of its transcript."""
    store = service.store
    path = Path(name).expanduser()
    candidate = path.stem if path.suffix == ".jsonl" else name
    try:
        session = service.session(candidate)
    except (SessionNotFound, InvalidParams):
        session = None
    if session is None or (
        path.suffix == ".jsonl" and path.resolve() != _transcript(store, candidate)
    ):
        raise InvalidParams(
            f"{name} is not a session of the data dir ({store.sessions_dir}): a draft is made "
            "of a Baton session there (its id or its transcript); `baton import` a file first"
        )
    return session.session_id


def _transcript(store: SessionStore, session_id: str) -> Path:
    return (store.sessions_dir / f"{session_id}.jsonl").resolve()


def _check_writable(path: Path, data_dir: Path) -> int | None:
    """InvalidParams, before anything is done, when the summary could not be written to
    `path`: a preview that fails at its end must not have replaced the session's draft.
    Nor may it go over a file of `data_dir` (a transcript, a draft: Baton's own)."""
    if path.resolve().is_relative_to(data_dir.resolve()):
        raise InvalidParams(
            f"cannot write the summary to {path}: it is in the data dir {data_dir}, whose "
            "files (transcripts, drafts) are Baton's own; name a file elsewhere"
        )
    folder = path.parent
    if path.is_dir():
        raise InvalidParams(f"cannot write the summary to {path}: it is a folder")
    if not folder.is_dir():
        raise InvalidParams(f"cannot write the summary to {path}: no such folder {folder}")
    if not os.access(path if path.exists() else folder, os.W_OK):
        raise InvalidParams(f"cannot write the summary to {path}: permission denied")
    if not path.is_fifo():
        return None
    try:  # a reader now, or the refusal before any work; held open: a close is its EOF
        return _open_summary(path)
    except OSError as exc:
        raise InvalidParams(f"cannot write the summary to {path}: {exc.strerror or exc}") from None


def _open_summary(path: Path) -> int:
    """`path` opened for the summary (created, or emptied as `write_text` does); a FIFO
    only when a process reads it, where its open would wait for one for ever (OSError)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO's open without a reader
            raise OSError(exc.errno, "it is a FIFO that no process reads") from None
        raise
    os.set_blocking(fd, True)  # the writes wait for the reader, as any pipe's
    return fd


def _write_summary(path: Path, draft: CompactDraft, held: int | None = None) -> None:
    """The draft's summary into `path`; InvalidParams naming the file and the draft, which
    is made, when the file refuses it (a full disk, /dev/full)."""
    try:
        fd = held if held is not None else _open_summary(path)
        with os.fdopen(fd, "w", encoding="utf-8", closefd=held is None) as out:
            out.write(draft.summary + "\n")
    except OSError as exc:
        raise InvalidParams(
            f"cannot write the summary to {path}: {exc.strerror or exc} (the draft "
            f"{draft.draft_id} is made: apply it with --apply-draft {draft.draft_id}, or "
            f"drop it with --discard-draft {draft.draft_id})"
        ) from None


def _read_summary(path: Path) -> str:
    try:
        text = read_text_file(path, "a summary file", SUMMARY_CHARS * 4)  # 4 bytes a character
    except ValueError as exc:
        raise InvalidParams(f"cannot read the summary file {path}: {exc}") from None
    if "\0" in text:  # a binary file, or UTF-16 with no byte-order mark: no summary
        raise InvalidParams(
            f"cannot read the summary file {path}: a binary file (a NUL byte), not a summary file"
        )
    if len(text) > SUMMARY_CHARS:
        raise InvalidParams(f"the summary file {path} is longer than {SUMMARY_CHARS:,} characters")
    if not text.strip():
        raise InvalidParams(
            f"the summary file {path} is empty: write the summary in it, or leave "
            "--summary-file out to apply the draft's own"
        )
    return text.rstrip("\n")


def _print(value: str | CompactDraft | CompactResult, as_json: bool, out: TextIO) -> None:
    if as_json and not isinstance(value, str):
        out.write(json_text(value.wire(), out) + "\n")
    else:
        out.write(f"{value}\n")


def draft_report(draft: CompactDraft) -> str:
    """The draft as the command line prints it: figures, cost, what it drops, the summary."""
    lines = [
        f"Draft       {draft.draft_id} of session {draft.session_id} (nothing is committed)",
        f"Direction   {draft.direction}, summarizer {draft.summarizer}",
        f"Tokens      {draft.pre_tokens:,} before -> {draft.post_tokens:,} after",
        f"Messages    {len(draft.summarized_message_ids):,} summarized, "
        f"{len(draft.kept_message_ids):,} kept ({len(draft.pinned_message_ids)} pinned), "
        f"{len(draft.restored_files)} files restored",
        f"Cost        {draft.cost.text}",
    ]
    if draft.dropped is not None:
        lines.append(f"Drops       {draft.dropped.text}")
    lines += [f"Warning     {one_line(w)}" for w in draft.warnings]
    # the summary quotes the conversation: its escape sequences are shown, not run
    lines += ["Summary", *("  " + one_line(line) for line in draft.summary.splitlines())]
    if draft.ledger:
        lines.append("  (the fact ledger follows it at the commit)")
    lines.append(
        f"Apply it with `baton compact {draft.session_id} --apply-draft {draft.draft_id}` "
        "(add --summary-file FILE for an edited summary)"
    )
    return "\n".join(lines)


def applied_report(result: CompactResult, session_id: str) -> str:
    lines = [
        f"Compacted   session {session_id}: boundary {result.boundary_id}",
        f"Tokens      {result.pre_tokens:,} before -> {result.post_tokens:,} after",
    ]
    if result.dropped is not None:
        lines.append(f"Dropped     {result.dropped.text}")
    lines += [f"Warning     {w}" for w in result.warnings]
    return "\n".join(lines)
