"""PreCompact / PostCompact hooks from the user's hooks file: one that blocks, one that
times out, one that adds instructions, one told the result; failures lose nothing."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.hooks import HOOKS_FILE_ENV, Hook, Hooks, hooks_file, load_hooks
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import Message, text_message
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import CompactionBlocked
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.settings_read import parse_settings
from baton.core.usage.estimator import Estimator

PY = sys.executable


def chatter(turns: int = 12) -> list[Message]:
    out: list[Message] = []
    for n in range(turns):
        out.append(text_message("user", f"Step {n}: carry on with the parser work."))
        out.append(text_message("assistant", f"Working on step {n}. " * 40))
    return out


def script(tmp_path: Path, name: str, body: str) -> list[str]:
    path = tmp_path / f"{name}.py"
    path.write_text("import json, sys, time\n" + body, encoding="utf-8")
    return [PY, str(path)]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Session, CompactContext, SessionStore]:
    estimator = Estimator()
    settings = Settings(keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=2))
    ctx = CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))
    store = SessionStore(tmp_path / "data", estimator.count_message)
    session = store.create(title="hooks")
    session.append(chatter())
    return session, ctx, store


async def test_a_pre_hook_that_exits_2_blocks_with_its_reason_and_nothing_changes(
    tmp_path: Path, setup: tuple[Session, CompactContext, SessionStore]
) -> None:
    session, ctx, _ = setup
    seen = tmp_path / "seen.json"
    command = script(
        tmp_path,
        "block",
        f"open({str(seen)!r}, 'w').write(sys.stdin.read())\n"
        "print('the release branch is frozen', file=sys.stderr)\nsys.exit(2)\n",
    )
    ctx.hooks = Hooks(pre=[Hook(command)])
    view = list(session.view)
    with pytest.raises(CompactionBlocked, match="blocked the compaction: the release branch is"):
        await compact(session, CompactRequest(direction="all"), ctx)
    assert session.view == view and session.compactions == 0
    told = json.loads(seen.read_text())
    assert told["hook_event_name"] == "PreCompact"
    assert told["session_id"] == session.session_id
    assert (told["direction"], told["trigger"]) == ("all", "manual")
    assert told["used_tokens"] > 0 and told["context_window"] > 0 and told["messages"] == 24
    assert not session.compacting  # the next compaction may run


async def test_a_pre_hook_that_times_out_is_stopped_reported_and_the_compaction_goes_on(
    tmp_path: Path, setup: tuple[Session, CompactContext, SessionStore]
) -> None:
    session, ctx, _ = setup
    ctx.hooks = Hooks(pre=[Hook(script(tmp_path, "slow", "time.sleep(30)\n"), timeout=0.5)])
    started = time.monotonic()
    result = await compact(session, CompactRequest(direction="all"), ctx)
    assert time.monotonic() - started < 10
    assert session.compactions == 1
    assert any("took longer than 0.5 s and was stopped" in w for w in result.warnings)


async def test_a_pre_hook_adds_instructions_from_its_json(
    tmp_path: Path, setup: tuple[Session, CompactContext, SessionStore]
) -> None:
    session, ctx, _ = setup
    printed = json.dumps({"instructions": "Keep every SQL query verbatim."})
    ctx.hooks = Hooks(pre=[Hook(script(tmp_path, "adds", f"print({printed!r})\n"))])
    await compact(session, CompactRequest(direction="all", instructions="Be brief."), ctx)
    boundary = session.boundaries[session.active[-1]]
    assert boundary.instructions is not None
    assert "Be brief." in boundary.instructions
    assert "Keep every SQL query verbatim." in boundary.instructions


async def test_the_post_hook_gets_the_result_and_a_failing_one_is_reported(
    tmp_path: Path, setup: tuple[Session, CompactContext, SessionStore]
) -> None:
    session, ctx, _ = setup
    seen = tmp_path / "post.json"
    told = script(tmp_path, "post", f"open({str(seen)!r}, 'w').write(sys.stdin.read())\n")
    failing = script(tmp_path, "fail", "print('disk full', file=sys.stderr)\nsys.exit(1)\n")
    ctx.hooks = Hooks(pre=[Hook(failing)], post=[Hook(told), Hook(failing)])
    result = await compact(session, CompactRequest(direction="all"), ctx)
    assert session.compactions == 1
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "PostCompact"
    assert payload["result"]["boundaryId"] == result.boundary_id
    assert payload["result"]["postTokens"] == result.post_tokens
    assert [w for w in result.warnings if "disk full" in w] == [
        f"the PreCompact hook `{' '.join(failing)}` failed (1): disk full",
        f"the PostCompact hook `{' '.join(failing)}` failed (1): disk full",
    ]


async def test_the_matcher_picks_the_trigger_and_dry_runs_run_no_hook(
    tmp_path: Path, setup: tuple[Session, CompactContext, SessionStore]
) -> None:
    session, ctx, _ = setup
    block = script(tmp_path, "block", "sys.exit(2)\n")
    ctx.hooks = Hooks(pre=[Hook(block, matcher="auto")])
    await compact(session, CompactRequest(direction="all", dry_run=True, trigger="auto"), ctx)
    await compact(session, CompactRequest(direction="all"), ctx)  # manual: not matched
    assert session.compactions == 1


def test_the_hooks_file_is_the_users_and_settings_cannot_name_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "hooks.json"
    monkeypatch.setenv(HOOKS_FILE_ENV, str(path))
    assert hooks_file() == path
    assert load_hooks() == Hooks()  # no file: no hooks
    path.write_text(
        json.dumps(
            {
                "PreCompact": [{"command": "echo hi", "matcher": "manual", "timeout": 5}],
                "PostCompact": [{"command": ["notify", "done"]}, {"nope": 1}],
            }
        )
    )
    hooks = load_hooks()
    assert hooks.pre == [Hook("echo hi", "manual", 5.0)]
    assert hooks.post == [Hook(["notify", "done"])]
    assert hooks.problems and "PostCompact hook 2 needs a command" in hooks.problems[0]
    path.write_text("{not json")
    assert "cannot be read" in load_hooks().problems[0]
    # the editor's settings (workspace ones included) have no hooks key: it is ignored
    settings = parse_settings({"hooks": {"PreCompact": [{"command": "rm -rf /"}]}})
    assert "hooks" not in settings.model_dump()


async def test_the_service_reads_the_hooks_file_for_each_compaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from baton.core.service.service import BatonService

    path = tmp_path / "hooks.json"
    monkeypatch.setenv(HOOKS_FILE_ENV, str(path))
    path.write_text(json.dumps({"PreCompact": [{"command": [PY, "-c", "raise SystemExit(2)"]}]}))
    service = BatonService(Settings(data_dir=str(tmp_path / "data")))
    try:
        ctx = service.compaction.context()
        assert ctx.hooks is not None and len(ctx.hooks.pre) == 1
    finally:
        await service.close()


async def test_every_compaction_path_of_the_service_runs_the_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The offline summarizer's compaction (in the session's lane, as auto and idle
    compaction run too) and a draft's apply: a blocking PreCompact stops each, a PostCompact
    is told of each. They skipped both."""
    from baton.core.service.service import BatonService

    hooks = tmp_path / "hooks.json"
    told = tmp_path / "told.jsonl"
    post = script(tmp_path, "post", f"open({str(told)!r}, 'a').write(sys.stdin.read() + '\\n')\n")
    block = [PY, "-c", "raise SystemExit(2)"]
    monkeypatch.setenv(HOOKS_FILE_ENV, str(hooks))
    service = BatonService(
        parse_settings({"dataDir": str(tmp_path / "data"), "summarizer": "extractive",
                        "keepWindow": {"minTokens": 300, "minTextMessages": 2}})
    )  # fmt: skip
    try:
        sid = service.create(title="hooks").session_id
        service.append(sid, chatter())
        draft = await service.drafts.preview(sid, CompactRequest(direction="all"))

        hooks.write_text(json.dumps({"PreCompact": [{"command": block}]}))
        with pytest.raises(CompactionBlocked):
            await service.compaction.compact(sid, CompactRequest(direction="all"))
        with pytest.raises(CompactionBlocked):
            await service.drafts.apply(sid, draft.draft_id)
        assert service.session(sid).compactions == 0

        hooks.write_text(json.dumps({"PostCompact": [{"command": post}]}))
        applied = await service.drafts.apply(sid, draft.draft_id)  # the draft is still there
        service.compaction.uncompact(sid, applied.boundary_id)
        await service.compaction.compact(sid, CompactRequest(direction="all"))
        results = [json.loads(line)["result"] for line in told.read_text().splitlines()]
        assert len(results) == 2 and results[0]["boundaryId"] == applied.boundary_id
    finally:
        await service.close()


async def test_a_commit_is_told_before_the_post_hooks_and_a_cancel_meanwhile_comes_too_late(
    tmp_path: Path, setup: tuple[Session, CompactContext, SessionStore]
) -> None:
    """The compaction is done once it commits: `committed` is told then (the service
    announces the change), and a cancel while the PostCompact hook runs changes nothing
    more: the hook runs to its end and the result is returned. The cancel used to skip the
    announcement of a compaction committed all the same."""
    session, ctx, _ = setup
    started, release, finished = (tmp_path / name for name in ("started", "release", "finished"))
    held = (
        f"import pathlib\npathlib.Path({str(started)!r}).touch()\n"
        f"while not pathlib.Path({str(release)!r}).exists():\n    time.sleep(0.02)\n"
        f"pathlib.Path({str(finished)!r}).touch()\n"
    )
    ctx.hooks = Hooks(post=[Hook(script(tmp_path, "held", held))])
    told: list[tuple[str, int, bool]] = []
    ctx.committed = lambda result: told.append(
        (result.boundary_id, session.compactions, started.exists())
    )
    task = asyncio.ensure_future(compact(session, CompactRequest(direction="all"), ctx))
    deadline = time.monotonic() + 20
    while not started.exists():
        assert time.monotonic() < deadline, "the PostCompact hook never started"
        await asyncio.sleep(0.02)
    assert told == [(session.active[-1], 1, False)]  # told before the hook started
    task.cancel()
    await asyncio.sleep(0)  # the cancel reaches the compaction while its hook runs
    release.touch()
    result = await task
    assert result.boundary_id == told[0][0] and finished.exists()
    assert not session.compacting
    assert not task.cancelled() and len(told) == 1
