"""The session document rendered piece by piece, as changes arrive, is the document
rendered whole: the same text, versions, ranges and diagnostics a client sees."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conversations import summary_boundary

from baton.core.conversation.messages import (
    ApiUsage,
    Message,
    MessageInput,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton.lsp.session_document import publisher
from baton.lsp.session_document.diagnostics import build_diagnostics, unpaired_tool_calls
from baton.lsp.session_document.publisher import SessionDocuments
from baton.lsp.session_document.render import RenderedSession, render_session


class FakeServer:
    """What SessionDocuments reads of the language server."""

    def __init__(self, service: BatonService, encoding: str) -> None:
        self.service = service
        self.position_encoding = encoding


@pytest.fixture
def service(tmp_path: Path, estimator: Estimator) -> Iterator[BatonService]:
    baton = BatonService(Settings(data_dir=str(tmp_path)), estimator=estimator)
    yield baton
    baton.store.close()


def turn(service: BatonService, sid: str, n: int, *, answered: bool = True) -> None:
    call = ToolUseBlock(id=f"t{n}", name="Bash", input={"command": f"ls {n}", "deep": {"a": [1]}})
    reply: list[Any] = [ThinkingBlock(thinking=f"think {n}\nmore", signature="s"), call]
    service.append(
        sid,
        [
            MessageInput(role="user", content=f"prompt {n} with ```` fences\nand 😀 lines"),
            MessageInput(
                role="assistant",
                content=reply,
                api_message_id=f"r{n}",
                usage=ApiUsage(input_tokens=2000 + n),
            ),
        ],
    )
    if answered:
        result = ToolResultBlock(tool_use_id=f"t{n}", content="out ``` put\n" * 3)
        service.append(sid, [MessageInput(role="user", content=[result])])


def whole(service: BatonService, sid: str, encoding: str) -> RenderedSession:
    session = service.session(sid)
    return render_session(session.title, sid, session.model, session.view_messages(), encoding)


def same(kept: RenderedSession, full: RenderedSession) -> None:
    assert kept.text == full.text
    assert kept.ranges() == full.ranges()
    assert kept.sections == full.sections
    lines = full.text.split("\n")
    for section in kept.sections:  # headings' widths, as diagnostics and hovers use them
        assert (
            section.heading_character == len(lines[section.start_line].encode("utf-16-le")) // 2
            or kept.encoding != "utf-16"
        )


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_a_document_kept_across_appends_compaction_undo_and_pins_is_the_whole_rendering(
    service: BatonService, encoding: str
) -> None:
    documents = SessionDocuments(FakeServer(service, encoding))  # type: ignore[arg-type]
    service.on_session_changed = documents.bump
    sid = service.create("A title").session_id
    versions = []
    for n in range(4):
        turn(service, sid, n)
        rendered, _, version = documents.render(sid)
        same(rendered, whole(service, sid, encoding))
        versions.append(version)
    assert versions == sorted(set(versions))  # a new version per rendering after changes
    session = service.session(sid)
    summarized = list(session.view[:4])
    boundary = summary_boundary(session, summarized, "so far")
    session.commit_boundary(boundary)
    documents.bump(sid, "compact")
    same(documents.render(sid)[0], whole(service, sid, encoding))
    turn(service, sid, 5)
    same(documents.render(sid)[0], whole(service, sid, encoding))
    service.pin(sid, session.view[-2], True)
    same(documents.render(sid)[0], whole(service, sid, encoding))
    turn(service, sid, 6)
    service.pin(sid, session.view[1], True)  # a pin and an append between two renderings
    turn(service, sid, 7)
    same(documents.render(sid)[0], whole(service, sid, encoding))
    service.compaction.uncompact(sid)
    same(documents.render(sid)[0], whole(service, sid, encoding))
    turn(service, sid, 8, answered=False)
    rendered, _, version = documents.render(sid)
    same(rendered, whole(service, sid, encoding))
    assert documents.render(sid)[0] is rendered  # unchanged: the same rendering again
    assert documents.render(sid)[2] == version


def test_a_later_rendering_leaves_an_earlier_one_as_it_was(service: BatonService) -> None:
    sid = service.create().session_id
    turn(service, sid, 1)
    session = service.session(sid)
    first = render_session("t", sid, "m", session.view_messages())
    text, sections = first.text, list(first.sections)
    turn(service, sid, 2)
    render_session("t", sid, "m", session.view_messages(), previous=first, grown=True)
    assert first.text == text and first.sections == sections


def test_a_pieces_text_is_made_when_first_read_and_reads_as_it_was_rendered(
    service: BatonService,
) -> None:
    """Pieces keep counts only until a client reads the document; a text read later is the
    one of the moment of rendering, even after a pin changed a message in place."""
    sid = service.create().session_id
    turn(service, sid, 1)
    turn(service, sid, 2)
    session = service.session(sid)
    first = render_session("t", sid, "m", session.view_messages())
    expected = render_session("t", sid, "m", session.view_messages()).text
    assert all(piece._text is None for piece in first.pieces)  # nothing read yet

    service.pin(sid, session.view[0], True)  # in place, on a message `first` rendered
    turn(service, sid, 3)
    later = render_session("t", sid, "m", session.view_messages(), previous=first, grown=False)

    assert first.text == expected
    assert all(piece._text is not None for piece in first.pieces)  # kept once read
    assert "pinned" in later.text.split("\n")[later.sections[0].start_line]
    assert later.text == render_session("t", sid, "m", session.view_messages()).text


def test_diagnostics_from_kept_state_are_those_found_in_the_messages(
    service: BatonService, tmp_path: Path
) -> None:
    """An imported or hand-written transcript may hold unpaired calls (appends refuse them)."""
    call = ToolUseBlock(id="lost", name="Bash", input={})
    written = [
        Message(id="p1", role="user", content=[TextBlock(text="word " * 60_000)]),
        Message(id="a1", role="assistant", content=[call], api_message_id="r1"),
        Message(id="p2", role="user", content=[TextBlock(text="never mind")]),
        Message(id="x1", role="user", content=[ToolResultBlock(tool_use_id="nobody")]),
    ]
    for message in written:
        message.tokens = service.estimator.count_message(message)
    header = {"type": "session", "format": 1, "sessionId": "s_hand", "createdAt": "2026-01-01"}
    lines = [header, *({"type": "message", "message": m.wire()} for m in written)]
    path = tmp_path / "sessions" / "s_hand.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = service.session("s_hand")
    session.unpaired_tool_calls()  # kept from here on, as appends arrive
    turn(service, "s_hand", 2, answered=False)  # the trailing turn's call: about to be answered
    messages = session.view_messages()
    rendered = render_session("t", "s_hand", "m", messages)
    usage = service.usage("s_hand")

    kept = build_diagnostics(rendered, messages, usage, unpaired=session.unpaired_tool_calls())

    assert kept == build_diagnostics(rendered, messages, usage)
    assert session.unpaired_tool_calls() == unpaired_tool_calls(messages)
    assert [d.code for d in kept] == [
        "context-usage",
        "large-message",
        "unpaired-tool-call",
        "unpaired-tool-call",
    ]


def test_a_change_made_while_the_document_renders_gets_a_rendering_of_its_own(
    service: BatonService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`baton/session/render` renders in a worker thread while the loop goes on changing the
    session: a pin that landed meanwhile moved the version on, and the rendering of the
    state before it was kept as the new version's, so every later render, code action and
    hover of that version showed the message unpinned."""
    documents = SessionDocuments(FakeServer(service, "utf-16"))  # type: ignore[arg-type]
    sid = service.create().session_id
    turn(service, sid, 1)
    turn(service, sid, 2)
    session = service.session(sid)
    render = publisher.render_session

    def pinned_meanwhile(*args: Any, **kwargs: Any) -> RenderedSession:
        rendered = render(*args, **kwargs)
        service.pin(sid, session.view[0], True)  # on the loop, while the thread renders
        return rendered

    monkeypatch.setattr(publisher, "render_session", pinned_meanwhile)
    before, _, first = documents.render(sid)
    monkeypatch.setattr(publisher, "render_session", render)
    after, _, version = documents.render(sid)

    assert "pinned" not in before.text
    assert version > first
    same(after, whole(service, sid, "utf-16"))
    assert "pinned" in after.text.split("\n")[after.sections[0].start_line]
