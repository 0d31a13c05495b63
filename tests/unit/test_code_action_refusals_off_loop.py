"""The refusals a code action's offers are asked (a compaction planned as its command
would plan it, an undo checked) are made in the session's lane, off the event loop: on a
long session each plan is a walk of the whole view, and a code action is asked at every
cursor move. While they are held there, every other session's requests are answered. The
answers are kept for the session as it is: the same offers asked again make no plan, no
check and no trip to the lane; a session changed while they were made is asked again.
Checked by ordering, by counting and by which thread made the work, never by timings."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from code_action_client import taking_code_actions
from lsprotocol import types
from test_document_render_off_loop import RenderGate
from test_off_loop import WAIT, turns

from baton import protocol as p
from baton.core.service import compaction as compaction_service
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features import compaction, sessions
from baton.lsp.features import documents as document_features
from baton.lsp.features.common import Call
from baton.lsp.server import BatonServer, create_server


class Counted(RenderGate):
    """A `RenderGate` that also counts the calls it watches."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def hold(self) -> None:
        self.calls += 1
        super().hold()


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counted]:
    """Holds, once armed, the plans and undo checks the compaction service makes for a
    refusal (in the thread they run in; one made on the event loop is noted)."""
    held = Counted()
    plan, undo = compaction_service.plan_compaction, compaction_service.undo_refusal

    def planned(*args: Any, **kwargs: Any) -> Any:
        held.hold()
        return plan(*args, **kwargs)

    def checked(*args: Any, **kwargs: Any) -> Any:
        held.hold()
        return undo(*args, **kwargs)

    monkeypatch.setattr(compaction_service, "plan_compaction", planned)
    monkeypatch.setattr(compaction_service, "undo_refusal", checked)
    yield held
    held.release.set()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[BatonServer]:
    settings = Settings.model_validate(
        {"dataDir": str(tmp_path), "summarizer": "extractive", "autoCompact": {"enabled": False}}
    )
    yield taking_code_actions(create_server(BatonService(settings)))


async def _sessions(call: Call) -> tuple[str, str]:
    """A session compacted up to its second message (an undo is offered), and another."""
    ids = []
    for title in ("held", "other"):
        sid = (await sessions.create(call, p.CreateParams(title=title))).session_id
        added = await sessions.append(call, p.AppendParams(session_id=sid, messages=turns(20, 50)))
        ids.append((sid, added.message_ids))
    (held, messages), (other, _) = ids
    params = p.CompactParams(session_id=held, direction="up_to", pivot_message_id=messages[1])
    await compaction.compact(call, params)
    return held, other


async def _on_a_message(call: Call, session_id: str, index: int) -> types.CodeActionParams:
    """A code action's params on the heading line of the view's message `index`."""
    rendered = await sessions.render(call, p.PageParams(session_id=session_id))
    line = rendered.messages[index].range.start.line
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=p.session_uri(session_id)),
        range=types.Range(start=types.Position(line, 0), end=types.Position(line, 0)),
        context=types.CodeActionContext(diagnostics=[]),
    )


def _offered(actions: Any) -> list[tuple[str, str | None]]:
    return [(a.title, a.disabled.reason if a.disabled else None) for a in actions]


async def test_a_code_actions_plans_and_undo_check_are_made_off_the_loop(
    server: BatonServer, gate: Counted
) -> None:
    call = Call(server)
    held, other = await _sessions(call)
    params = await _on_a_message(call, held, 4)
    gate.armed = True
    asking = asyncio.ensure_future(document_features.code_action(server, params))
    assert await gate.wait_entered()
    assert not gate.on_loop
    usage = await sessions.usage(call, p.UsageParams(session_id=other))
    view = await sessions.get(call, p.PageParams(session_id=other))
    assert usage.used_tokens > 0 and len(view.messages) == 40
    assert not asking.done()  # still planning meanwhile
    gate.release.set()
    actions = await asyncio.wait_for(asking, WAIT)
    assert not gate.on_loop
    assert {threading.main_thread().ident} & set(gate.threads) == set()
    assert [title for title, _ in _offered(actions)] == [
        "Compact conversation",
        "Compact up to here",
        "Compact from here",
        "Undo last compaction",
    ]


async def test_the_same_offers_asked_again_are_answered_at_once_as_before(
    server: BatonServer, gate: Counted, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = Call(server)
    held, _ = await _sessions(call)
    params = await _on_a_message(call, held, 4)
    trips = []
    in_lane = server.service.in_lane

    async def counted(session_id: str, work: Any) -> Any:
        trips.append(session_id)
        return await in_lane(session_id, work)

    monkeypatch.setattr(server.service, "in_lane", counted)
    first = _offered(await document_features.code_action(server, params))
    made, went = gate.calls, len(trips)
    assert made == 4 and went == 1  # three plans and the undo check, in one trip
    again = _offered(await document_features.code_action(server, params))
    assert again == first
    assert (gate.calls, len(trips)) == (made, went)  # nothing made again, no trip


async def test_answers_made_while_the_session_changed_are_not_kept_for_it(
    server: BatonServer,
) -> None:
    call = Call(server)
    held, _ = await _sessions(call)
    service = server.service.compaction
    asked = service.ask_refusal(held, "all", None, None)
    assert asked.work is not None  # a plan to make
    await sessions.append(call, p.AppendParams(session_id=held, messages=turns(1, 50)))
    now = service.ask_refusal(held, "all", None, None)  # the same question, asked again
    assert now.work is not None
    assert service.keep(asked, "made before the change") == "made before the change"
    assert service.ask_refusal(held, "all", None, None).work is not None  # not kept
    assert service.keep(now, None) is None
    kept = service.ask_refusal(held, "all", None, None)
    assert (kept.work, kept.answer) == (None, None)  # kept: answered at once
