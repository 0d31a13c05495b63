"""The task list and the plan after a compaction: the latest TodoWrite list's open items and
the latest plan-mode plan come back verbatim before the kept messages, round after round;
the todo tool the model calls; Claude Code's calls read on import."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction.engine import CompactContext, compact, uncompact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.compaction.working_set.plan_todos import (
    HEADING,
    TodoInputError,
    TodoItem,
    continuity_text,
    latest_plan,
    latest_todos,
)
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock, text_message
from baton.core.conversation.store import SessionStore
from baton.core.errors import NothingToCompact
from baton.core.importers.claude_code import import_claude_code
from baton.core.service.service import BatonService
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.tools.host import DiskHost
from baton.core.turn import todo_tool
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic, tool_use_block
from corpus_names import CORPUS_FILES


def todos(*items: tuple[str, str]) -> list[dict[str, str]]:
    return [{"content": c, "status": s, "activeForm": f"Doing: {c}"} for c, s in items]


def tool_call(
    call_id: str, name: str, tool_input: dict[str, Any], error: bool = False
) -> list[Message]:
    return [
        Message(role="assistant", content=[ToolUseBlock(id=call_id, name=name, input=tool_input)]),
        Message(
            role="user",
            content=[ToolResultBlock(tool_use_id=call_id, content="ok", is_error=error)],
        ),
    ]


def chatter(tag: str, turns: int = 12) -> list[Message]:
    out: list[Message] = []
    for n in range(turns):
        out.append(text_message("user", f"{tag}: step {n}, carry on with the work please."))
        out.append(text_message("assistant", f"Working on {tag} step {n}. " * 40))
    return out


def context() -> CompactContext:
    estimator = Estimator()
    settings = Settings(keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=2))
    return CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))


async def test_a_todo_list_survives_three_compactions(tmp_path: Path) -> None:
    ctx = context()
    store = SessionStore(tmp_path, ctx.estimator.count_message)
    session = store.create(title="todos")
    lists = [
        todos(("Write the parser", "in_progress"), ("Test it", "pending")),
        todos(("Write the parser", "completed"), ("Test it", "in_progress"), ("Ship", "pending")),
        todos(("Write the parser", "completed"), ("Test it", "completed"), ("Ship", "pending")),
    ]
    plan = "## Plan\n1. Parser\n2. Tests\n3. Ship it `now`"
    for round_, items in enumerate(lists):
        part = [text_message("user", f"Round {round_}: do the next part.")]
        part += tool_call(f"todo{round_}", "TodoWrite", {"todos": items})
        if round_ == 0:
            part += tool_call("plan0", "ExitPlanMode", {"plan": plan})
            part += tool_call("plan1", "ExitPlanMode", {"plan": "a rejected plan"}, error=True)
        part += [text_message("assistant", "Noted.")]
        part += chatter(f"round {round_}")
        session.append(part)
        await compact(session, CompactRequest(direction="all"), ctx)
        view = session.view_messages()
        assert not invariant_violations(view)
        assert view[0].kind == "summary"
        carried = view[1]
        assert carried.kind == "attachment" and carried.text().startswith(HEADING)
        text = carried.text()
        assert plan in text  # verbatim
        assert "a rejected plan" not in text
        for item in items:
            shown = f"- [{item['status']}] {item['content']}" in text
            assert shown == (item["status"] != "completed")
        # the kept messages follow it; the earlier list is gone
        assert sum(1 for m in view if m.text().startswith(HEADING)) == 1
    assert "- [pending] Ship" in session.view_messages()[1].text()
    uncompact(session)  # the same undo: the attachment goes with its compaction
    assert sum(1 for m in session.view_messages() if m.text().startswith(HEADING)) == 1
    store.close()


@pytest.mark.parametrize("finished", [False, True])
async def test_a_summary_compacted_alone_takes_its_stale_task_list_with_it(
    tmp_path: Path, finished: bool
) -> None:
    # compacting up to the first summary kept the list it brought back right after the new
    # summary's fresh one: the model read the stale list last ("[in_progress] Parse")
    ctx = context()
    store = SessionStore(tmp_path, ctx.estimator.count_message)
    session = store.create(title="second")
    first = todos(("Parse", "in_progress"), ("Test", "pending"))
    session.append(
        [text_message("user", "Go."), *tool_call("todo0", "TodoWrite", {"todos": first})]
    )
    session.append([text_message("assistant", "Started."), *chatter("one")])
    await compact(session, CompactRequest(direction="all"), ctx)
    old = session.view_messages()[1]
    assert old.text().startswith(HEADING)
    second = todos(("Parse", "completed"), ("Test", "completed" if finished else "in_progress"))
    session.append(
        [text_message("user", "Next."), *tool_call("todo1", "TodoWrite", {"todos": second})]
    )
    session.append([text_message("assistant", "Parsed."), *chatter("two", 2)])
    before = session.view

    request = CompactRequest(direction="up_to", pivot_message_id=session.view[0])
    await compact(session, request, ctx)

    view = session.view_messages()
    assert not invariant_violations(view)
    carried = [m.text() for m in view if m.text().startswith(HEADING)]
    assert old.id not in session.view
    # the fresh list is the kept TodoWrite call itself: no attachment repeats it
    assert carried == []
    assert "todo1" in {use.id for m in view for use in m.tool_uses()}
    uncompact(session)  # the old list comes back where it was
    assert session.view == before
    store.close()


async def test_a_rewound_task_list_is_not_the_latest_until_the_rewind_is_undone(
    tmp_path: Path,
) -> None:
    # an edited prompt's abandoned turns wrote a list; the conversation no longer stands on
    # it: the view's list and what a compaction restores are the one before
    ctx = context()
    store = SessionStore(tmp_path, ctx.estimator.count_message)
    session = store.create(title="rewound")
    kept = todos(("Write the parser", "in_progress"), ("Test it", "pending"))
    dropped = todos(("Rewrite everything", "in_progress"))
    session.append(
        [
            text_message("user", "Plan the parser."),
            *tool_call("todo0", "TodoWrite", {"todos": kept}),
            text_message("assistant", "Planned."),
            *chatter("work"),
        ]
    )
    edited = text_message("user", "A prompt with a typo: rewrite it all.")
    session.append(
        [
            edited,
            *tool_call("todo1", "TodoWrite", {"todos": dropped}),
            text_message("assistant", "Rewriting."),
        ]
    )
    assert [t.content for t in latest_todos(session.held_messages()) or []] == [
        "Rewrite everything"
    ]
    rewind = session.rewind(edited.id)
    assert [t.content for t in latest_todos(session.held_messages()) or []] == [
        "Write the parser",
        "Test it",
    ]
    session.append([text_message("user", "Carry on with the parser.")])
    session.append([text_message("assistant", "On it.")])
    await compact(session, CompactRequest(direction="all"), ctx)
    carried = next(m for m in session.view_messages() if m.text().startswith(HEADING))
    assert "- [in_progress] Write the parser" in carried.text()
    assert "Rewrite everything" not in carried.text()
    uncompact(session)
    session.uncompact(rewind.id)  # the abandoned turns come back, and with them their list
    assert [t.content for t in latest_todos(session.held_messages()) or []] == [
        "Rewrite everything"
    ]
    store.close()


async def test_a_task_list_the_kept_messages_show_is_not_restored_before_them(
    tmp_path: Path,
) -> None:
    # the latest TodoWrite call was kept: the attachment repeated its list just before it
    ctx = context()
    store = SessionStore(tmp_path, ctx.estimator.count_message)
    session = store.create(title="kept")
    earlier = todos(("Read the code", "in_progress"))
    plan = "## Plan\n1. Parser\n2. Tests"
    session.append(
        [
            text_message("user", "Look around."),
            *tool_call("todo0", "TodoWrite", {"todos": earlier}),
            *tool_call("plan0", "ExitPlanMode", {"plan": plan}),
            text_message("assistant", "Looked."),
            *chatter("look"),
        ]
    )
    latest = todos(("Read the code", "completed"), ("Write the parser", "in_progress"))
    session.append(
        [
            text_message("user", "Now write the parser."),
            *tool_call("todo1", "TodoWrite", {"todos": latest}),
            text_message("assistant", "Writing it."),
        ]
    )
    await compact(session, CompactRequest(direction="all"), ctx)
    view = session.view_messages()
    assert "todo1" in {use.id for m in view for use in m.tool_uses()}  # kept
    carried = [m.text() for m in view if m.text().startswith(HEADING)]
    assert len(carried) == 1 and plan in carried[0]  # the summarized plan comes back
    assert "Write the parser" not in carried[0] and "Open task list" not in carried[0]
    store.close()


def task_call(call_id: str, name: str, tool_input: dict[str, Any], answer: str) -> list[Message]:
    """A Claude Code 2.1 task call (TaskCreate, TaskUpdate) and its answer."""
    use = ToolUseBlock(id=call_id, name=name, input=tool_input)
    return [
        Message(role="assistant", content=[use]),
        Message(role="user", content=[ToolResultBlock(tool_use_id=call_id, content=answer)]),
    ]


async def test_claude_codes_task_calls_make_the_task_list_a_compaction_restores(
    tmp_path: Path,
) -> None:
    """Claude Code 2.1 keeps its task list with TaskCreate and TaskUpdate calls, not
    TodoWrite: a compaction of an imported session that summarized them restored no list,
    and the model was left without the tasks still open."""
    ctx = context()
    store = SessionStore(tmp_path, ctx.estimator.count_message)
    session = store.create(title="tasks")
    created = [
        task_call(f"c{n}", "TaskCreate", {"subject": subject, "activeForm": f"Doing {n}"}, answer)
        for n, subject, answer in [
            (1, "Write the parser", "Task #7 created successfully: Write the parser"),
            (2, "Test it", "Task #8 created successfully: Test it"),
            (3, "Ship", "Task #9 created successfully: Ship"),
            (4, "Dropped idea", "Task #10 created successfully: Dropped idea"),
        ]
    ]
    session.append(
        [
            text_message("user", "Plan the work as tasks."),
            *itertools.chain.from_iterable(created),
            *task_call("u1", "TaskUpdate", {"taskId": "7", "status": "completed"}, "Updated"),
            *task_call("u2", "TaskUpdate", {"taskId": "8", "status": "in_progress"}, "Updated"),
            *task_call("u3", "TaskUpdate", {"taskId": "10", "status": "deleted"}, "Deleted"),
            text_message("assistant", "Testing now."),
            *chatter("work"),
        ]
    )
    assert [(t.content, t.status) for t in latest_todos(session.held_messages()) or []] == [
        ("Write the parser", "completed"),
        ("Test it", "in_progress"),
        ("Ship", "pending"),
    ]

    await compact(session, CompactRequest(direction="all"), ctx)

    carried = [m.text() for m in session.view_messages() if m.text().startswith(HEADING)]
    assert len(carried) == 1
    assert "- [in_progress] Test it\n- [pending] Ship" in carried[0]
    assert "(1 completed not shown)" in carried[0] and "Dropped idea" not in carried[0]
    store.close()


async def test_a_plan_whose_task_list_was_all_completed_is_not_restored(tmp_path: Path) -> None:
    # the approved plan came back after every compaction, even once its list was done and
    # the user had moved on to another task with a new list
    ctx = context()
    store = SessionStore(tmp_path, ctx.estimator.count_message)
    session = store.create(title="done plan")
    plan = "## Plan\n1. Parser\n2. Tests"
    worked = todos(("Parser", "in_progress"), ("Tests", "pending"))
    done = todos(("Parser", "completed"), ("Tests", "completed"))
    session.append(
        [
            text_message("user", "Plan the parser."),
            *tool_call("plan0", "ExitPlanMode", {"plan": plan}),
            *tool_call("todo0", "TodoWrite", {"todos": worked}),
            *chatter("parser", 4),
            *tool_call("todo1", "TodoWrite", {"todos": done}),
            text_message("assistant", "The parser is done."),
        ]
    )
    assert latest_plan(session.held_messages()) is None  # done: its list was completed
    fresh = todos(("Write the docs", "in_progress"))
    session.append(
        [
            text_message("user", "Now the docs."),
            *tool_call("todo2", "TodoWrite", {"todos": fresh}),
            text_message("assistant", "Writing them."),
            *chatter("docs"),
        ]
    )
    await compact(session, CompactRequest(direction="all"), ctx)
    [carried] = [m.text() for m in session.view_messages() if m.text().startswith(HEADING)]
    assert "- [in_progress] Write the docs" in carried
    assert plan not in carried and "Plan (from plan mode)" not in carried
    store.close()


def test_a_plan_whose_claude_code_tasks_were_all_completed_is_done() -> None:
    """Claude Code 2.1 works a plan through with TaskCreate and TaskUpdate: a plan whose
    tasks were all completed came back after every compaction as work still to do."""
    plan = "## Plan\n1. Parser\n2. Tests"
    messages = [
        *tool_call("plan0", "ExitPlanMode", {"plan": plan}),
        *task_call("c1", "TaskCreate", {"subject": "Parser"}, "Task #1 created successfully"),
        *task_call("c2", "TaskCreate", {"subject": "Tests"}, "Task #2 created successfully"),
        *task_call("u1", "TaskUpdate", {"taskId": "1", "status": "completed"}, "Updated"),
    ]
    assert latest_plan(messages) == plan  # one task still open
    done = task_call("u2", "TaskUpdate", {"taskId": "2", "status": "completed"}, "Updated")
    assert latest_plan([*messages, *done]) is None


async def test_nothing_open_and_no_plan_adds_nothing(tmp_path: Path) -> None:
    ctx = context()
    store = SessionStore(tmp_path, ctx.estimator.count_message)
    session = store.create(title="done")
    part = [text_message("user", "Go.")]
    part += tool_call("t", "TodoWrite", {"todos": todos(("All", "completed"))})
    session.append([*part, text_message("assistant", "Done."), *chatter("x")])
    await compact(session, CompactRequest(direction="all"), ctx)
    assert not any(m.text().startswith(HEADING) for m in session.view_messages())
    store.close()


def test_the_latest_well_formed_list_and_plan_win() -> None:
    messages = [
        *tool_call("a", "TodoWrite", {"todos": todos(("one", "pending"))}),
        *tool_call("b", "TodoWrite", {"todos": [{"content": "", "status": "nope"}]}),
        *tool_call("c", "ExitPlanMode", {"plan": "first"}),
        *tool_call("d", "ExitPlanMode", {"plan": "second"}),
    ]
    found = latest_todos(messages)
    assert found is not None and [i.content for i in found] == ["one"]
    assert latest_plan(messages) == "second"
    assert continuity_text(found, None) == f"{HEADING}\n\n### Open task list\n- [pending] one"


def test_a_todo_call_that_failed_wrote_no_list() -> None:
    # the todo tool refuses a list over MAX_ITEMS ("nothing kept"), yet the refused list was
    # the one the view showed and a compaction restored; a denied or interrupted call alike
    saved = todos(("Parse", "in_progress"), ("Test", "pending"))
    too_long = todos(*((f"item {n}", "pending") for n in range(todo_tool.MAX_ITEMS + 1)))
    with pytest.raises(TodoInputError, match="at most"):
        todo_tool.todo_write([], {"todos": too_long})
    messages = [
        *tool_call("a", "TodoWrite", {"todos": saved}),
        *tool_call("b", "TodoWrite", {"todos": too_long}, error=True),
        *tool_call("c", "TodoWrite", {"todos": todos(("Interrupted", "pending"))}, error=True),
    ]
    found = latest_todos(messages)
    assert found is not None and [i.content for i in found] == ["Parse", "Test"]
    text = todo_tool.todo_write(messages, {"todos": saved})
    assert "Removed" not in text and "Added" not in text  # compared with the saved list


def test_the_todo_tool_saves_a_list_and_says_what_changed() -> None:
    assert todo_tool.LEVEL == "auto" and todo_tool.KIND == "other"
    assert todo_tool.DEFINITION["name"] == "TodoWrite"
    before = tool_call(
        "a", "TodoWrite", {"todos": todos(("Parse", "in_progress"), ("Old", "pending"))}
    )
    text = todo_tool.todo_write(
        before, {"todos": todos(("Parse", "completed"), ("Test", "in_progress"))}
    )
    assert text.splitlines() == [
        "Task list saved: 2 items (1 completed, 1 in progress, 0 pending).",
        "Parse: in_progress -> completed",
        "Added: Test",
        "Removed: Old",
        "Now: Doing: Test",
    ]


@pytest.mark.parametrize(
    ("tool_input", "says"),
    [
        ({}, "todos must be a list"),
        ({"todos": ["x"]}, "item 1 must be an object"),
        ({"todos": [{"content": " ", "status": "pending"}]}, "non-empty content"),
        ({"todos": [{"content": "a", "status": "done"}]}, "status 'done'"),
        ({"todos": [{"content": "a", "status": "pending", "activeForm": 3}]}, "activeForm"),
    ],
)
def test_the_todo_tool_refuses_bad_input_clearly(tool_input: dict[str, Any], says: str) -> None:
    with pytest.raises(TodoInputError, match=says):
        todo_tool.todo_write([], tool_input)


async def test_the_server_runs_the_todo_tool_in_its_tool_loop(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """A send with the workspace tools offers TodoWrite beside them; the model's call is
    answered by the server (the list saved), and a bad one is told why."""
    folder = tmp_path / "ws"
    folder.mkdir()
    service = BatonService(
        Settings.model_validate({"dataDir": str(tmp_path / "data")}),
        api_key="sk-ant-test-todo-000000000",
        estimator=estimator,
    )
    service.set_workspace_folders([folder.as_uri()])
    try:
        sid = service.create("todos", model="claude-haiku-4-5").session_id
        items = todos(("Write the parser", "in_progress"), ("Test it", "pending"))
        fake_anthropic.reply(
            tool_use_block(todo_tool.TODO_TOOL, {"todos": items}, id="toolu_t"),
            stop_reason="tool_use",
        )
        fake_anthropic.reply(
            tool_use_block(todo_tool.TODO_TOOL, {"todos": [{"content": "x"}]}, id="toolu_b"),
            stop_reason="tool_use",
        )
        fake_anthropic.reply("Planned.")
        await service.replies.send(sid, "plan the parser work", host=DiskHost())

        requests = fake_anthropic.message_requests()
        assert todo_tool.TODO_TOOL in [t["name"] for t in requests[0].body["tools"]]
        saved, refused = (
            b
            for r in requests[1:]
            for b in r.body["messages"][-1]["content"]
            if b["type"] == "tool_result"
        )
        assert saved["content"].startswith("Task list saved: 2 items")
        assert refused["is_error"] is True and "status None" in refused["content"]
        assert latest_todos(service.session(sid).view_messages()) == [
            TodoItem("Write the parser", "in_progress", "Doing: Write the parser"),
            TodoItem("Test it", "pending", "Doing: Test it"),
        ]
    finally:
        await service.close()


async def test_claude_code_calls_are_read_on_import(tmp_path: Path) -> None:
    def record(n: int, role: str, content: list[dict[str, Any]], parent: str | None) -> str:
        return json.dumps(
            {
                "type": role,
                "uuid": f"u{n}",
                "parentUuid": parent,
                "sessionId": "s1",
                "timestamp": f"2025-01-01T00:00:{n:02d}Z",
                "message": {"role": role, "content": content},
            }
        )

    items = todos(("Import the plan", "in_progress"), ("Check it", "pending"))
    lines = [
        record(0, "user", [{"type": "text", "text": "Plan it."}], None),
        record(
            1,
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "p",
                    "name": "ExitPlanMode",
                    "input": {"plan": "The plan."},
                }
            ],
            "u0",
        ),
        record(2, "user", [{"type": "tool_result", "tool_use_id": "p", "content": "ok"}], "u1"),
        record(
            3,
            "assistant",
            [{"type": "tool_use", "id": "t", "name": "TodoWrite", "input": {"todos": items}}],
            "u2",
        ),
        record(4, "user", [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}], "u3"),
        record(5, "assistant", [{"type": "text", "text": "Started."}], "u4"),
    ]
    path = tmp_path / "cc.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ctx = context()
    store = SessionStore(tmp_path / "data", ctx.estimator.count_message)
    session = import_claude_code(path, store)
    session.append(chatter("after import"))
    await compact(session, CompactRequest(direction="all"), ctx)
    text = session.view_messages()[1].text()
    assert "### Plan (from plan mode)\nThe plan." in text
    assert "- [in_progress] Import the plan\n- [pending] Check it" in text
    store.close()


# ---- the real corpus (BATON_CORPUS) --------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
async def test_corpus_sessions_keep_their_open_todos_and_plan_through_three_rounds(
    corpus_dir: Path, tmp_path: Path, name: str
) -> None:
    ctx = context()
    imported = import_claude_code(
        corpus_dir / name, SessionStore(tmp_path / "imported", ctx.estimator.count_message)
    )
    view = [m.model_copy() for m in imported.view_messages()]
    todos_then, plan_then = latest_todos(view), latest_plan(view)
    session = SessionStore(tmp_path / "rounds", ctx.estimator.count_message).create(title=name)
    prompts = [i for i, m in enumerate(view) if m.is_user_prompt]
    cuts = [0, *(prompts[len(prompts) * k // 3] for k in (1, 2)), len(view)]
    for start, stop in itertools.pairwise(cuts):
        session.append(view[start:stop])
        try:
            await compact(session, CompactRequest(direction="all"), ctx)
        except NothingToCompact:
            continue
    shown = "\n".join(m.text() for m in session.view_messages() if m.kind == "attachment")
    open_items = [i for i in todos_then or [] if i.status != "completed"]
    for item in open_items:
        assert f"- [{item.status}] {item.content}" in shown
    if plan_then is not None:
        assert plan_then in shown
