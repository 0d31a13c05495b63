"""The service's compaction entry points: compact now, preview what auto-compact would do,
say whether a compaction or an undo offered now would be refused (the plan or check that
answers it made by the caller, off the event loop), rewind, undo a boundary,
and the context every compaction of a session runs with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from baton.core.compaction import engine
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.hooks import load_hooks
from baton.core.compaction.plan import plan_compaction
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.summary.summarizers import Progress, Summarizer
from baton.core.conversation.boundary import Boundary
from baton.core.conversation.session import Session
from baton.core.conversation.transcript import check_writable
from baton.core.conversation.undo_check import undo_refusal
from baton.core.errors import BatonError, InvalidParams, NothingToCompact
from baton.core.service.runtime import Runtimes, SessionRuntime
from baton.core.service.undos import Undos
from baton.core.usage.budget import Usage

if TYPE_CHECKING:
    from baton.core.service.service import BatonService


@dataclass(frozen=True)
class Asked:
    """A refusal asked of a session as it is now: its `answer` when known, else the `work`
    (a plan, an undo check) that gives it, to be made in the session's lane, and what
    its answer is kept for (the session, the question, its state when asked)."""

    answer: str | None
    work: Callable[[], str | None] | None = None
    session: Session | None = None
    key: tuple[str | None, ...] = ()
    state: tuple[str, int] | None = None  # the session's id and revision when asked


class Compaction:
    """Front ends call it as `service.compaction`; each commit is one change of the session,
    announced as it commits (`changes.py` raises its event), before the PostCompact hooks run;
    a manual success closes auto-compact's breaker first, so that its event says so."""

    def __init__(self, service: BatonService, runtimes: Runtimes) -> None:
        self._service = service
        self._runtimes = runtimes
        # the answers of `refusal` and `undo_refusal` for one state of one session
        self._answered_at: tuple[str, int] | None = None
        self._answers: dict[tuple[str | None, ...], str | None] = {}
        self._undos = Undos(service, runtimes)  # the undos under way in a session's lane

    async def compact(
        self, session_id: str, request: CompactRequest, progress: Progress | None = None
    ) -> CompactResult:
        service = self._service
        session = service.session(session_id)
        check_writable(request.instructions, "instructions")
        await service.models.client_ready()  # a summarizer that uses the key needs the SDK
        # an idle compaction (trigger auto) is no manual one: it leaves the breaker as it is
        context = self.context(progress, session_id, manual=request.trigger != "auto")
        return await service.lanes.compact_any(session, request, context)  # offline: off the loop

    async def preview_auto(self, session_id: str) -> tuple[CompactResult | None, str | None]:
        """What auto-compact would summarize and keep right now, or None and why not."""
        self._service.session(session_id)
        request = CompactRequest(direction="all", dry_run=True, trigger="auto", measure=False)
        try:
            return await self.compact(session_id, request), None
        except NothingToCompact:
            return None, None
        except BatonError as exc:  # busy, read-only, no key for the summarizer...
            return None, exc.message

    def ask_refusal(
        self,
        session_id: str,
        direction: str,
        pivot_message_id: str | None = None,
        end_message_id: str | None = None,
    ) -> Asked:
        """Why a compaction in `direction` would be refused now: another compaction of the
        session runs, or it would find nothing to summarize in the view (planned as the
        compaction plans it); else None. Only the plan is made: a summary that would not
        make the context smaller is found by writing it. The answer comes known, or as
        the plan still to make (off the event loop: on a long session it walks the view)."""
        service = self._service
        session = service.session(session_id)
        if session.compacting:  # asked each time: a compaction's start or end is no revision
            return Asked(f"session {session_id} is already being compacted")
        threshold = service.usage(session_id).auto_compact_threshold
        keep_window = engine.bounded_keep_window(service.settings.keep_window, threshold)

        def planned() -> str | None:
            try:
                plan_compaction(
                    session.view_messages(),
                    direction,
                    pivot_message_id,
                    end_message_id,
                    keep_window=keep_window,
                    count=lambda m: m.tokens or service.estimator.count_message(m),
                )
            except (NothingToCompact, InvalidParams) as exc:
                return exc.message
            return None

        asked = (direction, pivot_message_id, end_message_id, keep_window.model_dump_json())
        return self._ask(session, asked, planned)

    def ask_undo_refusal(self, session_id: str, boundary_id: str) -> Asked:
        """Why undoing the session's active boundary `boundary_id` would be refused (a
        compaction of the session runs, what to undo first), or None; nothing is written.
        The answer comes known, or as the check still to make."""
        session = self._service.session(session_id)
        if session.compacting:
            return Asked(f"session {session_id} is being compacted")
        checked = partial(undo_refusal, session, boundary_id)
        return self._ask(session, ("undo", boundary_id), checked)

    def _ask(
        self, session: Session, asked: tuple[str | None, ...], work: Callable[[], str | None]
    ) -> Asked:
        """The answer to `asked` about the session as it is now when it is kept, else
        `work`, which gives it: each code action request (a cursor move) asks again, and on
        a long session the plans and undo checks take a tenth of a second each."""
        state = (session.session_id, session.revision)
        if self._answered_at != state:
            self._answered_at, self._answers = state, {}
        if asked in self._answers:
            return Asked(self._answers[asked])
        return Asked(None, work, session, asked, state)

    def keep(self, asked: Asked, answer: str | None) -> str | None:
        """`answer`, what `asked`'s work gave (in the session's lane, say), kept for the
        session while it stays as it was when asked: a change made meanwhile may have
        moved the answer, and the next ask makes it again."""
        session = asked.session
        now = (session.session_id, session.revision) if session is not None else None
        if now is not None and asked.state == self._answered_at == now:
            self._answers[asked.key] = answer
        return answer

    def rewind(self, session_id: str, message_id: str) -> tuple[Boundary, Usage]:
        """Take a message and the rest of the view after it out of the view (kept in the
        transcript; undone like a compaction)."""
        runtime = self._runtimes.of(session_id)
        if runtime.replying:  # it would take the prompt that reply answers out of the view
            raise InvalidParams(
                f"a reply is streaming in session {session_id}: stop it (cancel its send) "
                "or let it finish, then rewind"
            )
        boundary = engine.rewind(runtime.session, message_id)
        return boundary, self._service.changes.changed(runtime, "rewind")

    async def undo(
        self, session_id: str, boundary_id: str | None = None, progress: Progress | None = None
    ) -> Usage:
        """Undo `boundary_id` (default: the latest compaction), as front ends ask it: on a
        long session checked in its lane, off the event loop (`undos.py`), `progress`
        hearing the steps of a long check, which a cancel stops."""
        return await self._undos.uncompact(session_id, boundary_id, progress)

    def uncompact(self, session_id: str, boundary_id: str | None = None) -> Usage:
        """Undo `boundary_id` (default: the latest compaction) at once, on the loop."""
        runtime = self._runtimes.of(session_id)
        engine.uncompact(runtime.session, boundary_id)
        return self._service.changes.changed(runtime, "uncompact")

    def context(
        self,
        progress: Progress | None = None,
        session_id: str | None = None,
        *,
        summarizer: Summarizer | None = None,
        manual: bool = False,
    ) -> CompactContext:
        """What a compaction runs with: the settings of now, the summarizer they choose,
        and, for an open session, the tools its last send offered (they count too) and the
        announcement of its commit (`manual`: one the user asked for, which resumes a
        paused auto-compact)."""
        service = self._service
        runtime = self._runtimes.get(session_id) if session_id is not None else None
        return CompactContext(
            settings=service.settings,
            estimator=service.estimator,
            summarizer=summarizer or service.models.summarizer(service.settings, service.estimator),
            editor_files=service.editor_files,
            workspace_folders=service.tool_setup.folders_of(session_id),
            progress=progress,
            tools_tokens=runtime.tools_tokens if runtime is not None else 0,
            tools=(runtime.tools or None) if runtime is not None else None,
            hooks=load_hooks(),
            committed=self._announce(runtime, manual) if runtime is not None else None,
            settled=partial(self._undos.settled, session_id) if session_id is not None else None,
        )

    def _announce(self, runtime: SessionRuntime, manual: bool) -> Callable[[CompactResult], None]:
        """What a commit of the session tells: its one change, the breaker closed first
        when the user asked for the compaction."""
        service = self._service

        def committed(_: CompactResult) -> None:
            if manual:
                service.upkeep.auto.reset(runtime.session_id, runtime.session)  # resumed
            service.changes.changed(runtime, "compact")

        return committed
