"""The repository's fake Anthropic API for the protocol test: prints its URL, runs until stdin closes.

Replies in order: a streamed text reply, then one that holds after a few events until the
client cancels (the fake's gate is never opened), then the default text; with the argument
`plain`, the default text only (for tests that send without cancelling).
"""

import sys
import threading

from baton_testkit.fake_anthropic import FakeAnthropic

fake = FakeAnthropic(default_text="Default reply.").start()
if sys.argv[1:] != ["plain"]:
    fake.reply("Hello from the fake API, streamed in pieces.", chunk_chars=6)
    fake.reply("This reply never finishes", hold_after=4, gate=threading.Event())
print(fake.base_url, flush=True)
sys.stdin.read()
fake.close()
