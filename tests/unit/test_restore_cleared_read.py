"""A read whose result a microcompaction cleared shows nothing of its file: a compaction
that keeps that read restores the file, as it does after a read that failed."""

from __future__ import annotations

from pathlib import Path

from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import CLEARED_RESULT
from baton.core.tools.host import DiskHost
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block
from baton_testkit.request_size import prose
from baton_testkit.services import service_on

APP = "def main():\n    return 42\n" * 30


async def test_a_kept_read_whose_result_was_cleared_does_not_keep_its_file_from_coming_back(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    # kept before a `from` summary, the read's placeholder counted as showing app.py: the
    # file was not restored, and nothing in the view held its text
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text(APP)
    # idle clearing at every send (no gap), of every old result
    micro = {"gapMinutes": 0, "keepRecent": 0}
    service = service_on(tmp_path / "data", estimator, workspace, microcompact=micro)
    try:
        sid = service.create("reads", model="claude-sonnet-4-5").session_id
        fake_anthropic.reply(tool_use_block("read_file", {"path": "app.py"}))
        fake_anthropic.reply("Read it. " + prose(1, 100))
        await service.replies.send(sid, "Read app.py please.", host=DiskHost())
        for n in range(3):
            fake_anthropic.reply(f"Answer {n}. " + prose(10 + n, 150))
            await service.replies.send(sid, f"Question {n}: " + prose(20 + n, 80), host=DiskHost())
        view = service.session(sid).view_messages()
        [result] = [block for m in view for block in m.tool_results()]
        assert result.content == CLEARED_RESULT
        prompts = [m.id for m in view if m.role == "user" and not m.tool_results()]

        request = CompactRequest(direction="from", pivot_message_id=prompts[2])
        compacted = await service.compaction.compact(sid, request)

        assert set(compacted.kept_message_ids) >= {m.id for m in view[:4]}  # the read's turn
        assert [f.uri for f in compacted.restored_files] == [(workspace / "app.py").as_uri()]
        texts = [m.text() for m in service.session(sid).view_messages() if m.kind == "attachment"]
        assert any(APP.strip() in text for text in texts)
    finally:
        await service.close()
