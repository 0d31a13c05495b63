"""The files a session's own work touched come back after a compaction whichever server
runs it: they are read from the session's messages (tool calls that read or edited a file,
Claude Code's included, and prompts' attachments), not from one server's memory, and one
session's reads never come back in another."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from baton.core.compaction.result import CompactRequest
from baton.core.compaction.working_set.session_files import session_files
from baton.core.conversation.messages import (
    Attachment,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.importers.claude_code import import_claude_code
from baton.core.service.service import BatonService
from baton.core.tools.host import DiskHost
from baton.core.usage.estimator import Encoder, Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block
from baton_testkit.services import service_on as make_service

APP = "def main():\n    return 42\n" * 60


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text(APP)
    (folder / "notes.md").write_text("# notes\n" * 40)
    return folder


def service_on(data: Path, workspace: Path, estimator: Estimator) -> BatonService:
    return make_service(data, estimator, workspace)


async def read_then_chat(service: BatonService, fake: FakeAnthropic, title: str) -> str:
    sid = service.create(title, model="claude-haiku-4-5").session_id
    fake.reply(tool_use_block("read_file", {"path": "src/app.py"}), stop_reason="tool_use")
    fake.reply("Read it. " * 50, usage={"input_tokens": 3_200})
    await service.replies.send(sid, "read src/app.py please " * 20, host=DiskHost())
    for n in range(4):
        fake.reply(f"Answer {n}. " * 150, usage={"input_tokens": 4_000 + 1_500 * n})
        await service.replies.send(sid, f"question {n} " * 80, host=DiskHost())
    return sid


def restored(service: BatonService, sid: str) -> list[str]:
    view = service.session(sid).view_messages()
    return [m.attachment.path for m in view if m.kind == "attachment" and m.attachment]


async def restored_on_import(
    tmp_path: Path, workspace: Path, estimator: Estimator, lines: list[str]
) -> list[str]:
    """The URIs of the files a compaction of the whole restores, in the session imported
    from a Claude Code file of `lines`."""
    source = tmp_path / "cc.jsonl"
    source.write_text("\n".join(lines) + "\n")
    service = service_on(tmp_path / "data", workspace, estimator)
    try:
        session = import_claude_code(source, service.store)
        result = await service.compaction.compact(
            session.session_id, CompactRequest(direction="all")
        )
        return [f.uri for f in result.restored_files]
    finally:
        await service.close()


async def test_a_restarted_server_restores_what_the_sessions_tools_read(
    tmp_path: Path,
    workspace: Path,
    estimator: Estimator,
    cl100k: Encoder,
    fake_anthropic: FakeAnthropic,
) -> None:
    warm = service_on(tmp_path / "data", workspace, estimator)
    try:
        sid = await read_then_chat(warm, fake_anthropic, "reads")
        shutil.copytree(tmp_path / "data", tmp_path / "copy")
        cold = service_on(tmp_path / "copy", workspace, Estimator(encoder=cl100k))
        try:
            by_warm = await warm.compaction.compact(sid, CompactRequest(direction="all"))
            by_cold = await cold.compaction.compact(sid, CompactRequest(direction="all"))
            assert [f.uri for f in by_cold.restored_files] == [
                (workspace / "src" / "app.py").as_uri()
            ]
            assert by_cold.restored_files == by_warm.restored_files
            assert restored(cold, sid) == restored(warm, sid)
            assert abs(by_cold.post_tokens - by_warm.post_tokens) <= 5  # the ids differ
        finally:
            await cold.close()
    finally:
        await warm.close()


async def test_a_draft_applied_by_a_restarted_server_gives_its_figure(
    tmp_path: Path,
    workspace: Path,
    estimator: Estimator,
    cl100k: Encoder,
    fake_anthropic: FakeAnthropic,
) -> None:
    data = tmp_path / "data"
    warm = service_on(data, workspace, estimator)
    try:
        sid = await read_then_chat(warm, fake_anthropic, "draft")
        draft = await warm.drafts.preview(sid, CompactRequest(direction="all"))
    finally:
        await warm.close()
    cold = service_on(data, workspace, Estimator(encoder=cl100k))
    try:
        result = await cold.drafts.apply(sid, draft.draft_id)
        assert result.restored_files == draft.restored_files != []
        assert result.post_tokens == draft.post_tokens
    finally:
        await cold.close()


async def test_another_sessions_reads_are_not_restored(
    tmp_path: Path, workspace: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    service = service_on(tmp_path / "data", workspace, estimator)
    try:
        other = service.create("b", model="claude-haiku-4-5").session_id
        for n in range(5):
            fake_anthropic.reply(f"B answer {n}. " * 150, usage={"input_tokens": 2_000 + 1_500 * n})
            await service.replies.send(other, f"b question {n} " * 80)
        await read_then_chat(service, fake_anthropic, "a")
        result = await service.compaction.compact(other, CompactRequest(direction="all"))
        assert result.restored_files == []
    finally:
        await service.close()


def _call(
    call_id: str, name: str, tool_input: dict[str, object], error: bool = False
) -> list[Message]:
    return [
        Message(role="assistant", content=[ToolUseBlock(id=call_id, name=name, input=tool_input)]),
        Message(
            role="user",
            content=[ToolResultBlock(tool_use_id=call_id, content="ok", is_error=error)],
        ),
    ]


def test_which_calls_and_prompts_count(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    app, notes = workspace / "src" / "app.py", workspace / "notes.md"
    attached = Message(
        role="user",
        kind="attachment",
        content=[TextBlock(text=f"Attached file: {notes}")],
        attachment=Attachment(path=str(notes), label="Attached file", kind="file"),
    )
    messages = [
        *_call("t1", "read_file", {"path": "src/app.py"}),
        *_call("t2", "read_file", {"path": "missing.py"}),  # gone: nothing to restore
        *_call("t3", "read_file", {"path": "notes.md"}, error=True),  # refused: not read
        *_call("t4", "list_dir", {"path": "src"}),  # no file
        *_call("t5", "Read", {"file_path": str(outside)}),  # the restore refuses it later
        attached,
        Message(role="assistant", content=[ToolUseBlock(id="t6", name="Read", input={})]),
    ]
    for n, message in enumerate(messages):
        message.created_at = f"2026-03-01T10:00:{n:02d}.000Z"

    found = session_files(messages, [workspace])

    assert [f.path for f in found] == [notes, outside, app]  # newest first
    again = session_files([*messages, *_call("t7", "edit_file", {"path": str(app)})], [workspace])
    assert again[0].path == app  # touched again: newest, once
    assert len(again) == 3


async def test_an_imported_claude_code_session_restores_what_claude_code_read(
    tmp_path: Path, workspace: Path, estimator: Estimator
) -> None:
    app = workspace / "src" / "app.py"

    def record(n: int, kind: str, content: object) -> str:
        return json.dumps(
            {
                "type": kind,
                "uuid": f"u{n}",
                "parentUuid": f"u{n - 1}" if n else None,
                "sessionId": "cc-1",
                "timestamp": f"2026-03-01T10:{n:02d}:00.000Z",
                "message": {"role": kind, "content": content},
            }
        )

    lines = [record(0, "user", "look at the app " * 30)]
    lines.append(
        record(
            1,
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "toolu_r",
                    "name": "Read",
                    "input": {"file_path": str(app)},
                }
            ],
        )
    )
    lines.append(
        record(2, "user", [{"type": "tool_result", "tool_use_id": "toolu_r", "content": APP}])
    )
    for n in range(3, 13):
        role = "assistant" if n % 2 else "user"
        lines.append(record(n, role, f"turn {n} " * 120))
    assert await restored_on_import(tmp_path, workspace, estimator, lines) == [app.as_uri()]


async def test_a_file_claude_code_1_0_read_for_a_prompt_comes_back_after_a_compaction(
    tmp_path: Path, workspace: Path, estimator: Estimator
) -> None:
    """Claude Code 1.0 wrote a file the prompt named with @ as the prompt's inline read
    ("Called the Read tool ..." then its result), not as a tool call: a compaction that
    summarized it restored nothing, and the model was left with the file's name in the
    summary and none of its text, where a tool call's read, or Baton's attached file,
    comes back."""
    app = workspace / "src" / "app.py"
    called = "Called the Read tool with the following input: " + json.dumps({"file_path": str(app)})
    numbered = "".join(f"{n:6}\u2192{line}\n" for n, line in enumerate(APP.splitlines(), 1))
    contents: list[tuple[str, str]] = [
        ("user", "look at @src/app.py " * 30),
        ("user", called),
        ("user", "Result of calling the Read tool: " + json.dumps(numbered)),
    ]
    contents += [("assistant" if n % 2 else "user", f"turn {n} " * 120) for n in range(3, 13)]
    lines = [
        json.dumps(
            {
                "type": role,
                "uuid": f"u{n}",
                "parentUuid": f"u{n - 1}" if n else None,
                "sessionId": "cc-1",
                "timestamp": f"2026-03-01T10:{n:02d}:00.000Z",
                "message": {"role": role, "content": content},
                **({"isMeta": True} if n in (1, 2) else {}),
            }
        )
        for n, (role, content) in enumerate(contents)
    ]
    assert await restored_on_import(tmp_path, workspace, estimator, lines) == [app.as_uri()]


async def test_a_restored_file_is_counted_as_the_meter_counts_a_message(
    tmp_path: Path,
    workspace: Path,
    estimator: Estimator,
    cl100k: Encoder,
    fake_anthropic: FakeAnthropic,
) -> None:
    """A restored file's message holds its framing too: its stored count is the one the
    meter would make of it (the restore's figure is the file's text alone)."""
    service = service_on(tmp_path / "data", workspace, estimator)
    try:
        sid = await read_then_chat(service, fake_anthropic, "reads")
        result = await service.compaction.compact(sid, CompactRequest(direction="all"))
        view = service.session(sid).view_messages()
        [attachment] = [m for m in view if m.kind == "attachment" and m.attachment]
        assert attachment.tokens == Estimator(encoder=cl100k).count_message(attachment)
        assert [f.tokens for f in result.restored_files] == [attachment.tokens - 4]
    finally:
        await service.close()
