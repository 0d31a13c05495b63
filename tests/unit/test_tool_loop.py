"""The server's tool loop inside a send: rounds, permission levels, denials told to the
model, allowSession, cancelling while a call waits, the step cap, compaction mid-loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction.automatic.auto import AutoCompactor
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import KeepWindowSettings, Settings, ToolsSettings
from baton.core.settings_lists import DEFAULT_EXCLUDES
from baton.core.tools.calls import CANCELLED
from baton.core.tools.catalog import workspace_registry
from baton.core.tools.host import DiskHost, PermissionOutcome, PermissionRequest
from baton.core.tools.registry import ToolContext
from baton.core.tools.workspace import Workspace
from baton.core.turn.chat import ChatContext, send
from baton.core.turn.tool_loop import ServerTools
from baton.core.usage.estimator import Estimator
from baton.core.workspace.editor_files import EditorFiles
from baton_testkit.fake_anthropic import FakeAnthropic, cut_tool_use_block, tool_use_block

MODEL = "claude-haiku-4-5"
MakeClient = Callable[..., AnthropicClient]
EDIT = "str_replace_based_edit_tool"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "utils.py").write_text("def parse_date(s):\n    return s\n")
    return folder


@pytest.fixture
def session(store: SessionStore) -> Session:
    return store.create("tools", MODEL, "You edit code.")


def server_tools(
    root: Path, host: Any, settings: ToolsSettings | None = None, **kw: Any
) -> ServerTools:
    tools = settings or ToolsSettings()
    context = ToolContext("s", Workspace([root], DEFAULT_EXCLUDES), host, tools, **kw)
    return ServerTools(workspace_registry(MODEL), context, set(), tools.max_steps)


def chat(
    client: AnthropicClient, estimator: Estimator, tools: ServerTools, **kw: Any
) -> ChatContext:
    return ChatContext(
        settings=Settings(), estimator=estimator, client=client, server_tools=tools, **kw
    )


def rename(use_id: str = "toolu_e") -> dict[str, Any]:
    input = {
        "command": "str_replace",
        "path": "utils.py",
        "old_str": "parse_date",
        "new_str": "parse_day",
    }
    return tool_use_block(EDIT, input, id=use_id)


def results(fake: FakeAnthropic, request: int) -> list[dict[str, Any]]:
    last = fake.message_requests()[request].body["messages"][-1]
    return [b for b in last["content"] if b["type"] == "tool_result"]


async def test_a_read_round_runs_on_the_server_and_the_model_is_asked_again(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    fake_anthropic.reply(
        tool_use_block("read_file", {"path": "utils.py"}, id="toolu_r"), stop_reason="tool_use"
    )
    fake_anthropic.reply("It defines parse_date.")
    steps: list[int] = []
    ctx = chat(
        anthropic_client(),
        estimator,
        server_tools(root, DiskHost()),
        on_step=lambda: steps.append(len(session.view)),
    )
    result = await send(session, content="what is in utils.py?", tools=None, ctx=ctx)

    assert result.message.text() == "It defines parse_date."
    first, _ = fake_anthropic.message_requests()
    assert [t["name"] for t in first.body["tools"]] == [
        "read_file",
        "list_dir",
        "find_files",
        "search_text",
        EDIT,
    ]
    assert results(fake_anthropic, 1) == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_r",
            "content": "     1\tdef parse_date(s):\n     2\t    return s",
        }
    ]
    assert [m.role for m in session.view_messages()] == ["user", "assistant", "user", "assistant"]
    assert invariant_violations(session.view_messages()) == []
    assert 3 in steps  # the tool results were a visible step before the model was asked again


async def test_a_send_with_its_own_tools_keeps_its_own_loop(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    mine = [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}]
    fake_anthropic.reply(tool_use_block("Read", {"file_path": "a"}), stop_reason="tool_use")
    ctx = chat(anthropic_client(), estimator, server_tools(root, DiskHost()))
    result = await send(session, content="go", tools=mine, ctx=ctx)
    assert result.message.stop_reason == "tool_use"
    assert fake_anthropic.message_requests()[0].body["tools"] == mine
    assert len(fake_anthropic.message_requests()) == 1


@pytest.mark.parametrize(
    ("level", "answer", "asked", "applied"),
    [
        ("ask", "allowOnce", 1, True),
        ("ask", "deny", 1, False),
        ("auto", "deny", 0, True),
        ("off", "allowOnce", 0, False),
    ],
)
async def test_each_permission_level(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
    level: str,
    answer: PermissionOutcome,
    asked: int,
    applied: bool,
) -> None:
    host = DiskHost(answer=answer)
    settings = ToolsSettings.model_validate({"permissions": {"edit": level}})
    fake_anthropic.reply(rename(), stop_reason="tool_use")
    fake_anthropic.reply("done")
    await send(
        session,
        content="rename",
        tools=None,
        ctx=chat(anthropic_client(), estimator, server_tools(root, host, settings)),
    )

    assert len(host.asked) == asked
    text = (root / "utils.py").read_text()
    assert ("parse_day" in text) is applied
    told = results(fake_anthropic, 1)[0]
    if applied:
        assert told["content"] == "Applied: Edit utils.py (+1 -1) at line 1."
    else:
        assert told["is_error"] is True and told["content"].startswith("Denied")
    if asked:
        request = host.asked[0]
        assert (request.title, request.kind, request.path) == (
            "Edit utils.py (+1 -1)",
            "edit",
            "utils.py",
        )
        assert "-def parse_date(s):\n+def parse_day(s):" in (request.diff or "")


async def test_a_host_that_cannot_ask_gets_off_for_an_ask_tool(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    host = DiskHost(answer="allowOnce", can_ask=False)
    fake_anthropic.reply(rename(), stop_reason="tool_use")
    fake_anthropic.reply("done")
    await send(
        session,
        content="rename",
        tools=None,
        ctx=chat(anthropic_client(), estimator, server_tools(root, host)),
    )
    assert host.asked == []
    told = results(fake_anthropic, 1)[0]["content"]
    assert "this editor cannot ask for it" in told and "off in this editor" not in told
    assert "parse_date" in (root / "utils.py").read_text()


async def test_allow_for_the_session_is_remembered(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    host = DiskHost(answer="allowSession")
    tools = server_tools(root, host)
    fake_anthropic.reply(rename("toolu_1"), stop_reason="tool_use")
    back = {
        "command": "str_replace",
        "path": "utils.py",
        "old_str": "parse_day",
        "new_str": "parse_date",
    }
    fake_anthropic.reply(tool_use_block(EDIT, back, id="toolu_2"), stop_reason="tool_use")
    fake_anthropic.reply("done")
    await send(
        session, content="rename twice", tools=None, ctx=chat(anthropic_client(), estimator, tools)
    )
    assert len(host.asked) == 1
    assert tools.allowed == {"edit"}
    assert results(fake_anthropic, 2)[0]["content"].startswith("Applied")


async def test_a_turn_cancelled_while_waiting_for_approval_keeps_a_valid_transcript(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    waiting = asyncio.Event()

    class Slow(DiskHost):
        async def ask_permission(self, request: PermissionRequest) -> PermissionOutcome:
            waiting.set()
            await asyncio.Event().wait()  # the user never answers
            return "allowOnce"

    fake_anthropic.reply(
        tool_use_block("read_file", {"path": "utils.py"}, id="toolu_r"),
        rename(),
        stop_reason="tool_use",
    )
    ctx = chat(anthropic_client(), estimator, server_tools(root, Slow()))
    task = asyncio.ensure_future(send(session, content="rename it", tools=None, ctx=ctx))
    await asyncio.wait_for(waiting.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    view = session.view_messages()
    assert [m.role for m in view] == ["user", "assistant", "user"]
    assert view[0].text() == "rename it"
    answered = {r.tool_use_id: r for r in view[2].tool_results()}
    assert answered["toolu_r"].content.startswith("     1\tdef parse_date")  # type: ignore[union-attr]
    assert answered["toolu_e"].content == CANCELLED and answered["toolu_e"].is_error
    assert invariant_violations(view) == []
    assert "parse_date" in (root / "utils.py").read_text()
    # the next send continues from a valid conversation
    fake_anthropic.reply("stopped")
    assert (
        await send(session, content="never mind", tools=None, ctx=ctx)
    ).message.text() == "stopped"


async def test_a_call_cut_by_max_tokens_is_not_run_and_the_model_is_told_why(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    # the reply ran out of output tokens inside its second call: the SDK reads the partial
    # JSON as {"command": "insert", "path": "utils.py", "new_str": ..., "insert_line": 1}
    # where the model was writing 12, which would insert at the wrong line
    partial = '{"command": "insert", "path": "utils.py", "new_str": "# note\\n", "insert_line": 1'
    fake_anthropic.reply(
        "Reading, then editing.",
        tool_use_block("read_file", {"path": "utils.py"}, id="toolu_r"),
        cut_tool_use_block(EDIT, partial, id="toolu_cut"),
        stop_reason="max_tokens",
    )
    fake_anthropic.reply("I will split it.")
    host = DiskHost(answer="allowOnce")
    ctx = chat(anthropic_client(), estimator, server_tools(root, host))
    result = await send(session, content="add a note", tools=None, ctx=ctx)

    assert result.message.text() == "I will split it."
    assert (root / "utils.py").read_text() == "def parse_date(s):\n    return s\n"
    assert host.asked == []  # nobody is asked about a call that cannot run
    read, cut = results(fake_anthropic, 1)
    assert read["tool_use_id"] == "toolu_r" and read["content"].startswith("     1\tdef")
    assert cut["tool_use_id"] == "toolu_cut" and cut["is_error"] is True
    assert "output limit (max_tokens)" in cut["content"]
    assert invariant_violations(session.view_messages()) == []


async def test_the_calls_of_a_refused_reply_are_not_run_and_the_turn_ends(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    # the API's streaming classifier stopped the reply (stop_reason refusal): what it cut
    # is no call the model finished, and asking again without a change is refused again
    fake_anthropic.reply("Renaming it.", rename(), stop_reason="refusal")
    host = DiskHost(answer="allowOnce")
    ctx = chat(anthropic_client(), estimator, server_tools(root, host))
    result = await send(session, content="rename parse_date", tools=None, ctx=ctx)

    assert result.message.stop_reason == "refusal"
    assert len(fake_anthropic.message_requests()) == 1
    assert "parse_date" in (root / "utils.py").read_text() and host.asked == []
    # the reply and the answer to its call leave the view together (a rewind), kept in
    # the transcript: undone, the call is answered as refused
    assert result.set_aside is not None
    assert [m.role for m in session.view_messages()] == ["user"]
    session.uncompact(result.set_aside.id)
    answered = session.view_messages()[-1].tool_results()
    assert [r.tool_use_id for r in answered] == ["toolu_e"] and answered[0].is_error
    assert "refused" in str(answered[0].content)
    assert invariant_violations(session.view_messages()) == []


async def test_replies_that_share_an_api_id_stay_replies_of_their_own(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    # a gateway that gives every response the same id: records sharing an id are one
    # response's (parallel tool calls), and the API's rules keep them together
    api_id = "msg_same"
    fake_anthropic.reply(tool_use_block("list_dir", {}, id="toolu_1"), message_id=api_id)
    fake_anthropic.reply("Listed.", message_id=api_id)
    fake_anthropic.reply("Next.", message_id=api_id)
    ctx = chat(anthropic_client(), estimator, server_tools(root, DiskHost()))
    await send(session, content="list it", tools=None, ctx=ctx)
    result = await send(session, content="and then?", tools=None, ctx=ctx)

    assert result.message.text() == "Next."
    assert [m.role for m in session.view_messages()] == [
        "user", "assistant", "user", "assistant", "user", "assistant"
    ]  # fmt: skip
    last = fake_anthropic.message_requests()[-1].body["messages"]
    assert [[b["type"] for b in turn["content"]] for turn in last] == [
        ["text"], ["tool_use"], ["tool_result"], ["text"], ["text"]
    ]  # fmt: skip
    assert invariant_violations(session.view_messages()) == []


async def test_the_step_cap_answers_the_last_calls_and_ends_the_turn(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    settings = ToolsSettings(max_steps=2)
    for n in range(3):
        fake_anthropic.reply(
            tool_use_block("list_dir", {}, id=f"toolu_{n}"), stop_reason="tool_use"
        )
    ctx = chat(anthropic_client(), estimator, server_tools(root, DiskHost(), settings))
    result = await send(session, content="loop", tools=None, ctx=ctx)
    assert result.message.tool_uses()[0].id == "toolu_2"
    assert len(fake_anthropic.message_requests()) == 3
    last = session.view_messages()[-1].tool_results()[0]
    assert last.tool_use_id == "toolu_2" and "limit of 2 tool rounds" in str(last.content)
    assert invariant_violations(session.view_messages()) == []


async def test_a_compaction_in_the_middle_of_a_loop_keeps_it_valid_and_restores_the_files(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
    root: Path,
) -> None:
    settings = Settings(
        context_window=14_000,
        keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=1, max_tokens=2_000),
    )
    for turn in range(3):
        session.append(
            [
                MessageInput(
                    role="user",
                    content=f"step {turn}: " + " ".join(f"w{i % 10}" for i in range(600)),
                ),
                MessageInput(
                    role="assistant",
                    content=f"did step {turn}: " + " ".join(f"v{i % 10}" for i in range(600)),
                ),
            ]
        )
    (root / "big.txt").write_text("".join(f"row {n} of the big table\n" for n in range(900)))
    files = EditorFiles()

    def compact_context() -> CompactContext:
        return CompactContext(
            settings, estimator, ExtractiveSummarizer(estimator.count_text), files, [root]
        )

    host = DiskHost(answer="allowOnce")
    tools = server_tools(root, host)  # the files it reads: the session's, for the restore
    ctx = ChatContext(
        settings=settings,
        estimator=estimator,
        client=anthropic_client(),
        server_tools=tools,
        auto=AutoCompactor(compact_context),
        compact_context=compact_context,
    )
    fake_anthropic.reply(
        rename(), stop_reason="tool_use", usage={"input_tokens": 7_500, "output_tokens": 40}
    )
    fake_anthropic.reply("Renamed.", usage={"input_tokens": 7_600, "output_tokens": 5})
    await send(session, content="rename parse_date", tools=None, ctx=ctx)
    assert session.compactions == 0
    fake_anthropic.reply(
        tool_use_block("read_file", {"path": "big.txt"}, id="toolu_big"), stop_reason="tool_use"
    )
    fake_anthropic.reply("All done.")
    result = await send(session, content="now read big.txt", tools=None, ctx=ctx)

    assert result.message.text() == "All done."
    assert session.compactions == 1  # between the read and the reply to it
    requests = fake_anthropic.message_requests()
    assert len(requests) == 4
    before, after = requests[2].body["messages"], requests[3].body["messages"]
    assert not before[0]["content"][0]["text"].startswith("This session continues")
    assert after[0]["content"][0]["text"].startswith("This session continues")
    # the open round (a 10k-token result, over the kept window) went into the summary
    # whole: no call is left without its result, and both files come back restored
    uses = {b["id"] for m in after for b in m["content"] if b["type"] == "tool_use"}
    answered = {b["tool_use_id"] for m in after for b in m["content"] if b["type"] == "tool_result"}
    assert uses == answered
    restored = [m for m in session.view_messages() if m.kind == "attachment"]
    paths = {m.attachment.path for m in restored if m.attachment}
    assert paths == {str(root / "utils.py"), str(root / "big.txt")}
    utils = next(m for m in restored if m.attachment and m.attachment.path.endswith("utils.py"))
    assert "parse_day" in utils.text()  # the edited file, as it is now
    assert invariant_violations(session.view_messages()) == []
