"""The fake Anthropic API for the workspace-tools end-to-end test: prints its URL, runs until
stdin closes, then writes every Messages request it got to the file named by argv[1].

The script is the model's side of two turns. "rename parse_date to parse_day in utils.py":
read utils.py, edit it (the user accepts), say it is done. "rename parse_date to parse_when
in utils.py": edit it (the user rejects), say so. An edit is called with the editor tool the
request offers: the API's text editor tool (`str_replace_based_edit_tool`) when it is there,
else `edit_file` {path, oldText, newText}.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from baton_testkit.fake_anthropic import FakeAnthropic, Script, ScriptedReply, tool_use_block

EDIT = "<edit>"  # the placeholder name of an edit, resolved per request


class ToolsFake(FakeAnthropic):
    def _next(self) -> Script:
        script = super()._next()
        if not isinstance(script, ScriptedReply):
            return script
        with self._lock:  # the Messages request this reply answers (not a count_tokens one)
            asked = [r for r in self.requests if r.path.split("?")[0] == "/v1/messages"]
        body = asked[-1].body if asked else None
        offered = {t.get("name") for t in (body or {}).get("tools") or [] if isinstance(t, dict)}
        content = [_resolve(block, offered) for block in script.content]
        return ScriptedReply(**{**script.__dict__, "content": content})


def _resolve(block: dict[str, Any], offered: set[Any]) -> dict[str, Any]:
    if block.get("type") != "tool_use" or block.get("name") != EDIT:
        return block
    old, new = block["input"]["old"], block["input"]["new"]
    if "str_replace_based_edit_tool" in offered or "edit_file" not in offered:
        edit = {"command": "str_replace", "path": "utils.py", "old_str": old, "new_str": new}
        return {**block, "name": "str_replace_based_edit_tool", "input": edit}
    edit = {"path": "utils.py", "oldText": old, "newText": new}
    return {**block, "name": "edit_file", "input": edit}


fake = ToolsFake(default_text="Done.").start()
read = tool_use_block("read_file", {"path": "utils.py"}, id="toolu_read1")
fake.reply("Let me read it first.", read)
fake.reply(
    tool_use_block(EDIT, {"old": "def parse_date(", "new": "def parse_day("}, id="toolu_edit1")
)
fake.reply("Renamed parse_date to parse_day in utils.py.")
fake.reply(
    tool_use_block(EDIT, {"old": "def parse_date(", "new": "def parse_when("}, id="toolu_edit2")
)
fake.reply("Understood: utils.py stays as it is.")
print(fake.base_url, flush=True)
sys.stdin.read()
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump([r.body for r in fake.message_requests()], out)
fake.close()
