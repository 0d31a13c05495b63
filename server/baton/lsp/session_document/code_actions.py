"""Compact actions offered on a session document for the message(s) under a range."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types

from baton.contract import names

if TYPE_CHECKING:
    from baton.contract.params import Params
    from baton.lsp.session_document.render import RenderedSession

WHOLE_KIND = types.CodeActionKind.Source
PIVOT_KIND = types.CodeActionKind.RefactorRewrite
KINDS = [WHOLE_KIND, PIVOT_KIND]


def _action(title: str, kind: str, command: str, args: Params) -> types.CodeAction:
    """An action whose command carries its argument model's wire form (the table's model)."""
    return types.CodeAction(
        title=title,
        kind=kind,
        command=types.Command(title=title, command=command, arguments=[args.wire()]),
    )


def selected_lines(selection: types.Range) -> tuple[int, int]:
    """First and last line a selection really covers: a selection that ends at column 0 of
    a line (a whole-line selection) does not include that line."""
    first, last = selection.start.line, selection.end.line
    if last > first and selection.end.character == 0:
        last -= 1
    return first, max(first, last)


def compact_actions(
    session_id: str,
    rendered: RenderedSession,
    selection: types.Range | None,
    last_boundary_id: str | None,
    only: Sequence[str] | None = None,
    locked: str | None = None,
) -> list[types.CodeAction]:
    """The actions on `selection` (None: a range that names no message of `rendered`);
    each disabled with `locked`, the reason a change would be refused, when there is one."""
    # the models load at the first call: KINDS is read while `initialize` is answered
    from baton.contract.params import (
        CompactCommandArgs,
        PivotCommandArgs,
        RangeCommandArgs,
        UncompactParams,
    )

    sections = (
        rendered.sections_between(*selected_lines(selection)) if selection is not None else []
    )
    whole = CompactCommandArgs(session_id=session_id)
    actions = [_action("Compact conversation", WHOLE_KIND, names.CMD_COMPACT, whole)]
    if len(sections) == 1:
        target = PivotCommandArgs(session_id=session_id, pivot_message_id=sections[0].message_id)
        actions.append(_action("Compact up to here", PIVOT_KIND, names.CMD_COMPACT_UP_TO, target))
        actions.append(_action("Compact from here", PIVOT_KIND, names.CMD_COMPACT_FROM, target))
    elif len(sections) > 1:
        span = RangeCommandArgs(
            session_id=session_id,
            pivot_message_id=sections[0].message_id,
            end_message_id=sections[-1].message_id,
        )
        actions.append(
            _action("Compact selected messages", PIVOT_KIND, names.CMD_COMPACT_RANGE, span)
        )
    if last_boundary_id is not None:
        undo = UncompactParams(session_id=session_id, boundary_id=last_boundary_id)
        actions.append(_action("Undo last compaction", WHOLE_KIND, names.CMD_UNCOMPACT, undo))
    if only:
        actions = [a for a in actions if _kind_matches(kind_name(a.kind), only)]
    if locked is not None:
        for action in actions:
            action.disabled = types.CodeActionDisabled(reason=locked)
    return actions


def kind_name(kind: object) -> str:
    """A kind as the wire spells it (lsprotocol's kinds are enums, a client's may be str)."""
    return str(getattr(kind, "value", kind))


def _kind_matches(kind: str, only: Sequence[str]) -> bool:
    """LSP kinds are hierarchical: `refactor` asks for `refactor.rewrite` too."""
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)
