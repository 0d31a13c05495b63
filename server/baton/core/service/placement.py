"""Where a session works: made in its folders (its reach) with Baton's default system
prompt for them unless it brings its own, and moved to others (an ACP session loaded in
another cwd): the prompt made again for those and recorded, what was allowed for the
session in the old folders asked again."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton.core.conversation.session import Session
from baton.core.service.runtime import Runtimes
from baton.core.turn.system_prompt import default_system_prompt, made_for_other_folders
from baton.core.usage.overhead import ClientContext, declare

if TYPE_CHECKING:
    from baton.core.service.service import BatonService


class Placement:
    """A session's folders and the default system prompt made for them."""

    def __init__(self, service: BatonService, runtimes: Runtimes) -> None:
        self._service = service
        self._runtimes = runtimes

    def create(
        self,
        title: str | None = None,
        system_prompt: str | None = None,
        model: str | None = None,
        client_context: ClientContext | None = None,
        folders: Sequence[Path] | None = None,
    ) -> Session:
        """`folders`: the session's own (its reach: `ToolSetup.folders_of`), else the
        client's workspace folders."""
        service = self._service
        declared_own = client_context is not None and bool(
            client_context.system_tokens or client_context.system  # its size, or its text
        )
        if system_prompt is None and not declared_own:  # none of its own: the default
            system_prompt = default_system_prompt(
                service.editor_name,
                service.workspace_folders if folders is None else folders,
                service.settings.system_prompt,
                service.settings.tools.enabled,
            )
        service.data_dir.look()  # what became of the folder since, told first
        session = service.store.create(title, model or service.settings.model, system_prompt)
        service.data_dir.settle()  # the folder it made again is no news
        service.tool_setup.set_session_folders(session.session_id, folders)
        declare(session, client_context, service.estimator)
        service.changes.changed(self._runtimes.opened(session), "create")
        return session

    def move(self, session_id: str, folders: Sequence[Path]) -> bool:
        """The session works in `folders` from now on: its reach, and, when its system
        prompt is Baton's default made for other folders, that prompt made again for
        these, recorded as a `meta` event (its header is never rewritten; a client's own
        prompt is left as it is). False, and the prompt left, for a session that cannot
        be written. The folders are recorded as a `meta` event's `folders` when they
        differ from the last recorded (its calls are shown where they ran). A kind of call
        allowed for the session in other folders is asked again: it was given for those."""
        service = self._service
        runtime = self._runtimes.of(session_id)
        before = service.tool_setup.folders_of(session_id)
        service.tool_setup.set_session_folders(session_id, folders)
        after = service.tool_setup.folders_of(session_id)
        if {os.path.realpath(p) for p in before} != {os.path.realpath(p) for p in after}:
            runtime.tools_allowed.clear()
        session = runtime.session
        fields: dict[str, Any] = {}
        named = [str(folder) for folder in folders]  # what its calls' paths are joined to
        if not session.folders_since or session.folders_since[-1][1] != named:
            fields["folders"] = named
        if made_for_other_folders(session.system_prompt, folders):
            fields["systemPrompt"] = default_system_prompt(
                service.editor_name,
                folders,
                service.settings.system_prompt,
                service.settings.tools.enabled,
            )
        if session.read_only:
            return "systemPrompt" not in fields
        if fields:
            session.set_meta(**fields)
        if "systemPrompt" in fields:
            service.changes.changed(runtime, "systemPrompt")
        return True
