"""Over the wire: an appended document that is no PDF, or an image over 8,000 pixels on a
side, is invalid_params naming the block, and the session holds nothing of it."""

from __future__ import annotations

import base64
from typing import Any

from test_server_limits import clean, session
from test_server_malformed import INVALID_PARAMS, RawPipe

from baton import protocol

ZIP = base64.b64encode(b"PK\x03\x04 a zip file, not a PDF").decode()
IHDR = b"\x00\x00\x00\x0dIHDR" + (1280).to_bytes(4, "big") + (12000).to_bytes(4, "big")
TALL_PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + IHDR + b"\x08\x02\x00\x00\x00").decode()


def _source(media_type: str, data: str) -> dict[str, str]:
    return {"type": "base64", "media_type": media_type, "data": data}


async def _append(pipe: RawPipe, msg_id: int, sid: str, block: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": "read this"}, block]
    params = {"sessionId": sid, "messages": [{"role": "user", "content": content}]}
    request = {"jsonrpc": "2.0", "id": msg_id, "method": protocol.SESSION_APPEND, "params": params}
    await pipe.send(request)
    return clean(await pipe.response(msg_id))


async def test_an_appended_document_or_image_the_api_refuses_is_invalid_params(
    pipe: RawPipe,
) -> None:
    sid = await session(pipe)
    document = {"type": "document", "source": _source("application/pdf", ZIP)}
    error = (await _append(pipe, 1, sid, document))["error"]
    assert error["code"] == INVALID_PARAMS
    assert "block 1 (document): its data is no base64 PDF" in error["message"]
    image = {"type": "image", "source": _source("image/png", TALL_PNG)}
    error = (await _append(pipe, 2, sid, image))["error"]
    assert error["code"] == INVALID_PARAMS
    assert "block 1 (image): it is 1,280 x 12,000 pixels" in error["message"]
    get = {"jsonrpc": "2.0", "id": 3, "method": protocol.SESSION_GET, "params": {"sessionId": sid}}
    await pipe.send(get)
    assert (await pipe.response(3))["result"]["messages"] == []
