"""Compact actions offered on a session document for the message(s) under a range."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from baton.contract import names

if TYPE_CHECKING:
    from baton.contract.params import Params
    from baton.lsp.session_document.render import RenderedSession

WHOLE_KIND = types.CodeActionKind.Source
PIVOT_KIND = types.CodeActionKind.RefactorRewrite
KINDS = [WHOLE_KIND, PIVOT_KIND]


@dataclass(frozen=True)
class Refusals:
    """Why a command of one session would be refused now, or None: a compaction (its
    direction, pivot and end message ids), an undo (its boundary id)."""

    compaction: Callable[[str, str | None, str | None], str | None]
    undo: Callable[[str], str | None]


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
    refusals: Refusals | None = None,
    last_direction: str | None = None,
    media: tuple[str, str] | None = None,
) -> list[types.CodeAction]:
    """The actions on `selection` (None: a range that names no message of `rendered`);
    each disabled with `locked`, the reason any change would be refused, when there is
    one, else with the reason `refusals` gives for its own command (nothing to summarize
    there, an undo that must wait for another). `last_direction`: the direction of the
    latest boundary in force, which the undo's title names (a rewind is undone too).
    `media`: while the request is over the API's 32 MB, the last message holding an image
    or a document and what they are ("7 images"): the compaction up to it, offered
    wherever the selection is, is the usage diagnostic's way out."""
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
    actions: list[types.CodeAction] = []

    def offer(
        title: str, kind: str, command: str, args: Params, why: Callable[[Refusals], str | None]
    ) -> None:
        if only and not _kind_matches(kind_name(kind), only):
            return
        action = _action(title, kind, command, args)
        reason = locked if locked is not None or refusals is None else why(refusals)
        if reason is not None:
            action.disabled = types.CodeActionDisabled(reason=reason)
        actions.append(action)

    whole = CompactCommandArgs(session_id=session_id)
    offer(
        "Compact conversation",
        WHOLE_KIND,
        names.CMD_COMPACT,
        whole,
        lambda r: r.compaction("all", None, None),
    )
    if media is not None:
        held_by, held = media
        offer(
            f"Compact up to the last of the {held} (the request is over 32 MB)",
            PIVOT_KIND,
            names.CMD_COMPACT_UP_TO,
            PivotCommandArgs(session_id=session_id, pivot_message_id=held_by),
            lambda r: r.compaction("up_to", held_by, None),
        )
    if len(sections) == 1:
        pivot = sections[0].message_id
        target = PivotCommandArgs(session_id=session_id, pivot_message_id=pivot)
        offer(
            "Compact up to here",
            PIVOT_KIND,
            names.CMD_COMPACT_UP_TO,
            target,
            lambda r: r.compaction("up_to", pivot, None),
        )
        offer(
            "Compact from here",
            PIVOT_KIND,
            names.CMD_COMPACT_FROM,
            target,
            lambda r: r.compaction("from", pivot, None),
        )
    elif len(sections) > 1:
        first, last = sections[0].message_id, sections[-1].message_id
        span = RangeCommandArgs(session_id=session_id, pivot_message_id=first, end_message_id=last)
        offer(
            "Compact selected messages",
            PIVOT_KIND,
            names.CMD_COMPACT_RANGE,
            span,
            lambda r: r.compaction("range", first, last),
        )
    if last_boundary_id is not None:
        boundary_id = last_boundary_id
        undo = UncompactParams(session_id=session_id, boundary_id=boundary_id)
        offer(
            UNDO_TITLES.get(last_direction or "", "Undo last compaction"),
            WHOLE_KIND,
            names.CMD_UNCOMPACT,
            undo,
            lambda r: r.undo(boundary_id),
        )
    return actions


# what the undo puts back, by the latest boundary's direction (a compaction otherwise)
UNDO_TITLES = {
    "rewind": "Undo last rewind",
    "microcompact": "Undo last microcompaction",
}


def kind_name(kind: object) -> str:
    """A kind as the wire spells it (lsprotocol's kinds are enums, a client's may be str)."""
    return str(getattr(kind, "value", kind))


def _kind_matches(kind: str, only: Sequence[str]) -> bool:
    """LSP kinds are hierarchical: `refactor` asks for `refactor.rewrite` too."""
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)
