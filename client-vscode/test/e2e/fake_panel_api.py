"""The fake Anthropic API for the chat panel's end-to-end test: prints its URL, runs until
stdin closes, then writes every Messages request it got to the file named by argv[1].

It answers by the conversation's last prompt, each answer once, in order: "What is 2 + 2?"
gets "5"; "Are you sure?" gets "It is 4."; "What is 3 + 3?" (the first prompt, edited) gets
"6", and asked again for it (Retry) a reply with a code block the test inserts into an
editor. Anything else gets "OK".
"""

from __future__ import annotations

import json
import sys
from typing import Any

from baton_testkit.fake_anthropic import FakeAnthropic, Script, ScriptedReply, text_block

ANSWERS = {
    "What is 2 + 2?": ["5"],
    "Are you sure?": ["It is 4."],
    "What is 3 + 3?": ["6", "Six, as this prints:\n\n```python\nprint(3 + 3)  # six\n```\n"],
}


def last_prompt(body: Any) -> str:
    """The text blocks of the request's last user message ("" when it has none)."""
    messages = (body or {}).get("messages") or [] if isinstance(body, dict) else []
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content.strip()
        texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
        return "\n".join(texts).strip()
    return ""


class PanelFake(FakeAnthropic):
    def _next(self) -> Script:
        with self._lock:  # the Messages request this reply answers (not a count_tokens one)
            asked = [r for r in self.requests if r.path.split("?")[0] == "/v1/messages"]
            prompt = last_prompt(asked[-1].body if asked else None)
            # the prompt's own text block (an editor's file may come with it)
            said = [key for key in ANSWERS if key in prompt.splitlines()]
            queue = ANSWERS[said[0]] if said else []
            text = queue.pop(0) if queue else self.default_text
        return ScriptedReply(content=[text_block(text)])


fake = PanelFake(default_text="OK").start()
print(fake.base_url, flush=True)
sys.stdin.read()
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump([r.body for r in fake.message_requests()], out)
fake.close()
