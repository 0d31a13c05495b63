"""A draft whose compaction restores a file the span read by a path relative to the
workspace gives the commit's figures: that path is kept (the file stays in view), in the
draft's retention check as in the commit's, so no ledger carries it in one and not the
other."""

from __future__ import annotations

from pathlib import Path

from baton.core.compaction.result import CompactRequest
from baton.core.tools.host import DiskHost
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block
from baton_testkit.request_size import prose
from baton_testkit.services import service_on

MODEL = "claude-sonnet-4-6"  # the fake's Models API lists compaction for it


async def test_a_draft_that_restores_a_file_read_by_a_relative_path_gives_the_commits_figures(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    # the API's summary names no path: the draft's ledger carried app.py (its check made
    # ahead of the restore compared "app.py" with the restored file's absolute path), the
    # commit's did not, so the commit's postTokens was lower than the draft's
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("x = 1\n" * 30)
    service = service_on(tmp_path / "data", estimator, workspace, summarizer="server")
    try:
        sid = service.create("reads", model=MODEL).session_id
        fake_anthropic.reply(tool_use_block("read_file", {"path": "app.py"}))
        fake_anthropic.reply("Read it. " + prose(1, 150))
        await service.replies.send(sid, "Read the main module, please.", host=DiskHost())
        for n in range(4):
            fake_anthropic.reply(f"Answer {n}. " + prose(10 + n, 150))
            await service.replies.send(sid, f"Question {n}: " + prose(20 + n, 80), host=DiskHost())

        draft = await service.drafts.preview(sid, CompactRequest(direction="all"))
        result = await service.drafts.apply(sid, draft.draft_id)

        assert draft.summarizer == result.summarizer == "server"
        assert [f.uri for f in result.restored_files] == [(workspace / "app.py").as_uri()]
        assert result.warnings == []
        assert result.retention == draft.retention
        assert result.retention is not None and result.retention.paths.kept == 1
        assert result.post_tokens == draft.post_tokens == service.usage(sid).used_tokens
    finally:
        await service.close()
