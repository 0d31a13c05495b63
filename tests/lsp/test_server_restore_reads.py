"""The working set a compaction restores after the session's own reads of a file."""

from __future__ import annotations

from typing import Any

from lsp_harness import Harness
from test_server_restore_pending import copies, fenced
from test_server_tools import WITH_KEY

from baton import protocol
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block

APP = "".join(f"value_{n} = {n}\n" for n in range(1, 200))


async def test_a_kept_read_of_twenty_lines_does_not_stand_for_the_whole_file(
    start_server: Any, fake_anthropic: FakeAnthropic
) -> None:
    """The model read app.py, then 20 of its lines; a compaction summarized the first read
    and kept the second: the 20 lines counted as showing the file, so nothing came back
    and the model was left with lines 20-39 of 199."""
    lsp: Harness = await start_server(options={**WITH_KEY, "summarizer": "extractive"})
    app = lsp.workspace / "app.py"
    app.write_text(APP)
    sid = (await lsp.create())["sessionId"]
    fake_anthropic.reply(tool_use_block("read_file", {"path": "app.py"}), stop_reason="tool_use")
    part = {"path": "app.py", "startLine": 20, "endLine": 39}
    fake_anthropic.reply(tool_use_block("read_file", part), stop_reason="tool_use")
    fake_anthropic.reply("value_20 is 20.")
    await lsp.request(protocol.SESSION_SEND, {"sessionId": sid, "content": "what is value_20?"})
    messages = (await lsp.get(sid))["messages"]
    whole = messages[2]  # the first read's result
    assert whole["content"][0]["content"].endswith("value_199 = 199")

    params = {"sessionId": sid, "direction": "up_to", "pivotMessageId": whole["id"]}
    compacted = await lsp.request(protocol.COMPACT, params)

    assert [f["uri"] for f in compacted["restoredFiles"]] == [app.as_uri()]
    ((_, copy),) = copies((await lsp.get(sid))["messages"])
    assert fenced(copy) == APP
