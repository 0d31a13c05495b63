"""workDoneProgress for long work: begin, throttled reports, end (always), cancellable."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from baton.core.model_api.stream_failures import WaitText

log = logging.getLogger(__name__)

REPORT_INTERVAL = 0.25  # seconds between reports while text streams


class Reporter:
    """What the core calls to say how far it got; a no-op when the client has no UI for it."""

    def __init__(self, ls: LanguageServer | None = None, token: Any = None) -> None:
        self._ls = ls
        self._token = token
        self._last = 0.0
        self._last_message: str | None = None
        self.final_message: str | None = None
        # a report held back by the interval, sent when it is over unless another came first
        self._held: tuple[str, int | None] | None = None
        self._flush: asyncio.TimerHandle | None = None

    def __call__(self, message: str, fraction: float | None = None) -> None:
        """The core's progress callback: `fraction` is 0..1 when the work knows it. A wait
        before the API is asked again (`WaitText`) is sent at once: held back by the
        interval, a short one would be dropped by the next step."""
        percentage = None if fraction is None else max(0, min(100, round(fraction * 100)))
        self.report(message, percentage, force=isinstance(message, WaitText))

    def report(self, message: str, percentage: int | None = None, *, force: bool = False) -> None:
        if self._ls is None:
            return
        now = time.monotonic()
        # a new step of known extent always shows; streaming text at most every interval,
        # and the last of it when the interval is over: a message followed by a long wait
        # (the API asked to wait before it is asked again) shows all the same
        step = percentage is not None and message != self._last_message
        left = REPORT_INTERVAL - (now - self._last)
        if not (force or step) and left > 0:
            self._held = (message, percentage)
            if self._flush is None:
                with contextlib.suppress(RuntimeError):  # off the loop: dropped, as it was
                    self._flush = asyncio.get_running_loop().call_later(left, self._send_held)
            return
        self.close()
        self._last, self._last_message = now, message
        value = types.WorkDoneProgressReport(message=message, percentage=percentage)
        self._ls.work_done_progress.report(self._token, value)

    def _send_held(self) -> None:
        self._flush = None
        held, self._held = self._held, None
        if held is not None:
            self.report(*held, force=True)

    def close(self) -> None:
        """Drops the report held back, if any (the work ended, or a later one was sent)."""
        self._held = None
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None


def client_supports_progress(ls: LanguageServer) -> bool:
    caps = getattr(ls.protocol, "client_capabilities", None)  # none before initialize
    window = caps.window if caps is not None else None
    return bool(window and window.work_done_progress)


@contextlib.asynccontextmanager
async def work_done(ls: LanguageServer, title: str, token: Any = None) -> AsyncIterator[Reporter]:
    """Progress for the block; the client's cancel button cancels the current task.

    `token` is a client-supplied `workDoneToken`; without one the server creates its own
    when the client supports server-initiated progress, and reports nothing otherwise.
    """
    if token is None:
        if not client_supports_progress(ls):
            yield Reporter()
            return
        token = f"baton-{uuid.uuid4().hex[:12]}"
        try:
            await ls.work_done_progress.create_async(token)
        except Exception as exc:  # a client that refuses progress still gets the work done
            log.debug("work done progress refused: %s", exc)
            yield Reporter()
            return
    reporter = Reporter(ls, token)
    ls.work_done_progress.begin(
        token, types.WorkDoneProgressBegin(title=title, cancellable=True, percentage=0)
    )
    task = asyncio.current_task()
    cancel_future = ls.work_done_progress.tokens.get(token)
    if task is not None and cancel_future is not None:
        loop = asyncio.get_running_loop()

        def on_cancel(future: Any) -> None:
            if future.cancelled() and not task.done():
                loop.call_soon_threadsafe(task.cancel)

        cancel_future.add_done_callback(on_cancel)
    try:
        yield reporter
    finally:
        reporter.close()
        ls.work_done_progress.tokens.pop(token, None)
        ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=reporter.final_message))
