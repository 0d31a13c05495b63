"""An image a Claude Code file holds goes to the API as the API takes it: typed as its
bytes are (a JPEG pasted as `image/png`), or, when the API takes no such image (data that
is no PNG, JPEG, GIF or WebP, over its 5 MB), as a text that says so; each one told in
the report's repairs. The API refuses such an image in every request that sends it, so
the imported session could not go on until a compaction."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.media import MAX_IMAGE_BASE64
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_with_report
from baton.core.model_api.api_messages import to_api_messages

Record = dict[str, Any]
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + bytes(64)).decode()
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
NO_IMAGE = base64.b64encode(b"not an image at all").decode()


def uid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def image(media_type: str, data: str) -> Record:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def user(n: int, parent: int | None, content: Any) -> Record:
    return {
        "type": "user",
        "uuid": uid(n),
        "parentUuid": uid(parent) if parent else None,
        "sessionId": "5e55-1",
        "message": {"role": "user", "content": content},
    }


def reply(n: int, parent: int, block: Record) -> Record:
    message = {
        "id": f"msg_{n}",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [block],
        "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
        "usage": {"input_tokens": 50, "output_tokens": 5},
    }
    return {
        "type": "assistant",
        "uuid": uid(n),
        "parentUuid": uid(parent),
        "sessionId": "5e55-1",
        "message": message,
    }


def write(path: Path, records: list[Record]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def sent_images(messages: list[dict[str, Any]]) -> list[str]:
    """The media type of every image the request sends, a tool result's too, in order."""
    found: list[str] = []
    for message in messages:
        for block in message["content"]:
            parts = block.get("content") if block["type"] == "tool_result" else [block]
            for part in parts if isinstance(parts, list) else []:
                if part.get("type") == "image":
                    found.append(part["source"]["media_type"])
    return found


def test_an_image_of_other_bytes_than_its_type_goes_as_the_type_its_bytes_are(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    shot = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.png"}}
    photo = image("image/png", JPEG)
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [photo]}
    records = [
        user(1, None, [image("image/png", JPEG), {"type": "text", "text": "what is this?"}]),
        reply(2, 1, shot),
        user(3, 2, [result]),
        reply(4, 3, {"type": "text", "text": "a photo"}),
        user(5, 4, [image("image/png", PNG), {"type": "text", "text": "and this one?"}]),
        reply(6, 5, {"type": "text", "text": "a diagram"}),
    ]
    path = write(tmp_path / "pasted.jsonl", records)

    session, report = import_with_report(path, plain_store)

    view = session.view_messages()
    assert sent_images(to_api_messages(view)) == ["image/jpeg", "image/jpeg", "image/png"]
    assert invariant_violations(view) == []
    assert report.repairs == [
        f"record {uid(1)}: block 0 (image) is a JPEG typed image/png: imported as image/jpeg",
        f"record {uid(3)}: block 0 (tool_result) part 0 (image) is a JPEG typed image/png: "
        "imported as image/jpeg",
    ]
    session.transcript.close()
    reloaded = plain_store.load(session.session_id)
    assert sent_images(to_api_messages(reloaded.view_messages())) == sent_images(
        to_api_messages(view)
    )


def test_an_image_the_api_takes_no_such_of_goes_as_a_text_saying_why(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    shot = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.png"}}
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "read"}, image("image/png", NO_IMAGE)],
    }
    huge = "A" * (MAX_IMAGE_BASE64 + 4)
    records = [
        user(1, None, [image("image/png", NO_IMAGE), {"type": "text", "text": "what is this?"}]),
        reply(2, 1, shot),
        user(3, 2, [result]),
        reply(4, 3, {"type": "text", "text": "nothing I can see"}),
        user(5, 4, [image("image/jpeg", huge)]),
        reply(6, 5, {"type": "text", "text": "too large"}),
    ]
    path = write(tmp_path / "broken.jsonl", records)

    session, report = import_with_report(path, plain_store)

    view = session.view_messages()
    messages = to_api_messages(view)
    assert sent_images(messages) == []
    no_image = "its data is no base64 PNG, JPEG, GIF or WebP"
    too_large = f"its data is {len(huge):,} bytes of base64, over the API's limit"
    assert messages[0]["content"][0] == {
        "type": "text",
        "text": f"[image left out: {no_image}]",
    }
    assert messages[2]["content"][0]["content"] == [
        {"type": "text", "text": "read"},
        {"type": "text", "text": f"[image left out: {no_image}]"},
    ]
    assert messages[4]["content"][0]["text"].startswith(f"[image left out: {too_large}")
    assert invariant_violations(view) == []
    assert [r.split(":")[0] for r in report.repairs] == [f"record {uid(n)}" for n in (1, 3, 5)]
    assert (
        f"block 0 (tool_result) part 1 (image): {no_image}; imported as a text"
        in (report.repairs[1])
    )
