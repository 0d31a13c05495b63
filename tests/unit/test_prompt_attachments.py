"""Attachments sent with a prompt: stored as `attachment` messages before it, counted in
the breakdown, contained by the tools' rules, refused whole when one cannot be attached."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from baton.core.conversation.messages import LineRange
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import Settings
from baton.core.settings_lists import DEFAULT_EXCLUDES
from baton.core.tools.attachments import EditorAttachment, attachment_messages
from baton.core.tools.workspace import Workspace
from baton.core.turn.chat import ChatContext, send
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage
from baton_testkit.fake_anthropic import FakeAnthropic

MakeClient = Callable[..., AnthropicClient]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    return folder


async def test_attachments_go_before_the_prompt_and_are_counted(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
    root: Path,
) -> None:
    session: Session = store.create("a", "claude-haiku-4-5", None)
    items = [
        EditorAttachment("file", str(root / "app.py"), range=LineRange(start_line=2, end_line=3)),
        EditorAttachment(
            "selection", (root / "app.py").as_uri(), text="line 7\n", language_id="python"
        ),
    ]
    made = await attachment_messages(items, Workspace([root], DEFAULT_EXCLUDES), None)
    ctx = ChatContext(settings=Settings(), estimator=estimator, client=anthropic_client())
    await send(session, content="explain", tools=None, ctx=ctx, attachments=made)

    view = session.view_messages()
    assert [m.kind for m in view] == ["attachment", "attachment", "message", "message"]
    first, second = view[0], view[1]
    assert first.attachment is not None and first.attachment.kind == "file"
    assert first.attachment.range == LineRange(start_line=2, end_line=3)
    assert first.text() == f"Attached file: {root / 'app.py'} (lines 2-3)\n```\nline 2\nline 3\n```"
    assert second.text().startswith(f"Selection: {root / 'app.py'}\n```python\nline 7\n")
    sent = fake_anthropic.message_requests()[0].body["messages"]
    assert sent[0]["content"][0]["text"].startswith("Attached file:")
    assert sent[-1]["content"][-1]["text"] == "explain"
    usage = compute_usage(session, Settings(), estimator)
    # the reply's real usage is shared out in proportion: the attachments outweigh the prompt
    assert usage.breakdown.attachments > usage.breakdown.messages > 0


@pytest.mark.parametrize("name", ["../secret.txt", ".env"])
async def test_an_attachment_that_cannot_be_attached_is_refused(root: Path, name: str) -> None:
    (root.parent / "secret.txt").write_text("x\n")
    (root / ".env").write_text("KEY=1\n")
    items = [
        EditorAttachment("file", str(root / "app.py")),
        EditorAttachment("file", str(root / name)),
    ]
    with pytest.raises(InvalidParams, match=r"attachments\[1\]"):
        await attachment_messages(items, Workspace([root], DEFAULT_EXCLUDES), None)


@pytest.mark.parametrize("odd", ["\x0c", "\x1c", "\x85", "\u2028"])
async def test_a_range_takes_the_editors_lines(root: Path, odd: str) -> None:
    """str.splitlines broke at form feeds and Unicode separators too: lines 4-5 of this
    file came out as lines 3-4 of the editor's."""
    path = root / "mod.py"
    path.write_text(f"def a():\n    pass\n{odd}\ndef b():\n    return 'B'\n")
    item = EditorAttachment("selection", str(path), range=LineRange(start_line=4, end_line=5))
    [message] = await attachment_messages([item], Workspace([root], DEFAULT_EXCLUDES), None)
    assert "def b():\n    return 'B'\n```" in message.text()
    crlf = root / "win.py"
    crlf.write_bytes(b"one\r\ntwo\rthree\nfour\r\n")
    item = EditorAttachment("selection", str(crlf), range=LineRange(start_line=2, end_line=3))
    [message] = await attachment_messages([item], Workspace([root], DEFAULT_EXCLUDES), None)
    assert "two\rthree\n```" in message.text()


async def test_a_range_past_the_files_end_is_refused(root: Path) -> None:
    """A range the file no longer reaches (it shrank since the editor took it) was attached
    as nothing under its heading: 'Attached file: app.py (lines 200-210)' and an empty
    block, which says the file is empty there."""
    item = EditorAttachment(
        "file", str(root / "app.py"), range=LineRange(start_line=200, end_line=210)
    )
    with pytest.raises(
        InvalidParams,
        match=r"attachments\[0\]: range.startLine 200 is past the end of app.py \(100 lines\)",
    ):
        await attachment_messages([item], Workspace([root], DEFAULT_EXCLUDES), None)
    tail = EditorAttachment(
        "file", str(root / "app.py"), range=LineRange(start_line=99, end_line=120)
    )
    [message] = await attachment_messages([tail], Workspace([root], DEFAULT_EXCLUDES), None)
    assert message.text().startswith(
        f"Attached file: {root / 'app.py'} (lines 99-100)\n```\nline 99\nline 100\n```"
    )
    (root / "empty.py").write_text("")
    empty = EditorAttachment(
        "file", str(root / "empty.py"), range=LineRange(start_line=1, end_line=3)
    )
    [message] = await attachment_messages([empty], Workspace([root], DEFAULT_EXCLUDES), None)
    assert message.text().startswith(f"Attached file: {root / 'empty.py'} (lines 1-1)\n```")
