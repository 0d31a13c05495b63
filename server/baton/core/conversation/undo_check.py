"""Whether one boundary's undo would be refused: every check `Session.uncompact` makes
before it writes, so that what a front end offers (an Undo action) is asked the same
question without writing anything."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.undo import Placed, placing, uncompacted
from baton.core.conversation.undo_ahead import Watched, broken_ahead
from baton.core.conversation.undo_order import held_since, kept_later
from baton.core.conversation.unrewind import undo_first, unrewind
from baton.core.conversation.view_state import ViewState
from baton.core.errors import InvalidParams

if TYPE_CHECKING:
    from baton.core.conversation.session import Session


@dataclass
class Checked:
    """An undo checked before its commit (off the event loop): at the session's `revision`
    (its `view` then), of boundary `target`, the view it gives (`after`), what it places
    (`undo.placing`'s, for a compaction's undo: a walk of every summary in force, the
    whole of a long imported session's, that the commit on the loop takes as it is) and the
    view's state, when built."""

    revision: int
    target: str
    view: list[str]
    after: list[str]
    placed: Placed | None = None
    state: ViewState | None = None  # built for a view whose messages are all there
    order: dict[str, int] | None = None  # `arrival()`


def checked(session: Session, target: str, watched: Watched | None = None) -> Checked:
    """`check_undo` of `target`, with what the commit would work out over the whole view
    (the state of the view it gives, its usage anchor, the messages' order), for a commit
    at the session's revision now; what it brings back stored without a count (an
    imported compaction's turns) is counted first. `watched` hears the steps of its
    longest part and may stop it there (`undo_ahead.Watched`)."""
    revision, view, messages = session.revision, session.view, session.messages
    back = session.boundaries[target].summarized_ids
    session.with_counts([messages[m] for m in back if m in messages])
    after, placed = check_placed(session, target, watched)
    if not all(m in messages for m in after):  # lost: the commit drops and reports them
        return Checked(revision, target, view, after, placed)
    state = ViewState(session.with_counts([messages[m] for m in after]))
    session.settle_anchor(after, state)
    return Checked(revision, target, view, after, placed, state, session.arrival())


def check_undo(session: Session, target: str) -> list[str]:
    """Raise `InvalidParams`, saying why and what to undo first, when undoing the active
    boundary `target` would be refused; when it would go through, the view it gives."""
    return check_placed(session, target)[0]


def check_placed(
    session: Session, target: str, watched: Watched | None = None
) -> tuple[list[str], Placed | None]:
    """`check_undo`'s view, and what the undo places (None for a rewind's); `watched`:
    as `checked`'s."""
    placed: Placed | None = None
    boundary = session.boundaries[target]
    others = [session.boundaries[b] for b in session.active if b != target]
    every = session.boundaries.values()
    if boundary.direction == "rewind":
        since = session.sent_since(target)
        first = undo_first(session.view, boundary, others, since, every)
        if first is not None:
            raise InvalidParams(f"undoing rewind {target} would {first}")
        stands_for = session.active_stands_for(besides=target)
        after = unrewind(session.view, boundary, stands_for, since, session.messages)
        why = "the turns sent since cannot follow the ones it took out; rewind them first"
    else:
        arrival = session.arrival()
        placed = placing(session.view, boundary, others, arrival, every)
        after = uncompacted(session.view, boundary, others, arrival, every, placed)
        holder = kept_later(session.view, boundary, others, arrival, every, after, placed)
        if holder is not None:
            raise InvalidParams(
                f"undoing compaction {target} would give rewind {holder} turns older than "
                "some it kept (in another summary): its undo would put them after those; "
                "undo that rewind first"
            )
        later = held_since(session.view, boundary, others, session.sent_since)
        if later is not None:
            raise InvalidParams(
                f"undoing compaction {target} would put back turns that compaction "
                f"{later}, made since a rewind kept its summary, summarized; undo that "
                "compaction first"
            )
        messages = session.messages
        ahead = broken_ahead(session.view, boundary, others, arrival, every, messages, watched)
        if ahead is not None:
            raise InvalidParams(
                f"undoing compaction {target} would leave the undo of compaction {ahead}, "
                "which holds it, breaking the API's rules; undo that compaction first"
            )
        why = _undo_first(session, target)
    messages = session.messages
    problems = invariant_violations([messages[m] for m in after if m in messages])
    if problems and not invariant_violations(session.view_messages()):
        kind = "rewind" if boundary.direction == "rewind" else "compaction"
        raise InvalidParams(
            f"undoing {kind} {target} would break the API's rules ({problems[0]}): {why}"
        )
    return after, placed


def undo_refusal(session: Session, target: str) -> str | None:
    """Why undoing the boundary `target` would be refused, or None."""
    if target not in session.active:
        return f"no active compaction {target!r} in this session"
    try:
        check_undo(session, target)
    except InvalidParams as exc:
        return exc.message
    return None


def _undo_first(session: Session, target: str) -> str:
    """What to undo before the compaction `target`, when what its undo gives breaks the
    API's rules: the latest boundary in force, whose undo always gives back the view as it
    was before it (undoing newest first retraces the steps); nothing, when `target` is it."""
    latest = session.active[-1]
    if latest == target:
        return "what it summarized cannot come back as it was sent"
    kind = "rewind" if session.boundaries[latest].direction == "rewind" else "compaction"
    return f"undo {kind} {latest}, the latest, first"
