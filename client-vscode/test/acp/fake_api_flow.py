"""The repository's fake Anthropic API for flow.test.mts: prints its URL, then reads stdin
("release" lets the held reply finish; end of input stops it).

Replies in order: a long answer; an edit of utils.py (allowed), then its answer; the same
edit (denied), then its answer; the same edit (never answered), then its answer; a story
held after its first events (the client cancels it); the good prompt after the bad ones;
the summary /compact-up-to asks for.
"""

import sys
import threading

from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

WORDS = " ".join(f"word{n}" for n in range(400))
RENAME = {"command": "str_replace", "path": "utils.py", "old_str": "parse_date", "new_str": "parse_day"}
EDIT = "str_replace_based_edit_tool"

fake = FakeAnthropic(default_text="Default reply.").start()
fake.reply(f"Answer 0: {WORDS}", chunk_chars=40)
for name, answer in (("allowed", "Renamed."), ("denied", "Left as it is."), ("unanswered", "Nobody answered.")):
    fake.reply(tool_use_block(EDIT, RENAME, id=f"toolu_{name}"), stop_reason="tool_use")
    fake.reply(answer)
gate = threading.Event()
fake.reply("The first words arrive, the rest only after the cancel.", hold_after=4, gate=gate)
fake.reply("A good prompt gets an answer.")
fake.reply("<summary>The user asked about words and renamed parse_date.</summary>")
print(fake.base_url, flush=True)
for line in sys.stdin:
    if line.strip() == "release":
        gate.set()
gate.set()
fake.close()
