"""One full chat exchange through the real server and the real SDK against the fake API:
send -> streamed reply with a tool call -> tool result -> auto-compact by the model ->
the conversation continues from the summary.

Set BATON_EXCHANGE_LOG=FILE to keep the narrated exchange.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from baton import protocol
from baton.cli.rpc_client import StdioClient
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

FAKE_KEY = "sk-ant-test-SECRET-123"
WINDOW = 30_000  # small, so one file read crosses the auto-compact threshold
SUMMARY = (
    "<analysis>The user asked to fix the crash in app.py; the file was read.</analysis>\n"
    "<summary>1. Primary request: fix the crash in app.py when the CSV has a blank amount.\n"
    "8. Current work: app.py was read; the parser must skip blank amounts.</summary>"
)


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str) -> None:
        self.lines.append(text)

    def save(self) -> None:
        target = os.environ.get("BATON_EXCHANGE_LOG")
        if target:
            Path(target).write_text("\n".join(self.lines) + "\n", encoding="utf-8")


def short(text: str, limit: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def test_send_stream_tool_call_auto_compact_and_continue(tmp_path: Path) -> None:
    log = Log()
    with FakeAnthropic() as fake:
        fake.reply(
            "Let me read app.py first.",
            tool_use_block("Read", {"file_path": "app.py"}, id="toolu_read_1"),
            usage={"input_tokens": 1_800, "output_tokens": 40},
        )
        fake.reply(SUMMARY, usage={"input_tokens": 19_000, "output_tokens": 90})
        fake.reply(
            "The crash comes from Decimal('') on blank amounts; I will skip those rows.",
            usage={"input_tokens": 1_400, "output_tokens": 30},
        )
        env = {
            **os.environ,
            "BATON_DATA_DIR": str(tmp_path / "data"),
            "ANTHROPIC_BASE_URL": fake.base_url,
            "ANTHROPIC_API_KEY": FAKE_KEY,
        }
        client = StdioClient(env=env)
        await client.start()
        try:
            await exchange(client, fake, log)
        finally:
            await client.close()
            log.save()
    assert all(FAKE_KEY not in p.read_text() for p in (tmp_path / "data").rglob("*") if p.is_file())


async def exchange(client: StdioClient, fake: FakeAnthropic, log: Log) -> None:
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "capabilities": {},
            "initializationOptions": {
                "contextWindow": WINDOW,
                "summarizer": "anthropic",
                "keepWindow": {"minTokens": 200, "minTextMessages": 1, "maxTokens": 2_000},
            },
        },
    )
    await client.notify("initialized", {})
    session = await client.request(protocol.SESSION_CREATE, {"title": "fix the crash"})
    sid = session["sessionId"]
    log(f"created session {sid} (window {WINDOW:,} tokens, summarizer anthropic)")

    mark = client.mark()
    prompt = "app.py crashes on the March export. Please fix it."
    log(f"> send: {prompt}")
    first = await client.request(protocol.SESSION_SEND, {"sessionId": sid, "content": prompt})
    deltas = [p["text"] for m, p in client.notifications[mark:] if m == protocol.SESSION_DELTA]
    log(f"< streamed {len(deltas)} deltas: {short(''.join(deltas))}")
    reply = first["message"]
    assert "".join(deltas) == "Let me read app.py first."
    assert reply["stopReason"] == "tool_use"
    use = next(b for b in reply["content"] if b["type"] == "tool_use")
    log(f"< tool_use {use['name']} {use['input']}; usage {first['usage']['usedTokens']:,} tokens")

    big = "\n".join(f"{n:5}  row = parse_row(line, {n})  # amount column" for n in range(2_200))
    mark = client.mark()
    appended = await client.request(
        protocol.SESSION_APPEND,
        {
            "sessionId": sid,
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": big}],
                }
            ],
        },
    )
    usage = appended["usage"]
    log(
        f"> append tool_result ({len(big):,} chars): {usage['usedTokens']:,} tokens, "
        f"threshold {usage['autoCompactThreshold']:,}, state {usage['state']}"
    )
    assert usage["usedTokens"] >= usage["autoCompactThreshold"]
    changed = await client.wait_for(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "compact", after=mark
    )
    assert changed["sessionId"] == sid
    summary_request = fake.message_requests()[1].body
    assert "tools" not in summary_request
    log("~ auto-compact: summary requested from the model (no tools offered)")

    mark = client.mark()
    log("> send (no content: continue)")
    second = await client.request(protocol.SESSION_SEND, {"sessionId": sid})
    text = "".join(b.get("text", "") for b in second["message"]["content"])
    log(f"< {short(text)}")
    final: dict[str, Any] = fake.message_requests()[2].body
    opening = final["messages"][0]["content"]
    opening_text = opening if isinstance(opening, str) else opening[0]["text"]
    assert "fix the crash in app.py" in opening_text
    log(f"  the model's view now opens with the summary: {short(opening_text, 80)}")
    got = await client.request(protocol.SESSION_GET, {"sessionId": sid})
    kinds = [m["kind"] for m in got["messages"]]
    assert kinds[0] == "summary" and got["session"]["compactions"] == 1
    log(
        f"  view: {len(kinds)} messages ({', '.join(kinds)}); "
        f"usage {second['usage']['usedTokens']:,} tokens, state {second['usage']['state']}"
    )
    print("\n".join(log.lines), file=sys.stderr)
