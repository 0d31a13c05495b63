"""Each message's JSON text as it goes out: made in pieces, framed, written without a copy
(`Encoded`: an answer's text made already, off the event loop)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from pygls.exceptions import JsonRpcInternalError
from pygls.protocol import JsonRPCResponseMessage, LanguageServerProtocol

log = logging.getLogger(__name__)

WRITE_SLICE = 1 << 20  # characters of a long message's text encoded and written at a time


class Encoded:
    """An answer's JSON text made already (a large one, off the event loop: `encoded.py`),
    in the pieces it was made in, written as they are."""

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces

    def text(self) -> str:
        return "".join(self.pieces)


class WritingProtocol(LanguageServerProtocol):
    """pygls's protocol, writing each message's JSON text in the pieces it was made in."""

    def _send_data(self, data: Any) -> None:
        """pygls's, the same text, written without copies of it: the JSON text is the
        encoder's pieces as it made them (`json.dumps` joins them), and an answer whose
        text was made already (`Encoded`, a large one, made off the event loop) is written
        as it is; over a stream (stdio, TCP) they go out a slice at a time after the
        header, where pygls joined the header and the text, then encoded the whole: four
        copies of a long message's text beside the session's own (a `get` of a session
        holding one 200 MB line peaked at 880 MB)."""
        if not data:
            return
        if self.writer is None:
            log.error("a message is not sent: no transport")
            return
        result = getattr(data, "result", None)
        try:
            if isinstance(data, JsonRPCResponseMessage) and isinstance(result, Encoded):
                opening = f'{{"id": {json.dumps(data.id)}, "jsonrpc": "2.0", "result": '
                pieces = [opening, *result.pieces, "}"]
            else:  # json.dumps(data, default=...), its pieces not joined
                encoder = json.JSONEncoder(default=self._serialize_message)
                pieces = list(encoder.iterencode(data, _one_shot=True))
            self._write_pieces(self.writer, pieces)
        except Exception as error:  # as pygls: logged, and the client told
            log.exception("a message could not be sent")
            self._server._report_server_error(error, JsonRpcInternalError)

    def _write_pieces(self, writer: Any, pieces: list[str]) -> None:
        """The message whose JSON text is `pieces` (ASCII: characters are bytes), written."""
        if not self._include_headers:  # a WebSocket: the message is one frame
            # (its writer hands back its send, scheduled and kept already)
            writer.write("".join(pieces).encode(self.CHARSET))
            return
        length = sum(len(piece) for piece in pieces)
        header = (
            f"Content-Length: {length}\r\n"
            f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        )
        for chunk in _slices([header, *pieces]):
            writer.write(chunk.encode(self.CHARSET))


def _slices(pieces: list[str]) -> Iterator[str]:
    """`pieces`' text in slices of `WRITE_SLICE` characters (the last one shorter): the
    short pieces together (a write each would cost a system call each), the long ones
    cut."""
    held: list[str] = []
    size = 0
    for piece in pieces:
        if size + len(piece) < WRITE_SLICE:
            held.append(piece)
            size += len(piece)
            continue
        at = WRITE_SLICE - size  # the slice filled from the piece's start
        held.append(piece[:at])
        yield "".join(held)
        while len(piece) - at >= WRITE_SLICE:
            yield piece[at : at + WRITE_SLICE]
            at += WRITE_SLICE
        held, size = [piece[at:]], len(piece) - at
    if size:
        yield "".join(held)
