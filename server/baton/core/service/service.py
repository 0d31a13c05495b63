"""The one facade the server calls: settings, sessions, usage, replies and compaction."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from baton.core.background import Background
from baton.core.compaction import engine
from baton.core.compaction.automatic.auto import AutoCompactor
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactRequest, CompactResult
from baton.core.compaction.summary.summarizers import Progress, Summarizer
from baton.core.conversation.messages import ContentBlock, Message, MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.conversation.transcript import check_writable
from baton.core.errors import BatonError, NothingToCompact
from baton.core.importers.claude_code import import_claude_code, named_file
from baton.core.model_api.exact_counts import with_exact_count
from baton.core.service.lanes import Lanes
from baton.core.service.model_access import ModelAccess
from baton.core.service.results import Appended, RenderData, Reply
from baton.core.service.upkeep import ProgressScope, Upkeep
from baton.core.settings import Settings, parse_settings
from baton.core.turn.watch import TurnWatch
from baton.core.usage.budget import Usage, budget_for, compute_usage
from baton.core.usage.estimator import Estimator, default_estimator
from baton.core.workspace.editor_files import EditorFiles, path_problem, uri_to_path

log = logging.getLogger(__name__)

UsageListener = Callable[[str, Usage], None]
SessionListener = Callable[[str, str], None]
DeltaListener = Callable[[str, str, str], None]
Warn = Callable[[str], None]


def _ignore(*_: Any) -> None:
    """The default listener: events nobody listens to go nowhere."""


class BatonService:
    """Owns the store, estimator, editor files, model client and auto-compactor.

    Every change to a session goes through here, so that every change is followed by
    `on_session_changed(session_id, reason)` and `on_usage_changed(session_id, usage)`.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        api_key: str | None = None,
        estimator: Estimator | None = None,
        on_usage_changed: UsageListener | None = None,
        on_session_changed: SessionListener | None = None,
        on_delta: DeltaListener | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.background = Background()
        self.models = ModelAccess(self.background, api_key)
        self.estimator = estimator or default_estimator()
        self.on_usage_changed: UsageListener = on_usage_changed or _ignore
        self.on_session_changed: SessionListener = on_session_changed or _ignore
        self.on_delta: DeltaListener = on_delta or _ignore
        self.progress_scope: ProgressScope | None = None
        self.editor_files = EditorFiles()
        self.workspace_folders: list[Path] = []
        self._store: SessionStore | None = None
        self._tools: dict[str, list[dict[str, Any]]] = {}  # per session, from its last send
        self._tools_tokens: dict[str, int] = {}
        self.lanes = Lanes()  # a session's heavy work, off the event loop
        self.upkeep = Upkeep(self, self._changed, self._publish_usage, self.lanes.compact_any)

    # ---- configuration -------------------------------------------------------------------

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            self._store = SessionStore(self.settings.resolved_data_dir(), self._count)
        return self._store

    def configure(self, raw: Mapping[str, Any] | None, warn: Warn | None = None) -> None:
        """Apply a client's `baton` settings on top of the current ones; usage follows."""
        before = self.settings.resolved_data_dir()
        self.settings = parse_settings(raw, warn, base=self.settings)
        if self._store is not None and self.settings.resolved_data_dir() != before:
            self._store.close()  # release the old directory's locks
            self._store = None
        for session_id in self.open_session_ids():
            self._publish_usage(session_id)

    def set_api_key(self, key: str | None) -> None:
        self.models.set_key(key)

    def set_workspace_folders(self, uris: Sequence[str]) -> None:
        paths = [p for p in map(uri_to_path, uris) if p is not None]
        self.workspace_folders = [p for p in paths if path_problem(p) is None]

    def open_session_ids(self) -> list[str]:
        if self._store is None:
            return []
        return [sid for sid, s in self._store._open.items() if not s.deleted]

    # ---- sessions --------------------------------------------------------------------

    def create(
        self, title: str | None = None, system_prompt: str | None = None, model: str | None = None
    ) -> Session:
        session = self.store.create(title, model or self.settings.model, system_prompt)
        self._changed(session.session_id, "create")
        return session

    def list_sessions(self) -> list[Session]:
        return self.store.list()

    def session(self, session_id: str) -> Session:
        return self.store.get(session_id)

    def delete(self, session_id: str) -> None:
        self.store.delete(session_id)
        self._tools.pop(session_id, None)
        self._tools_tokens.pop(session_id, None)
        self.upkeep.forget(session_id)
        self.on_session_changed(session_id, "delete")

    def import_file(self, path: str, title: str | None = None) -> Session:
        session = import_claude_code(named_file(path), self.store, title=title)
        self._changed(session.session_id, "create")
        return session

    def pin(self, session_id: str, message_id: str, pinned: bool) -> Message:
        message = self.session(session_id).set_pinned(message_id, pinned)
        self.on_session_changed(session_id, "pin")  # the document shows pins
        self.upkeep.after_change(session_id, "pin")  # a summary written ahead may be stale
        return message

    def append(self, session_id: str, inputs: Sequence[MessageInput]) -> Appended:
        session = self.session(session_id)
        result = session.append(inputs)
        self.upkeep.learn_from_usage(
            session, result.message_ids, self._tools_tokens.get(session_id, 0)
        )
        usage = self._changed(session_id, "append")
        self.background.spawn(self.upkeep.auto_check(session_id, "append"), "auto-compact")
        return Appended(result.message_ids, result.repairs, usage)

    # ---- usage ---------------------------------------------------------------------------

    def usage(self, session_id: str) -> Usage:
        """The usage to show: estimated (or anchored on the last reply's real usage), or
        the API's exact count when `exactCounts` fetched one for the view as it is."""
        session = self.session(session_id)
        model = session.model or self.settings.model
        limits = self.models.limits(model, self.settings, self._limits_arrived)
        usage = compute_usage(
            session,
            self.settings,
            self.estimator,
            tools_tokens=self._tools_tokens.get(session_id, 0),
            auto_paused=self._auto_paused(session_id),
            api_limits=limits,
        )
        exact = self.upkeep.exact_figure(session)
        if exact is not None:
            usage = with_exact_count(usage, exact, budget_for(model, self.settings, limits)[0])
        return usage

    def tools(self, session_id: str) -> list[dict[str, Any]] | None:
        """The tools the session's last `send` offered (they count towards its context)."""
        return self._tools.get(session_id)

    def render_data(self, session_id: str) -> RenderData:
        session = self.session(session_id)
        last = session.active[-1] if session.active else None
        paused_by = self.upkeep.paused_by(session_id)
        return RenderData(session, session.view_messages(), self.usage(session_id), last, paused_by)

    # ---- replies -------------------------------------------------------------------------

    async def send(
        self,
        session_id: str,
        content: str | list[ContentBlock] | None = None,
        tools: list[dict[str, Any]] | None = None,
        progress: Progress | None = None,
    ) -> Reply:
        """One turn; auto-compact runs inside it. Events follow each visible step: the
        prompt as soon as it is appended, any compaction as soon as it is committed (both
        before the model is asked), the reply at the end."""
        from baton.core.turn import chat

        session = self.session(session_id)
        client = self.models.client(self.settings)
        watch = TurnWatch(session, lambda reason: self._changed(session_id, reason))

        def delta(message_id: str, text: str) -> None:
            self.on_delta(session_id, message_id, text)

        self._tools[session_id] = list(tools or [])
        self._tools_tokens[session_id] = self.estimator.count_json(tools) if tools else 0
        context = chat.ChatContext(
            settings=self.settings,
            estimator=self.estimator,
            client=client,
            on_delta=delta,
            auto=self.auto(),
            compact_context=lambda: self.compact_context(session_id=session_id),
            progress=progress,
            on_step=watch.catch_up,
        )
        try:
            result = await chat.send(session, content=content, tools=tools, ctx=context)
        finally:
            watch.catch_up()  # a failed or cancelled turn may still have kept the prompt
        self.upkeep.after_reply(session_id)
        return Reply(result.message, self.usage(session_id))

    # ---- compaction ----------------------------------------------------------------------

    async def compact(
        self, session_id: str, request: CompactRequest, progress: Progress | None = None
    ) -> CompactResult:
        session = self.session(session_id)
        check_writable(request.instructions, "instructions")
        context = self.compact_context(progress, session_id)
        result = await self.lanes.compact_any(session, request, context)  # offline: off the loop
        if not request.dry_run:
            self.auto().reset(session_id)  # a manual success closes the circuit breaker
            self._changed(session_id, "compact")
        return result

    async def preview_auto(self, session_id: str) -> tuple[CompactResult | None, str | None]:
        """What auto-compact would summarize and keep right now, or None and why not."""
        self.session(session_id)
        request = CompactRequest(direction="all", dry_run=True, trigger="auto")
        try:
            return await self.compact(session_id, request), None
        except NothingToCompact:
            return None, None
        except BatonError as exc:  # busy, read-only, no key for the summarizer...
            return None, exc.message

    def uncompact(self, session_id: str, boundary_id: str | None = None) -> Usage:
        engine.uncompact(self.session(session_id), boundary_id)
        return self._changed(session_id, "uncompact")

    def compact_context(
        self,
        progress: Progress | None = None,
        session_id: str | None = None,
        *,
        summarizer: Summarizer | None = None,
    ) -> CompactContext:
        return CompactContext(
            settings=self.settings,
            estimator=self.estimator,
            summarizer=summarizer or self.models.summarizer(self.settings, self.estimator),
            editor_files=self.editor_files,
            workspace_folders=list(self.workspace_folders),
            progress=progress,
            tools_tokens=self._tools_tokens.get(session_id or "", 0),
            tools=self._tools.get(session_id or "") or None,
        )

    async def close(self) -> None:
        await self.background.close()
        await self.models.close()
        if self._store is not None:
            self._store.close()
            self._store = None

    # ---- internals -----------------------------------------------------------------------

    def _count(self, message: Message) -> int:
        return self.estimator.count_message(message)

    def _changed(self, session_id: str, reason: str) -> Usage:
        self.on_session_changed(session_id, reason)
        self.upkeep.after_change(session_id, reason)
        if reason in ("append", "reply") and self.settings.summarizer == "memory":
            updater = self.models.notes_updater(self.settings, self.estimator)
            session = self.session(session_id)
            self.background.spawn(updater.maybe_update(session), "session notes")
        return self._publish_usage(session_id)

    def _publish_usage(self, session_id: str) -> Usage:
        usage = self.usage(session_id)
        self.on_usage_changed(session_id, usage)
        self.upkeep.want_exact_count(session_id)
        return usage

    def auto(self) -> AutoCompactor:
        return self.upkeep.auto

    def _auto_paused(self, session_id: str) -> bool:
        return self.upkeep.paused(session_id)

    def _limits_arrived(self, model: str) -> None:
        for session_id in self.open_session_ids():
            if (self.session(session_id).model or self.settings.model) == model:
                self._publish_usage(session_id)
