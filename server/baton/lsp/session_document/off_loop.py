"""A session document rendered off the event loop: in the session's lane (after its other
heavy work, another render among it, whose rendering it then finds made), with the
cyclic collector kept out of what the render makes.

Every render goes this way: the render request's, and those the diagnostics, a code
action or a hover need. After a change that reshapes the document (a compaction, an
undo, a rewind) the whole of it is rendered again: on the event loop that held every
other session's requests, 0.4-0.5 s for a session holding a 50 MB message and some 5 s
for one of 100,000 messages. A rendering made for the current version is used as it is,
without a trip to a thread (`SessionDocuments.current`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from baton.core.memory import collector_paused, freeze_made

if TYPE_CHECKING:
    from baton.core.service.results import RenderData
    from baton.lsp.server import BatonServer
    from baton.lsp.session_document.render import RenderedSession

T = TypeVar("T")

LONG_DOCUMENT = 1_000  # messages a document holds past which what its render made is frozen


def made_paused(make: Callable[[], tuple[T, int]]) -> T:
    """What `make()` returns (with the number of pieces of the document it rendered), made
    with the cyclic collector out and, for a long document, frozen out of its walks after,
    as a load's is. What a long session's render makes (a piece a message, which its
    document keeps, and an answer's ranges) set off full collections that walked all of
    it, young, holding every other session (a 100,000-message render: another session's
    usage 0.43 s at the 95th percentile, 0.08-0.15 s with the collector out)."""
    with collector_paused():
        result, pieces = make()
        if pieces > LONG_DOCUMENT:
            freeze_made()
        return result


def render_paused(
    render: Callable[[], tuple[RenderedSession, RenderData, int]],
) -> tuple[RenderedSession, RenderData, int]:
    """`render()` (a `SessionDocuments.render`) made as `made_paused` makes its work."""

    def counted() -> tuple[tuple[RenderedSession, RenderData, int], int]:
        found = render()
        return found, len(found[0].pieces)

    return made_paused(counted)


async def rendered(ls: BatonServer, session_id: str) -> tuple[RenderedSession, RenderData, int]:
    """The session's document as it is now, with the data it shows and its version (for a
    code action or a hover): the version's rendering at once when it is made, else
    rendered in the session's lane."""
    documents = ls.documents
    found = documents.current(session_id)
    if found is not None:
        return found
    return await ls.service.in_lane(
        session_id, lambda: render_paused(lambda: documents.render(session_id))
    )
