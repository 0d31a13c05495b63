"""The fake Anthropic API for the settings end-to-end test: prints its URL, then reads lines
from stdin until it closes, and writes the Messages requests it got to the file named by
argv[1], each as its last prompt and the API key it carried. "Hold this reply" gets a reply
that streams a few words and then waits until the line "release" comes. The line "tool"
queues a turn of two replies: a read_file call of README.md, then README_READ. Anything else
gets "OK".
"""

from __future__ import annotations

import json
import sys
import threading

from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

HELD = "Half of a reply, and the rest of it once released"
README_READ = "The README says the report comes from the bank's CSV export."

fake = FakeAnthropic(default_text="OK").start()
gate = threading.Event()
fake.reply(HELD, hold_after=4, gate=gate)
print(fake.base_url, flush=True)
for line in sys.stdin:
    if line.strip() == "release":
        gate.set()
    elif line.strip() == "tool":
        fake.reply(tool_use_block("read_file", {"path": "README.md"}, id="toolu_readme"))
        fake.reply(README_READ)
fake.close()


def last_prompt(body: object) -> str:
    messages = body.get("messages") or [] if isinstance(body, dict) else []
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")
    return ""


requests = [{"prompt": last_prompt(r.body), "key": r.api_key} for r in fake.message_requests()]
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(requests, out)
