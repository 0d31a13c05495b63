"""`BatonAgent`: the ACP agent over Baton's service: initialize and authentication, the
sessions (new, list, load, resume, close), config options, and the service's events told
as `session/update`s (reply text, the meter, auto-compactions)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    CloseSessionResponse,
    ConfigOptionUpdate,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
)

from baton import __version__
from baton.acp import config, turns
from baton.acp.compaction_report import agent_text
from baton.acp.errors import AUTH_REQUIRED, guarded, invalid
from baton.acp.history import replay_streaming
from baton.acp.listener import told
from baton.acp.loading import opened, replay
from baton.acp.open_sessions import (
    Live,
    attach,
    check_cwd,
    greet,
    kept_cwds,
    live_session,
    same_folder,
)
from baton.acp.outbox import Outbox, Poster
from baton.core.service.service import BatonService
from baton.core.turn import recovery

log = logging.getLogger(__name__)

AUTH_METHOD = "anthropic-api-key"
KEY_ENV = "ANTHROPIC_API_KEY"


class BatonAgent:
    def __init__(self, service: BatonService, transport: Poster) -> None:
        self.service = service
        self.transport = transport  # what the connection speaks through
        self.conn: Any = None
        self.outbox: Outbox | None = None
        self.live: dict[str, Live] = {}
        self.answering: set[asyncio.Task[Any]] = set()  # the requests being answered
        self.listing: set[asyncio.Task[Any]] = set()  # session/lists reading the data dir
        # sessions a list told from their header alone (a load reading them): the title and
        # updatedAt told, set right once they are opened (`greet`)
        self.told_partly: dict[str, tuple[str | None, str | None]] = {}
        self.compaction_entity = False  # the client declared session.compaction
        self.can_read = self.can_write = False
        service.connect(lambda event: told(self, event))

    # ---- the connection --------------------------------------------------------------

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        self.outbox = Outbox(self.transport)  # raw updates: the SDK lacks the RFD's updates
        self.outbox.bind(asyncio.get_running_loop())

    def observe(self, event: StreamEvent) -> None:
        """The raw `initialize` params: the SDK's models drop `session.compaction`."""
        message = event.message
        if event.direction != StreamDirection.INCOMING or message.get("method") != "initialize":
            return
        params = message.get("params")
        capabilities = params.get("clientCapabilities") if isinstance(params, dict) else None
        session = capabilities.get("session") if isinstance(capabilities, dict) else None
        self.compaction_entity = isinstance(session, dict) and isinstance(
            session.get("compaction"), dict
        )
        self.stop_observing()

    def stop_observing(self) -> None:
        """Observers copy every message both ways: once `initialize` is read, no more."""
        observers = getattr(getattr(self.conn, "_conn", None), "_observers", None)
        if isinstance(observers, list) and self.observe in observers:
            observers.remove(self.observe)

    @property
    def out(self) -> Outbox:
        assert self.outbox is not None, "the agent is not connected"
        return self.outbox

    # ---- initialize and authentication -----------------------------------------------

    @guarded
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **_: Any,
    ) -> InitializeResponse:
        fs = getattr(client_capabilities, "fs", None)
        self.can_read = bool(getattr(fs, "read_text_file", False))
        self.can_write = bool(getattr(fs, "write_text_file", False))
        # the default system prompt of the sessions it makes names the editor
        self.service.set_editor_name(getattr(client_info, "name", None))
        self.service.start_loading_tokenizer()
        self.service.keep_calibration()
        methods = []
        if not self.service.models.has_key:
            methods.append(
                EnvVarAuthMethod(
                    id=AUTH_METHOD,
                    name="Anthropic API key",
                    description="Baton replies through the Anthropic API: give it your key.",
                    type="env_var",
                    vars=[AuthEnvVar(name=KEY_ENV, label="Anthropic API key", secret=True)],
                    link="https://console.anthropic.com/settings/keys",
                )
            )
        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
            session_capabilities=SessionCapabilities(
                list=SessionListCapabilities(),
                resume=SessionResumeCapabilities(),
                close=SessionCloseCapabilities(),
            ),
        )
        return InitializeResponse(
            # the version asked for when Baton speaks it, else the latest it speaks
            protocol_version=protocol_version
            if 1 <= protocol_version <= PROTOCOL_VERSION
            else PROTOCOL_VERSION,
            agent_capabilities=capabilities,
            auth_methods=methods,
            agent_info=Implementation(name="baton", title="Baton", version=__version__),
        )

    @guarded
    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse:
        if method_id != AUTH_METHOD:
            raise invalid(f"unknown auth method {method_id!r}")
        if not self.service.models.has_key:
            data = {"code": "api_key_missing"}
            raise RequestError(AUTH_REQUIRED, f"set {KEY_ENV} in the agent's environment", data)
        return AuthenticateResponse()

    # ---- sessions --------------------------------------------------------------------

    @guarded
    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> NewSessionResponse:
        check_cwd(cwd)
        session = self.service.create(folders=[Path(cwd)])  # its system prompt names it alone
        attach(self, session.session_id, cwd).untitled = True
        greet(self, session.session_id, mcp_servers)
        options = config.config_options(self.service, session.session_id)
        return NewSessionResponse(session_id=session.session_id, config_options=options)

    @guarded
    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any
    ) -> LoadSessionResponse:
        session = await opened(self, session_id)
        live = attach(self, session_id, cwd)
        await replay(self, live, session, cwd)  # before the answer
        if recovery.refused_set_aside(session) is not None:  # in its place, as told live
            turns.say_refused(self, session)
        if live.turn is not None and not live.turn.done():
            # the rest follows as it comes
            replay_streaming(self.out, session, live.streamed, live.host.report)
        for running in (live.auto_compaction, live.compaction):
            if running is not None:
                running.start()  # in progress still: its end follows
        greet(self, session_id, mcp_servers)
        return LoadSessionResponse(config_options=config.config_options(self.service, session_id))

    @guarded
    async def resume_session(
        self, session_id: str, cwd: str, mcp_servers: Any = None, **_: Any
    ) -> ResumeSessionResponse:
        await opened(self, session_id)
        attach(self, session_id, cwd)
        greet(self, session_id, mcp_servers)
        return ResumeSessionResponse(config_options=config.config_options(self.service, session_id))

    @guarded
    async def close_session(self, session_id: str, **_: Any) -> CloseSessionResponse:
        live = live_session(self, session_id)
        # the turn ends first: what its end tells (a call not run, a compaction cancelled)
        # goes before the answer, and nothing of the session after it
        while live.turn is not None and not live.turn.done():
            turn = live.turn
            turn.cancel()
            await asyncio.wait({turn})
        self.live.pop(session_id, None)
        # another editor's agent may write it now: its lock is let go until a load here
        self.service.put_down(session_id)
        return CloseSessionResponse()

    @guarded
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        folders = kept_cwds(self).read()
        here = cwd or str(Path.cwd())
        sessions = []
        reading = asyncio.ensure_future(self.service.list_sessions())  # a load's replay waits
        self.listing.add(reading)
        try:
            listed = await reading
        finally:
            self.listing.discard(reading)
        for found in listed:
            if getattr(found, "deleted", False):
                continue
            folder = folders.get(found.session_id)
            if cwd is not None and folder is not None and not same_folder(folder, cwd):
                continue
            info = SessionInfo(
                session_id=found.session_id,
                cwd=folder or here,
                title=found.title or None,
                updated_at=found.updated_at or None,
            )
            if getattr(found, "partial", False):
                self.told_partly[found.session_id] = (info.title, info.updated_at)
            else:
                self.told_partly.pop(found.session_id, None)
            sessions.append(info)
        sessions.sort(key=lambda s: s.updated_at or "", reverse=True)
        return ListSessionsResponse(sessions=sessions)

    @guarded
    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        live_session(self, session_id)
        warning = config.apply(self.service, session_id, config_id, value)
        if warning is not None:  # as `baton/session/setModel` answers it: the meter alone
            agent_text(self.out, session_id, warning)  # shows the window past full
        if config_id in config.PROCESS_WIDE:  # every open session's panel shows it
            for other in self.live:
                if other != session_id:
                    shown = config.config_options(self.service, other)
                    update = ConfigOptionUpdate(
                        session_update="config_option_update", config_options=shown
                    )
                    self.out.update(other, update)
        options = config.config_options(self.service, session_id)
        return SetSessionConfigOptionResponse(config_options=options)

    # ---- turns -----------------------------------------------------------------------

    @guarded
    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        self.answering.discard(asyncio.current_task())  # cancelled at the input's end, not awaited
        live = live_session(self, session_id)
        while live.replay is not None:  # a load's replay first: its history, then the turn
            await live.replay.done.wait()
            live = live_session(self, session_id)
        return await turns.prompt(self, live, prompt)

    async def cancel(self, session_id: str, **_: Any) -> None:
        live = self.live.get(session_id)
        if live is not None and live.replay is not None:
            live.replay.stopped = True  # a load's replay under way
        if live is not None and live.turn is not None:
            live.turn.cancel()
