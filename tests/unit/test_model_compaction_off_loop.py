"""A compaction whose summary the model writes runs its CPU work off the event loop too:
the span's facts are gathered, and what the summary kept and dropped is checked, in a
worker thread, while the request to the model waits on the server's loop (its client is
bound to it). On a session holding one 50 MB message, gathering its facts held every
other session's requests 1.2-1.4 s at the compaction's start, and the checks some 0.5 s
at its end. Checked by ordering: the other session is answered while the gathering is
held."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from test_off_loop import WAIT, Gate, turns

from baton import protocol as p
from baton.core.compaction import dropped as dropped_module
from baton.core.compaction.retention import span_facts
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features import compaction, sessions
from baton.lsp.features.common import Call
from baton.lsp.server import create_server
from baton_testkit.fake_anthropic import FakeAnthropic


async def test_a_model_written_compaction_gathers_and_checks_off_the_loop(
    tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate()
    original = span_facts.SpanFacts.extract.__func__  # type: ignore[attr-defined]

    def extract(cls: Any, *args: Any, **kwargs: Any) -> Any:
        gate.hold()
        return original(cls, *args, **kwargs)

    checked_on: set[int] = set()
    found_in = dropped_module.found_in

    def found(*args: Any) -> bool:
        checked_on.add(threading.get_ident())
        return found_in(*args)

    monkeypatch.setattr(span_facts.SpanFacts, "extract", classmethod(extract))
    monkeypatch.setattr(dropped_module, "found_in", found)
    fake_anthropic.reply("<summary>The questions were asked and answered.</summary>")
    settings = Settings.model_validate({"dataDir": str(tmp_path), "summarizer": "anthropic"})
    service = BatonService(settings, api_key="sk-ant-test-model-off-loop-0000")
    call = Call(create_server(service))
    ids = []
    for title in ("held", "other"):
        sid = (await sessions.create(call, p.CreateParams(title=title))).session_id
        await sessions.append(call, p.AppendParams(session_id=sid, messages=turns(6)))
        ids.append(sid)
    held, other = ids
    pivot = call.service.session(held).view_messages()[-3].id
    params = p.CompactParams(session_id=held, direction="up_to", pivot_message_id=pivot)
    try:
        running = asyncio.ensure_future(compaction.compact(call, params))
        assert await gate.wait_entered()
        assert gate.threads[0] != threading.get_ident()  # not the event loop's thread
        usage = await sessions.usage(call, p.UsageParams(session_id=other))
        appended = await sessions.append(call, p.AppendParams(session_id=other, messages=turns(1)))
        view = await sessions.get(call, p.PageParams(session_id=other))
        assert not running.done() and not fake_anthropic.message_requests()
        assert usage.used_tokens > 0 and len(appended.message_ids) == 2
        assert len(view.messages) == 14
        gate.release.set()
        result = await asyncio.wait_for(running, WAIT)
    finally:
        gate.release.set()
        await service.close()
    assert result.summarizer == "anthropic" and len(result.summarized_message_ids) == 10
    assert len(fake_anthropic.message_requests()) == 1
    assert result.dropped is not None and result.dropped.messages_summarized == 10
    assert checked_on and threading.get_ident() not in checked_on
