"""A document (a PDF) is held to the API's checks wherever a message enters, as an image
is: an appended or sent one, a tool result's, an imported one. Its base64 data must be a
PDF, within the 32 MB the API takes in a whole request; one the API refuses would be sent
in every later request of the session, each refused, until a compaction."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from conversations import ten_per_block

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.media import MAX_REQUEST_BYTES
from baton.core.conversation.messages import DocumentBlock, MessageInput, TextBlock
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers.claude_code import import_with_report
from baton.core.model_api.api_messages import to_api_messages
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.services import service_on

PDF = base64.b64encode(b"%PDF-1.7\n" + bytes(64) + b"\n%%EOF\n").decode()
NO_PDF = base64.b64encode(b"PK\x03\x04 a zip file, not a PDF").decode()
# over the API's limit on a whole request as base64; the check comes before any decoding
OVER = "A" * (MAX_REQUEST_BYTES + 4)


def _document(data: str, media_type: str = "application/pdf") -> dict[str, Any]:
    return {
        "type": "document",
        "source": {"type": "base64", "media_type": media_type, "data": data},
    }


def _result(part: dict[str, Any]) -> MessageInput:
    block = {"type": "tool_result", "tool_use_id": "t1", "content": [part]}
    return MessageInput(role="user", content=[block])


def _called(store: SessionStore) -> Any:
    session = store.create()
    call = {"type": "tool_use", "id": "t1", "name": "fetch", "input": {}}
    session.append(
        [
            MessageInput(role="user", content="Get it"),
            MessageInput(role="assistant", content=[call]),
        ]
    )
    return session


@pytest.mark.parametrize("data", [NO_PDF, "not base64!", ""])
def test_a_document_that_is_no_pdf_is_refused_and_nothing_is_written(
    tmp_path: Path, data: str
) -> None:
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    written = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match=r"block 1 \(document\): its data is no base64 PDF"):
        session.append(
            [MessageInput(role="user", content=[TextBlock(text="read"), _document(data)])]
        )
    assert session.transcript.path.read_bytes() == written
    store.close()


def test_a_document_over_a_requests_limit_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    written = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match=r"block 0 \(document\).*33,554,432 \(32 MB\)"):
        session.append([MessageInput(role="user", content=[_document(OVER)])])
    assert session.transcript.path.read_bytes() == written
    store.close()


def test_a_pdf_typed_otherwise_is_stored_as_application_pdf(tmp_path: Path) -> None:
    """The API takes base64 documents as application/pdf only."""
    store = SessionStore(tmp_path, ten_per_block)
    session = store.create()
    given = MessageInput(role="user", content=[_document(PDF, "application/octet-stream")])
    (mid,) = session.append([given]).message_ids
    (document,) = session.messages[mid].content
    assert isinstance(document, DocumentBlock)
    assert document.source == {"type": "base64", "media_type": "application/pdf", "data": PDF}
    plain = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "x"},
    }
    session.append([MessageInput(role="user", content=[plain])])  # no base64: as given
    store.close()


def test_a_tool_results_document_is_checked(tmp_path: Path) -> None:
    store = SessionStore(tmp_path, ten_per_block)
    session = _called(store)
    written = session.transcript.path.read_bytes()
    with pytest.raises(InvalidParams, match=r"block 0 \(tool_result\) part 0 \(document\): .*no"):
        session.append([_result(_document(NO_PDF))])
    with pytest.raises(InvalidParams, match=r"part 0 \(document\): .*32 MB"):
        session.append([_result(_document(OVER))])
    assert session.transcript.path.read_bytes() == written
    (mid,) = session.append([_result(_document(PDF, "text/plain"))]).message_ids
    (result,) = session.messages[mid].content
    assert result.content[0]["source"]["media_type"] == "application/pdf"  # type: ignore[union-attr,index]
    store.close()


async def test_a_send_with_a_document_that_is_no_pdf_asks_nothing_and_stores_nothing(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    service = service_on(tmp_path / "data", estimator)
    sid = service.create("papers").session_id
    path = service.store.get(sid).transcript.path
    written = path.read_bytes()
    blocks = [TextBlock(text="read"), DocumentBlock(source=_document(NO_PDF)["source"])]
    with pytest.raises(InvalidParams, match="no base64 PDF"):
        await service.replies.send(sid, list(blocks))
    assert fake_anthropic.message_requests() == []
    assert path.read_bytes() == written
    service.store.close()


def _uid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def _record(n: int, kind: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message |= {
            "id": f"msg_{n}",
            "model": "claude-sonnet-4-5-20250929",
            "stop_reason": "end_turn",
        }
        message["usage"] = {"input_tokens": 50, "output_tokens": 5}
    parent = _uid(n - 1) if n > 1 else None
    return {
        "type": kind,
        "uuid": _uid(n),
        "parentUuid": parent,
        "sessionId": "5e55-1",
        "message": message,
    }


def test_an_imported_document_the_api_refuses_goes_as_a_text_saying_why(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    ask = {"type": "text", "text": "summarize"}
    records = [
        _record(1, "user", [_document(NO_PDF), ask]),
        _record(2, "assistant", [{"type": "text", "text": "cannot"}]),
        _record(3, "user", [_document(PDF, "application/x-pdf"), ask]),
        _record(4, "assistant", [{"type": "text", "text": "done"}]),
    ]
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    session, report = import_with_report(path, plain_store)

    view = session.view_messages()
    messages = to_api_messages(view)
    no_pdf = "its data is no base64 PDF"
    assert messages[0]["content"][0] == {"type": "text", "text": f"[document left out: {no_pdf}]"}
    assert messages[2]["content"][0]["source"]["media_type"] == "application/pdf"
    assert invariant_violations(view) == []
    assert report.repairs == [
        f"record {_uid(1)}: block 0 (document): {no_pdf}; imported as a text saying so",
        f"record {_uid(3)}: block 0 (document) is a PDF typed application/x-pdf: "
        "imported as application/pdf",
    ]
