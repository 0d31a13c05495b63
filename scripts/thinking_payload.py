"""Which thinking a reply request sends back, before and after an `up_to` compaction.

Generates a Claude Code session with signed thinking (`baton_testkit.claude_code_gen`),
imports it, continues it for three turns against the fake Messages API
(`baton_testkit.fake_anthropic`, on loopback; model claude-fable-5-1, thinking adaptive: the
fake serves signed thinking and refuses stale thinking as that model does), then prints
`baton payload` for the transcript before and after compacting up to the first of those
turns, and sends one more turn to show the API accepts what Baton sent.

    python scripts/thinking_payload.py [--seed N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from baton.cli.main import main as baton
from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_claude_code
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import Settings
from baton.core.turn.chat import ChatContext, send
from baton.core.usage.estimator import default_estimator
from baton_testkit.claude_code_gen import generate
from baton_testkit.fake_anthropic import FakeAnthropic

MODEL = "claude-fable-5-1"


async def run(seed: int, folder: Path) -> None:
    source = folder / "claude-code.jsonl"
    generate(seed, era="newest", compactions=0, repairs=False, media=False).write(source)
    estimator = default_estimator()
    store = SessionStore(folder / "data", estimator.count_message)
    session = import_claude_code(source, store, title="imported with thinking")
    session.set_meta(model=MODEL)
    settings = Settings(model=MODEL, thinking="adaptive")
    with FakeAnthropic() as fake:
        client = AnthropicClient("sk-ant-demo-000000000000", base_url=fake.base_url)
        ctx = ChatContext(settings=settings, estimator=estimator, client=client)
        first = len(session.view)
        for prompt in ("Where were we?", "Run the tests again.", "Summarize the fix."):
            fake.reply(f"(reply to: {prompt})")
            await send(session, content=prompt, tools=None, ctx=ctx)
        path = str(session.transcript.path)
        print("== before the compaction: baton payload", Path(path).name)
        baton(["payload", path])
        pivot = session.view[first + 1]  # the first Baton reply: it and all before it go
        summarizer = ExtractiveSummarizer(estimator.count_text)
        cctx = CompactContext(settings=settings, estimator=estimator, summarizer=summarizer)
        await compact(session, CompactRequest(direction="up_to", pivot_message_id=pivot), cctx)
        print(f"\n== after compacting up to {pivot}: baton payload", Path(path).name)
        baton(["payload", path])
        fake.reply("(accepted)")
        await send(session, content="Go on.", tools=None, ctx=ctx)
        print(f"\nnext send accepted by the fake {MODEL}; stale blocks it had to drop: ", end="")
        print(len(fake.thinking.dropped))
        await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(args.seed, Path(folder)))


if __name__ == "__main__":
    main()
