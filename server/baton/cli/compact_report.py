"""`baton compact FILE`: compact a session file's temporary copy and report what happened."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO, TypeVar

from baton.cli.common import data_dir_estimator, data_dir_of, json_text
from baton.cli.message_table import resolve_id
from baton.cli.session_files import save_copy, session_from_file
from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.retention.ledger_text import LEDGER_HEADING, LEFT_OUT
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.files import path_text
from baton.core.conversation.session import Session
from baton.core.conversation.session_header import DEFAULT_TITLE
from baton.core.conversation.session_names import TITLE_MAX_CHARS, new_session_id
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.model_api.stream_failures import WaitText
from baton.core.one_line import one_line
from baton.core.settings import Settings
from baton.core.workspace.editor_files import EditorFiles

T = TypeVar("T")
SUMMARY_HEAD_LINES = 24
BAR_CELLS = 24
LINE_CHARS = 78


class ProgressDisplay:
    """Compaction progress on a stream: a redrawn bar on a terminal, else one line per step
    (none with `steps=False`). A wait before the API is asked again (`WaitText`) is a line
    of its own either way, kept above the bar, as `baton demo` says it."""

    def __init__(self, stream: TextIO, *, steps: bool = True) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.steps = steps
        self._last = ""
        self._drawn = False

    def __call__(self, text: str, fraction: float | None) -> None:
        if isinstance(text, WaitText):
            self.close()
            self.stream.write(f"  {text}\n")
            self.stream.flush()
            return
        if not self.tty:
            if self.steps and text != self._last:
                self.stream.write(f"  {text}\n")
                self.stream.flush()
            self._last = text
            return
        done = 0.0 if fraction is None else min(1.0, max(0.0, fraction))
        cells = round(done * BAR_CELLS)
        line = f"[{'#' * cells}{'.' * (BAR_CELLS - cells)}] {done * 100:3.0f}% {text}"
        # within the terminal's width: a wrapped line's "\r" would redraw its last row only
        width = min(LINE_CHARS, self._columns() - 1)
        self.stream.write("\r\x1b[K" + line[: max(width, 1)])
        self.stream.flush()
        self._drawn = True

    def _columns(self) -> int:
        """The width of the terminal the stream writes to (else COLUMNS, else 80)."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):  # a stream in memory
            columns = 0
        return columns or shutil.get_terminal_size().columns

    def close(self) -> None:
        """Clear the bar so the report starts on a clean line."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


def compact_request(
    *,
    up_to: str | None = None,
    from_id: str | None = None,
    span: list[str] | None = None,
    dry_run: bool = False,
    instructions: str | None = None,
) -> CompactRequest:
    """The request the command line's flags describe (default: the whole conversation)."""
    if up_to is not None:
        return CompactRequest("up_to", up_to, None, instructions, dry_run)
    if from_id is not None:
        return CompactRequest("from", from_id, None, instructions, dry_run)
    if span is not None:
        return CompactRequest("range", span[0], span[1], instructions, dry_run)
    return CompactRequest("all", None, None, instructions, dry_run)


def compact_file(
    path: Path,
    request: CompactRequest,
    *,
    as_json: bool,
    out: TextIO,
    err: TextIO,
    workspace: Path | None = None,
    settings: Settings | None = None,
    save_in: Path | None = None,
) -> None:
    """Compact a temporary copy of `path` with the offline summarizer and print the result
    (BatonError on bad input; `path` is never changed), with `settings` (the defaults
    without). With `save_in` (a data dir) the compacted copy is kept there as a new Baton
    session."""
    if workspace is not None and not workspace.is_dir():
        if workspace.exists():
            raise InvalidParams(f"the workspace {workspace} is a file, not a folder")
        raise InvalidParams(f"no such workspace folder: {workspace}")
    if save_in is not None and request.dry_run:
        raise InvalidParams("--save keeps a compaction; a dry run makes none")
    # a data dir's transcript: estimated as its server does
    estimator = data_dir_estimator(data_dir_of(path))
    # the summary names where the full history is: the saved copy, else the file given
    saving = (save_in, new_session_id()) if save_in is not None else None
    history = (
        SessionStore(saving[0], estimator.count_message).path_for(saving[1])
        if saving
        else path.resolve()
    )
    with tempfile.TemporaryDirectory(prefix="baton-compact-") as scratch:
        store = SessionStore(Path(scratch), estimator.count_message)
        try:
            with session_from_file(path, store, writable=True) as source:
                request = resolved_request(source.session, request)
                display = ProgressDisplay(err)
                ctx = CompactContext(
                    settings=settings or Settings(),
                    estimator=estimator,
                    summarizer=ExtractiveSummarizer(estimator.count_text),
                    editor_files=EditorFiles() if workspace else None,
                    workspace_folders=[workspace] if workspace else [],
                    progress=display,
                    history_path=history,
                )
                try:
                    result = run_interruptible(compact(source.session, request, ctx))
                finally:
                    display.close()
                try:
                    saved = _save(source.session, *saving, path) if saving else None
                    if as_json:
                        wire = result.wire() | ({"savedSessionId": saved} if saved else {})
                        out.write(json_text(wire, out) + "\n")
                    else:
                        report = format_report(result, path=path, kind=source.kind)
                        if saved is not None and save_in is not None:
                            saved_in = one_line(str(save_in))  # its escapes shown, not run
                            report += f"\nSaved       as Baton session {saved} in {saved_in}"
                        out.write(report + "\n")
                except (KeyboardInterrupt, SystemExit):  # stopped before the copy was told
                    if saving:  # nothing is saved (its store is closed: no lock held)
                        history.unlink(missing_ok=True)
                    raise
        finally:
            store.close()


def run_interruptible(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)`, where Ctrl-C stops the command at once, wherever it is (its
    `with` and `finally` blocks run: the scratch copy goes, nothing is saved). The event
    loop's own handler only cancels its task at its next await, and a compaction's checks
    and commit have none: the copy committed, the interrupt came too late to count, and
    the command went on to save it as if the key had not been pressed."""

    def stop(_number: int, _frame: object) -> None:
        raise KeyboardInterrupt

    ours = threading.current_thread() is threading.main_thread() and (
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if ours:
        signal.signal(signal.SIGINT, stop)  # asyncio.run then leaves SIGINT as it is
    try:
        return asyncio.run(work)
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def resolved_request(session: Session, request: CompactRequest) -> CompactRequest:
    """`request` with its message ids resolved (`baton show` prints shortened ones)."""
    pivot, end = request.pivot_message_id, request.end_message_id
    first = resolve_id(session, pivot) if pivot is not None else None
    last = resolve_id(session, end) if end is not None else None
    view = session.view
    if first in view and last in view and view.index(str(last)) < view.index(str(first)):
        raise InvalidParams("--range: END_ID comes before ID in the conversation")
    return replace(request, pivot_message_id=first, end_message_id=last)


def compacted_title(title: str) -> str:
    """The saved copy's title: the session's, as one line (the default one's when it has
    none), cut to leave room for " (compacted)" within the longest title a session takes."""
    suffix = " (compacted)"
    base = one_line(title).strip() or DEFAULT_TITLE
    return f"{base[: TITLE_MAX_CHARS - len(suffix)].rstrip()}{suffix}"


def _save(session: Session, data_dir: Path, session_id: str, source: Path) -> str:
    keeper = SessionStore(data_dir, session.count)
    title = compacted_title(session.title)
    try:
        return save_copy(
            session, keeper, session_id, title=title, compactedFrom=path_text(source.resolve())
        ).session_id
    finally:
        keeper.close()


def _tokens_line(result: CompactResult) -> str:
    pre, post = result.pre_tokens, result.post_tokens
    change = f" ({(post - pre) / pre * 100:+.0f}%)" if pre else ""
    # a dry run measures the view the compaction would leave, its summary written offline
    after = "after, the offline summary in" if result.dry_run else "after"
    return f"Tokens      {pre:,} before -> {post:,} {after}{change}"


def _retention_line(result: CompactResult) -> str | None:
    figures = result.retention
    if figures is None:
        return None
    parts = [
        f"{name} {figure.kept}/{figure.total}"
        for name, figure in (
            ("user prompts", figures.prompts),
            ("paths", figures.paths),
            ("errors", figures.errors),
        )
    ]
    ledger = result.summary is not None and LEDGER_HEADING in result.summary
    if ledger and LEFT_OUT in (result.summary or ""):
        note = "; a fact ledger carries the rest it had room for and counts what it left out"
    elif ledger:
        note = "; the rest are appended as a fact ledger"
    else:
        note = ""
    return f"Retention   in the summary: {', '.join(parts)}{note}"


def format_report(result: CompactResult, *, path: Path, kind: str) -> str:
    """The human-readable report of one compaction (or dry run)."""
    what = "Baton transcript" if kind == "baton" else "Claude Code session file"
    lines = [
        # the file's name as one line: its escape sequences shown, not run
        one_line(
            f"{'Dry run of' if result.dry_run else 'Compacted'} {path} ({what}; a temporary "
            "copy, the file is unchanged)"
        ),
        f"Direction   {result.direction} ({result.trigger}), summarizer {result.summarizer}",
        _tokens_line(result),
        f"Messages    {len(result.summarized_message_ids):,} summarized, "
        f"{len(result.kept_message_ids):,} kept, {len(result.restored_files)} files restored",
    ]
    pivot = result.adjusted_pivot
    if pivot is not None:
        lines.append(f"Pivot       {pivot.requested} -> {pivot.used}: {pivot.why}")
    retention = _retention_line(result)
    if retention:
        lines.append(retention)
    for restored in result.restored_files:
        cut = " (cut)" if restored.truncated else ""
        lines.append(f"Restored    {restored.uri}, {restored.tokens:,} tokens{cut}")
    lines += [f"Warning     {one_line(warning)}" for warning in result.warnings]
    if result.summary is None:
        lines.append(
            "Summary     none kept (a dry run writes it offline only to measure the context "
            "after it)"
        )
        return "\n".join(lines)
    summary_lines = result.summary.splitlines()
    lines.append(f"Summary     {len(summary_lines)} lines; the first {SUMMARY_HEAD_LINES}:")
    # the summary quotes the conversation: its escape sequences are shown, not run
    lines.extend("  " + one_line(line) for line in summary_lines[:SUMMARY_HEAD_LINES])
    if len(summary_lines) > SUMMARY_HEAD_LINES:
        lines.append(f"  ... ({len(summary_lines) - SUMMARY_HEAD_LINES} more lines)")
    return "\n".join(lines)
