"""A turn's workspace reach: the folders, the tools offered on them, the attachments sent.

The tools themselves (the workspace, its file walk and ignore rules, the registry, the tool
loop) are imported by the turn that first offers them or sends an attachment: a server
that only opens, counts and compacts sessions never holds them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from baton.core.conversation.messages import Message
from baton.core.service.runtime import SessionRuntime
from baton.core.settings import Settings
from baton.core.workspace.editor_files import EditorFiles, path_problem, path_to_uri, uri_to_path

if TYPE_CHECKING:
    from baton.core.tools.attachments import EditorAttachment
    from baton.core.tools.host import ToolHost
    from baton.core.turn.tool_loop import ServerTools


class ToolSetup:
    """The workspace folders the client named, and what a `send` reaches inside them.

    `settings` is asked each time (a `configure` replaces the service's settings). The
    files a session's tools and attachments touch are not the editor's: a compaction reads
    them from the session's messages (working_set/session_files.py).
    """

    def __init__(self, settings: Callable[[], Settings], editor_files: EditorFiles) -> None:
        self._settings = settings
        self._editor_files = editor_files
        self.folders: list[Path] = []
        # a session's own folders (an ACP session's cwd): its reach in place of every
        # folder the client has open, which another session's project is one of
        self._own: dict[str, list[Path]] = {}

    def set_folders(self, uris: Sequence[str]) -> None:
        paths = [p for p in map(uri_to_path, uris) if p is not None]
        self.folders = [p for p in paths if path_problem(p) is None]

    def set_session_folders(self, session_id: str, folders: Sequence[Path] | None) -> None:
        """The folders `session_id` works in (None: the client's, as every session's)."""
        if folders is None:
            self._own.pop(session_id, None)
        else:
            self._own[session_id] = [p for p in folders if path_problem(p) is None]

    def folders_of(self, session_id: str | None) -> list[Path]:
        """What a compaction of the session reads: its own folders, else the client's."""
        if session_id is not None and session_id in self._own:
            return list(self._own[session_id])
        return list(self.folders)

    def open_document(self, path: Path) -> tuple[str, int | None] | None:
        """The text and version of `path` as the editor has it open, or None."""
        tracked = self._editor_files.get(path_to_uri(path))
        if tracked is None or not tracked.is_open or tracked.text is None:
            return None
        return tracked.text, tracked.version

    def open_documents(self) -> list[tuple[Path, str]]:
        """Every file the editor has open, with its text (unsaved changes included)."""
        return [
            (f.path, f.text)
            for f in self._editor_files.recent()
            if f.is_open and f.text is not None
        ]

    def review_edits(self) -> bool:
        """Whether the editor asks before it applies a tool's edit (`tools.reviewEdits`)."""
        return self._settings().tools.review_edits

    async def attachments(
        self, items: Sequence[EditorAttachment], host: ToolHost | None
    ) -> list[Message]:
        if not items:
            return []
        from baton.core.tools.attachments import attachment_messages
        from baton.core.tools.workspace import Workspace

        workspace = Workspace(list(self.folders), self._settings().restore.exclude)
        return await attachment_messages(items, workspace, host)

    def server_tools(self, runtime: SessionRuntime, host: ToolHost | None) -> ServerTools | None:
        current = self._settings()
        settings = current.tools
        folders = getattr(host, "folders", None) or self.folders  # the host's own
        if host is None or not settings.enabled or not folders:
            return None
        from baton.core.tools.catalog import workspace_registry
        from baton.core.tools.registry import ToolContext
        from baton.core.tools.workspace import Workspace
        from baton.core.turn import todo_tool
        from baton.core.turn.tool_loop import ServerTools

        model = runtime.session.model or current.model
        workspace = Workspace(list(folders), current.restore.exclude)

        session = runtime.session
        # the files its tools read or edit are the session's own (compaction reads them
        # from its messages: working_set/session_files.py), never the editor's
        context = ToolContext(session.session_id, workspace, host, settings)
        context.messages = session.held_messages
        registry = workspace_registry(model).register(todo_tool.TOOL)
        return ServerTools(
            registry,
            context,
            runtime.tools_allowed,
            settings.max_steps,
            on_call=getattr(host, "call_started", None),
            on_result=getattr(host, "call_finished", None),
        )
