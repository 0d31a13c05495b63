"""The refusals a code action's offers are asked: known ones answered at once, the plans
and undo checks still to make made in the session's lane, off the event loop.

Each offer is asked as its command would ask (`Refusals`): a compaction planned, an undo
checked. On a long session each plan walks the whole view, a tenth of a second for
100,000 messages, and a code action is asked at every cursor move (a message not asked
about yet is two more plans): on the loop, they held every other session's requests. The
service keeps the answers for the session as it is (`Compaction.keep`), so the same offers
asked again make nothing and answer at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from baton.lsp.session_document.code_actions import Refusals

if TYPE_CHECKING:
    from baton.core.service.compaction import Asked
    from baton.lsp.server import BatonServer

T = TypeVar("T")

Question = tuple[str | None, ...]


async def offered(ls: BatonServer, session_id: str, offer: Callable[[Refusals], T]) -> T:
    """`offer(refusals)`, each refusal it asks answered as the service answers it now.
    Offered once to learn the questions (answers still to make read as None); when some
    are, they are made together in one trip to the session's lane, and it is offered again
    with every answer (the same questions: `offer` depends on nothing else that moves)."""
    service = ls.service
    asked: dict[Question, Asked] = {}

    def ask(question: Question, make: Callable[[], Asked]) -> str | None:
        if question not in asked:
            asked[question] = make()
        return asked[question].answer

    learning = Refusals(
        compaction=lambda *a: ask(
            ("compaction", *a), lambda: service.compaction.ask_refusal(session_id, *a)
        ),
        undo=lambda b: ask(("undo", b), lambda: service.compaction.ask_undo_refusal(session_id, b)),
    )
    first = offer(learning)
    due = [(question, found) for question, found in asked.items() if found.work is not None]
    if not due:
        return first
    works = [found.work for _, found in due if found.work is not None]
    made = await service.in_lane(session_id, lambda: [work() for work in works])
    answers = {question: found.answer for question, found in asked.items()}
    for (question, found), answer in zip(due, made, strict=True):
        answers[question] = service.compaction.keep(found, answer)
    return offer(
        Refusals(
            compaction=lambda *a: answers[("compaction", *a)],
            undo=lambda b: answers[("undo", b)],
        )
    )
