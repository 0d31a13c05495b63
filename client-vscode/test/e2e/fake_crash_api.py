"""The fake Anthropic API for the crash end-to-end test: prints its URL, runs until stdin
closes. "Hold this reply" gets a reply that streams a few words and then waits (the test
kills Baton's server meanwhile); anything else gets "OK".
"""

from __future__ import annotations

import sys
import threading

from baton_testkit.fake_anthropic import FakeAnthropic

fake = FakeAnthropic(default_text="OK").start()
fake.reply("Half of a reply that is never finished", hold_after=4, gate=threading.Event())
print(fake.base_url, flush=True)
sys.stdin.read()
fake.close()
