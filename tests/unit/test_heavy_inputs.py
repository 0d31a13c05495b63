"""A huge append, a huge prompt sent and a huge draft are counted off the event loop
(issue 26): while the tokenizer counts a large message or draft (held here inside the
count, in whatever thread it runs), another session's requests are answered; the result
is the one counted where it was before. Checked by ordering, never by time."""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton import protocol as p
from baton.core.service import heavy
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage import block_tokens
from baton.core.usage.estimator import Estimator
from baton.lsp.features import sessions
from baton.lsp.features.common import Call
from baton.lsp.server import BatonServer, create_server
from baton_testkit.fake_anthropic import FakeAnthropic

WAIT = 20.0  # an upper bound, never a pause
HUGE = "lorem ipsum dolor sit amet " * 10_000  # 270 KB, past heavy.OFF_LOOP_CHARS
# a PDF of 2 MB of base64 (its pages are read from all of it), with a few words
PDF = base64.b64encode(b"%PDF-1.4\n" + b"/Type /Page\n" * 3 + bytes(1_500_000)).decode()


class Held:
    """Holds every count of a huge text (or a PDF's pages) until released, noting the
    thread it ran in."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.threads: list[int] = []

    def hold(self) -> None:
        self.threads.append(threading.get_ident())
        self.entered.set()
        self.release.wait(WAIT)  # bounded: on the event loop this holds everything


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[Held]:
    gate = Held()
    original = Estimator.count_text

    def count_text(self: Estimator, text: str) -> int:
        if len(text) >= heavy.OFF_LOOP_CHARS:
            gate.hold()
        return original(self, text)

    monkeypatch.setattr(Estimator, "count_text", count_text)
    yield gate
    gate.release.set()


@pytest.fixture
def held_pdf(monkeypatch: pytest.MonkeyPatch) -> Iterator[Held]:
    """Holds every read of a PDF's pages (all of its base64 decoded) until released."""
    gate = Held()
    original = block_tokens.pdf_pages

    def pdf_pages(data: str) -> int:
        gate.hold()
        return original(data)

    monkeypatch.setattr(block_tokens, "pdf_pages", pdf_pages)
    yield gate
    gate.release.set()


@pytest.fixture
def server(tmp_path: Path) -> BatonServer:
    settings = Settings.model_validate(
        {"dataDir": str(tmp_path), "autoCompact": {"enabled": False}}
    )
    return create_server(BatonService(settings, estimator=Estimator()))


async def _session(call: Call, title: str) -> str:
    sid = (await sessions.create(call, p.CreateParams(title=title))).session_id
    turns = [
        p.MessageInput(role="user", content="hi"),
        p.MessageInput(role="assistant", content="hello"),
    ]
    await sessions.append(call, p.AppendParams(session_id=sid, messages=turns))
    return sid


async def _meanwhile(call: Call, gate: Held, work: Any, other: str) -> Any:
    running = asyncio.ensure_future(work)
    assert await asyncio.to_thread(gate.entered.wait, WAIT)
    assert gate.threads[0] != threading.get_ident()  # not the event loop's thread
    usage = await sessions.usage(call, p.UsageParams(session_id=other))
    assert usage.used_tokens > 0 and not running.done()
    gate.release.set()
    return await asyncio.wait_for(running, WAIT)


async def test_a_huge_append_is_counted_off_the_loop(server: BatonServer, held: Held) -> None:
    call = Call(server)
    busy, other = await _session(call, "busy"), await _session(call, "other")
    message = p.MessageInput(role="user", content=HUGE)
    work = sessions.append(call, p.AppendParams(session_id=busy, messages=[message]))
    done = await _meanwhile(call, held, work, other)
    stored = call.service.session(busy).get(done.message_ids[0])
    assert stored.tokens == Estimator().count_message(stored) > 10_000
    assert done.usage.used_tokens > stored.tokens


async def test_a_huge_draft_is_counted_off_the_loop(server: BatonServer, held: Held) -> None:
    call = Call(server)
    busy, other = await _session(call, "busy"), await _session(call, "other")
    params = p.UsageParams(session_id=busy, draft=p.Draft(text=HUGE))
    shown = await _meanwhile(call, held, sessions.usage(call, params), other)
    plain = await sessions.usage(call, p.UsageParams(session_id=busy))
    assert shown.draft is not None and shown.draft.tokens > 10_000
    assert shown.used_tokens == plain.used_tokens + shown.draft.tokens


def _with_pdf(text: str) -> list[dict[str, Any]]:
    source = {"type": "base64", "media_type": "application/pdf", "data": PDF}
    return [{"type": "document", "source": source}, {"type": "text", "text": text}]


async def test_a_draft_with_a_large_pdf_is_counted_off_the_loop(
    server: BatonServer, held_pdf: Held
) -> None:
    """A draft of a few words with a PDF attached was counted on the event loop (only
    its text was weighed), each of its pages found by decoding all of its base64, twice:
    a draft of a 20 MB PDF held every other session's request some 90-170 ms at each
    weighing of the draft."""
    call = Call(server)
    busy, other = await _session(call, "busy"), await _session(call, "other")
    draft = p.Draft.model_validate({"text": "read this", "attachments": _with_pdf("it")[:1]})
    params = p.UsageParams(session_id=busy, draft=draft)
    shown = await _meanwhile(call, held_pdf, sessions.usage(call, params), other)
    plain = await sessions.usage(call, p.UsageParams(session_id=busy))
    assert shown.draft is not None and shown.draft.tokens > 3 * 1_000
    assert shown.used_tokens == plain.used_tokens + shown.draft.tokens


async def test_an_append_of_a_large_pdf_is_counted_off_the_loop(
    server: BatonServer, held_pdf: Held
) -> None:
    call = Call(server)
    busy, other = await _session(call, "busy"), await _session(call, "other")
    message = p.MessageInput.model_validate({"role": "user", "content": _with_pdf("read it")})
    work = sessions.append(call, p.AppendParams(session_id=busy, messages=[message]))
    done = await _meanwhile(call, held_pdf, work, other)
    stored = call.service.session(busy).get(done.message_ids[0])
    assert stored.tokens == Estimator().count_message(stored) > 3 * 1_000


async def test_small_inputs_are_counted_where_they_are(server: BatonServer) -> None:
    call = Call(server)
    sid = await _session(call, "small")
    inputs = [p.MessageInput(role="user", content="a short one")]
    assert await heavy.counted_messages(call.service.session(sid), inputs) is inputs
    assert await heavy.counted_draft(p.Draft(text="short"), call.service.estimator) is None


async def test_a_huge_prompt_sent_is_counted_off_the_loop(
    tmp_path: Path, held: Held, fake_anthropic: FakeAnthropic
) -> None:
    """A send's prompt was counted on the event loop as it was stored: a prompt of 20 MB
    pasted in an agent panel held every other session (their replies' streams, a cancel,
    the meter) for seconds."""
    settings = Settings.model_validate(
        {"dataDir": str(tmp_path), "autoCompact": {"enabled": False}}
    )
    service = BatonService(settings, api_key="sk-ant-test-heavy-0000", estimator=Estimator())
    server = create_server(service)
    call = Call(server)
    busy, other = await _session(call, "busy"), await _session(call, "other")
    fake_anthropic.reply("Read it.")
    done = await _meanwhile(call, held, service.replies.send(busy, HUGE), other)
    assert done.message.text() == "Read it."
    [prompt] = [m for m in service.session(busy).view_messages() if m.text() == HUGE]
    assert prompt.tokens == Estimator().count_message(prompt) > 10_000
    await service.close()
