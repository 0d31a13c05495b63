"""The client's notifications: the focused editor feeds the restore rules (files only)."""

from __future__ import annotations

from baton import protocol as p
from baton.lsp.features.common import Call, NotificationHandler
from baton.lsp.features.documents import is_file


def active_editor(call: Call, args: p.ActiveEditorParams) -> None:
    """`baton/activeEditor`: the focused editor feeds the restore rules (files only)."""
    uri = args.uri
    call.service.editor_files.focused(uri if uri and is_file(uri) else None)


NOTIFICATIONS: dict[str, NotificationHandler] = {p.ACTIVE_EDITOR: active_editor}
