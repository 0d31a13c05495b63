"""The repository's fake Anthropic API for the ACP test: prints its URL, runs until stdin closes.

Replies in order: a streamed text reply to the prompt, then the summary a compaction asks for.
"""

import sys

from baton_testkit.fake_anthropic import FakeAnthropic

fake = FakeAnthropic(default_text="Default reply.").start()
fake.reply(
    "Hello from the fake API over ACP, streamed in pieces.",
    chunk_chars=6,
    usage={"input_tokens": 3000, "output_tokens": 15},
)
fake.reply("<summary>The user asked for a greeting and got one.</summary>")
print(fake.base_url, flush=True)
sys.stdin.read()
fake.close()
