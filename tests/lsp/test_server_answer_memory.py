"""A long message's text in an answer costs the server no more copies of it than the
JSON text needs: a full `get` of a session holding one line of 60 MB, over stdio."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from lsp_harness import spawn_stdio
from test_server_lifecycle import exit_code, request, session_with, started
from test_server_malformed import RawPipe

from baton import protocol

MB = 1_000_000
TEXT = 60 * MB  # characters (ASCII: bytes) of the one long message


def memory_mb(pid: int, field: str) -> float:
    """The process's resident set now (VmRSS) or at its highest so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024 / MB
    raise AssertionError(f"no {field}")


def long_reply(text: str) -> str:
    """A transcript line: an assistant's reply holding `text`, as another server wrote it."""
    message = {
        "id": "msg_0123456789abcdef",
        "role": "assistant",
        "kind": "message",
        "content": [{"type": "text", "text": text}],
        "createdAt": "2026-12-07T02:38:41.700Z",
        "tokens": len(text) // 4,
        "pinned": False,
    }
    return json.dumps({"type": "message", "message": message}, separators=(",", ":")) + "\n"


async def test_a_get_of_one_long_message_writes_its_answer_without_copies(
    tmp_path: Path,
) -> None:
    """Once the session is read (its text held once), the answer's JSON text took two
    copies of the text (the escaped text and the encoder's buffer); pygls then joined
    the header and the text and encoded the whole: a third copy at least, the peak 3x
    the text over the session held (880 MB for a 200 MB line, 4x over the start). The
    answer's text is now made a piece at a time and goes out a slice at a time: held
    once, and the text arrives whole."""
    data_dir = tmp_path / "data"
    process = await spawn_stdio(data_dir, stderr=asyncio.subprocess.DEVNULL)
    try:
        raw = RawPipe(process)
        await started(raw)
        sid, _ = await session_with(raw, 1)
        assert await exit_code(raw) == 1
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    text = ("lorem ipsum dolor sit amet " * (TEXT // 27 + 1))[:TEXT]
    with (data_dir / "sessions" / f"{sid}.jsonl").open("a", encoding="utf-8") as transcript:
        transcript.write(long_reply(text))

    process = await spawn_stdio(data_dir, stderr=asyncio.subprocess.DEVNULL)
    try:
        raw = RawPipe(process)
        await started(raw)
        first = {"sessionId": sid, "limit": 1}  # the session read, its text held once
        await raw.send(request(2, protocol.SESSION_GET, first))
        assert len((await raw.response(2))["result"]["messages"]) == 1
        held = memory_mb(process.pid, "VmRSS")
        await raw.send(request(3, protocol.SESSION_GET, {"sessionId": sid}))
        view = (await raw.response(3))["result"]
        grown = memory_mb(process.pid, "VmHWM") - held
        assert await exit_code(raw) == 1
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    assert view["messages"][-1]["content"][0]["text"] == text
    assert grown < 1.5 * TEXT / MB, f"the peak grew {grown:.0f} MB for a text of 60 MB"
