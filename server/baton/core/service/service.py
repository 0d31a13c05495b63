"""The one facade the server calls: settings, sessions, usage; replies and compaction
through its parts (`service.replies`, `service.compaction`, `service.drafts`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from baton.core.background import Background
from baton.core.compaction import engine
from baton.core.compaction.summary.summarizers import Progress
from baton.core.conversation.listing import Summary
from baton.core.conversation.messages import Message, MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.service.changes import Changes
from baton.core.service.compaction import Compaction
from baton.core.service.data_dir_watch import DataDirWatch
from baton.core.service.drafts import Drafts
from baton.core.service.events import Event, Events, Listener, ProgressScope, SessionChanged
from baton.core.service.idle_upkeep import IdleUpkeep
from baton.core.service.imports import Imports
from baton.core.service.kept_calibration import KeptCalibration
from baton.core.service.lanes import Lanes, in_thread
from baton.core.service.model_access import ModelAccess
from baton.core.service.model_catalog import ModelCatalog
from baton.core.service.model_choice import ModelChoice
from baton.core.service.pending_prompt import PendingPrompt
from baton.core.service.placement import Placement
from baton.core.service.replies import Replies
from baton.core.service.results import Appended, Imported, RenderData
from baton.core.service.runtime import Runtimes, SessionRuntime
from baton.core.service.tool_setup import ToolSetup
from baton.core.service.upkeep import Upkeep
from baton.core.service.writer_watch import WriterWatch
from baton.core.settings import Settings
from baton.core.settings_read import parse_settings
from baton.core.usage.budget import Usage
from baton.core.usage.draft import Draft, DraftUsage
from baton.core.usage.estimator import Estimator, default_estimator
from baton.core.usage.overhead import ClientContext, declare
from baton.core.workspace.editor_files import EditorFiles

Warn = Callable[[str], None]
T = TypeVar("T")


class BatonService:
    """Owns the store, the sessions' runtimes, the estimator, editor files, the model access.

    Every change to a session goes through here and raises one `SessionChanged` with the
    usage after it; a session's runtime is made when the service first opens it and
    dropped, with everything in it, when it is deleted or the store closes.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        api_key: str | None = None,
        estimator: Estimator | None = None,
        own_requests: bool = False,
    ) -> None:
        """`own_requests`: every request of its sessions is Baton's own (`baton acp`'s)."""
        self.settings = settings or Settings()
        self.background = Background()
        self.models = ModelAccess(self.background, api_key)
        self.estimator = estimator or default_estimator()
        self.editor_files = EditorFiles()
        self.tool_setup = ToolSetup(lambda: self.settings, self.editor_files)  # folders, tools
        self.editor_name: str | None = None  # the client's name, for the default system prompt
        self._events = Events()
        self._runtimes = Runtimes(
            self._data_dir, self.estimator, self._events, own_requests=own_requests
        )
        self.lanes = Lanes()  # a session's heavy work, off the event loop
        self._runtimes.busy = self.lanes.busy  # the store keeps a session open meanwhile
        self.compaction = Compaction(self, self._runtimes)  # compact, rewind, uncompact
        self.upkeep = Upkeep(
            self.background,
            self.compaction.context,
            self._runtimes,
            self._events,
            self.lanes.compact_any,
        )
        self.changes = Changes(self, self._runtimes, self._events, self.upkeep)
        # the estimator's factor kept in the data dir: restored, saved, followed
        self.calibration = KeptCalibration(
            self._data_dir, self.estimator, self.changes, self._runtimes
        )
        self.idle = IdleUpkeep(self, self._runtimes, self.compaction.compact, self.upkeep.auto)
        self._events.connect(self.idle.heard)
        self.drafts = Drafts(self)  # compaction drafts: preview, current, apply, discard
        self.replies = Replies(self, self._runtimes, self._events)  # send, check_can_send
        self.placement = Placement(self, self._runtimes)  # create, move: a session's folders
        self.imports = Imports(self, self._runtimes)  # import_file: a Claude Code file
        self.model_choice = ModelChoice(self, self._runtimes)  # set_model, the picker's list
        self.pending_prompt = PendingPrompt(self)  # draft_usage: a prompt before it is sent
        self._events.connect(self._note_size)  # the list's last known size of each session
        # a session another process writes, looked at once that process let go
        self.writer_watch = WriterWatch(self, self._runtimes, self.background)
        self.data_dir = DataDirWatch(lambda: self.store, self._events)  # changed under us

    def connect(self, listener: Listener, progress: ProgressScope | None = None) -> None:
        """A front end hears every event from now on; `progress` opens progress for work
        nobody requested (a background auto-compaction; its cancel cancels the work)."""
        self._events.connect(listener, progress)

    # ---- configuration -------------------------------------------------------------------

    @property
    def store(self) -> SessionStore:
        return self._runtimes.store

    def configure(self, raw: Mapping[str, Any] | None, warn: Warn | None = None) -> None:
        """Apply a client's `baton` settings on top of the current ones; usage follows."""
        before = self.settings.resolved_data_dir()
        self.settings = parse_settings(raw, warn, base=self.settings)
        if self.settings.resolved_data_dir() != before:
            if self._runtimes.store_open:
                self._runtimes.close_store()  # release the old directory's locks
            self.calibration.data_dir_changed()
        for session_id in self.open_session_ids():
            self.changes.usage_moved(session_id)

    def set_api_key(self, key: str | None) -> None:
        self.models.set_key(key)

    def set_editor_name(self, name: str | None) -> None:
        """The client's name (`clientInfo.name`), for the default system prompt."""
        self.editor_name = name

    @property
    def workspace_folders(self) -> list[Path]:
        return self.tool_setup.folders

    def set_workspace_folders(self, uris: Sequence[str]) -> None:
        self.tool_setup.set_folders(uris)

    def start_loading_tokenizer(self) -> None:
        """Load the tokenizer now, on its thread (counts wait for it)."""
        self.estimator.start_loading()

    def keep_calibration(self) -> None:
        """The data dir's calibration kept (`KeptCalibration.keep_calibration`)."""
        self.calibration.keep_calibration()

    def data_dir_problems(self) -> list[str]:
        """What the data dir does not allow (read-only, no permission), each naming the
        path and the cause; empty when it is fully usable. What the start says: a change
        since is told as a list, a create or a `get` finds it (`DataDirWatch`)."""
        return self.data_dir.told()

    def open_session_ids(self) -> list[str]:
        return self._runtimes.ids()

    # ---- sessions --------------------------------------------------------------------

    def create(
        self,
        title: str | None = None,
        system_prompt: str | None = None,
        model: str | None = None,
        client_context: ClientContext | None = None,
        folders: Sequence[Path] | None = None,
    ) -> Session:
        return self.placement.create(title, system_prompt, model, client_context, folders)

    def move(self, session_id: str, folders: Sequence[Path]) -> bool:
        return self.placement.move(session_id, folders)

    async def list_sessions(self) -> list[Session | Summary]:
        """Every session, from the store's index: the ones open here as themselves, the
        others as their summaries (a list opens no session). The index is brought up to
        date in a worker thread (what changed of each transcript read: seconds for a few
        large ones new to it), while the event loop answers every other request."""
        self.data_dir.look()
        store = self.store
        held = store.held()
        return store.listed(await in_thread(partial(store.summaries, held), self.lanes.closing))

    def session(self, session_id: str) -> Session:
        return self._runtime(session_id).session

    def put_down(self, session_id: str) -> None:
        """A session no client shows any more: its file is let go (another process may
        write it then) until its next use opens it again; one that work holds stays open."""
        if self._runtimes.store_open:
            self._runtimes.store.put_down(session_id)

    def rename(self, session_id: str, title: str) -> Session:
        """A new title, appended to the transcript as a record (nothing is rewritten)."""
        runtime = self._runtime(session_id)
        before = runtime.session.title
        self.store.rename(session_id, title)
        if runtime.session.title != before:
            self.changes.changed(runtime, "rename", tell_usage=False)
        return runtime.session

    async def model_catalog(self, session_id: str | None) -> ModelCatalog:
        """The models a picker offers, the session's marked (`ModelChoice.model_catalog`)."""
        return await self.model_choice.model_catalog(session_id)

    def context_size(self, session: Session | Summary) -> int | None:
        """A listed session's last known context size (None: unknown), for the pickers."""
        return self.store.context_size(session)

    def _note_size(self, event: Event) -> None:
        if isinstance(event, SessionChanged):
            self.store.note_size(event.session_id, event.usage.used_tokens)

    def delete(self, session_id: str) -> None:
        """Hide the session (its transcript stays); its draft goes: nothing can apply it."""
        self.store.delete(session_id)
        self._runtimes.forget(session_id, deleted=True)
        self.drafts.forget(session_id)

    async def import_file(
        self, path: str, title: str | None = None, progress: Progress | None = None
    ) -> Imported:
        """A Claude Code file imported as a new session (`Imports.import_file`)."""
        return await self.imports.import_file(path, title, progress)

    def pin(self, session_id: str, message_id: str, pinned: bool) -> Message:
        runtime = self._runtime(session_id)
        message = engine.pin(runtime.session, message_id, pinned)
        self.changes.changed(runtime, "pin", tell_usage=False)  # the document shows pins
        return message

    def append(
        self,
        session_id: str,
        inputs: Sequence[MessageInput | Message],
        client_context: ClientContext | None = None,
    ) -> Appended:
        runtime = self._runtime(session_id)
        result = runtime.session.append(inputs)  # a bad batch raises here: nothing is declared
        declare(runtime.session, client_context, self.estimator)
        usage = self.changes.appended(runtime, result.message_ids)
        self.background.spawn(self.changes.auto_check(session_id, "append"), "auto-compact")
        return Appended(result.message_ids, result.repairs, usage)

    # ---- usage ---------------------------------------------------------------------------

    def usage(self, session_id: str) -> Usage:
        """The usage to show: estimated (or anchored on the last reply's real usage), or
        the API's exact count when `exactCounts` fetched one for the view as it is."""
        return self.changes.usage(self._runtime(session_id))

    async def draft_usage(self, session_id: str, draft: Draft) -> DraftUsage:
        """The usage as it would be once `draft` is sent, and what Send would do; nothing
        is written (`PendingPrompt.usage`)."""
        return await self.pending_prompt.usage(session_id, draft)

    def set_model(self, session_id: str, model: str) -> tuple[Session, Usage, str | None]:
        """Switch the session's model (`ModelChoice.set_model`)."""
        return self.model_choice.set_model(session_id, model)

    def read_again(self, session_id: str) -> None:
        """The session, read again from its file, shows a state no change told: `reload`."""
        self.changes.read_again(self._runtime(session_id))

    def looked(self, session_id: str) -> None:
        """After a look (`get`): what its reading again found is told (`Changes.looked`)."""
        self.changes.looked(self._runtimes.get(session_id))
        self.writer_watch.watch()  # held read-only: watched for its writer to let go

    def tools(self, session_id: str) -> list[dict[str, Any]] | None:
        """The tools the session's last `send` offered (they count towards its context)."""
        return self._runtime(session_id).tools

    def render_data(self, session_id: str) -> RenderData:
        runtime = self._runtime(session_id)
        return self.changes.state(runtime).document()

    async def repaired(self, session_id: str) -> None:
        """A session's first write's repairs, in its lane when large (`Lanes.repaired`)."""
        await self.lanes.repaired(session_id, self.session(session_id).transcript)

    async def in_lane(self, session_id: str, work: Callable[[], T]) -> T:
        """`work()` in a worker thread after the session's earlier heavy work, while the
        event loop answers every other session (a document's render, a view's page)."""
        return await self.lanes.call(session_id, work)

    async def close(self) -> None:
        self.writer_watch.stop()
        await self.background.close()
        await self.models.close()
        self._runtimes.close_store(final=True)  # no lock held once the close returns

    def _runtime(self, session_id: str) -> SessionRuntime:
        return self._runtimes.of(session_id)

    def _data_dir(self) -> Path:
        return self.settings.resolved_data_dir()  # the settings of now (configure replaces them)
