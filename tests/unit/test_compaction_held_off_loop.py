"""What a compaction's commit reads from every message the session holds (the files its
work touched, its latest task list and plan) is read off the event loop with the summary,
and used at the commit only while the session is at the revision it was read at: on the
76 MB session a 100 MB Claude Code file imports to, reading it at the commit held the
loop about 0.77 s."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from test_off_loop import WAIT
from test_plan_and_todos import HEADING, chatter, context, todos, tool_call

from baton import protocol as p
from baton.core.compaction import dropped as dropped_module
from baton.core.compaction import figures as figures_module
from baton.core.compaction.commit import commit_summary
from baton.core.compaction.engine import summarize
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention import ledger
from baton.core.compaction.working_set import held_facts
from baton.core.conversation.messages import Message, MessageInput, text_message
from baton.core.conversation.store import SessionStore
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features import compaction, sessions
from baton.lsp.features.common import Call
from baton.lsp.server import create_server
from baton_testkit.services import service_with_open_file

LIST = todos(("Parse the input", "in_progress"), ("Test it", "pending"))


def _todo_turn(call_id: str) -> list[dict[str, Any]]:
    """A TodoWrite call and its result, as a client appends them."""
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": call_id, "name": "TodoWrite", "input": {"todos": LIST}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}],
        },
    ]


async def test_a_compaction_reads_what_the_session_holds_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings.model_validate({"dataDir": str(tmp_path), "summarizer": "extractive"})
    call = Call(create_server(BatonService(settings)))
    sid = (await sessions.create(call, p.CreateParams(title="held"))).session_id
    words = " ".join(f"w{j}" for j in range(200))
    turns = [{"role": "user", "content": "Plan the work."}, *_todo_turn("todo0")]
    for i in range(6):
        turns += [
            {"role": "user", "content": f"question {i} {words}"},
            {"role": "assistant", "content": f"answer {i} {words}"},
        ]
    messages = [p.MessageInput.model_validate(m) for m in turns]
    await sessions.append(call, p.AppendParams(session_id=sid, messages=messages))
    walked: list[tuple[str, int]] = []

    def watched(name: str, original: Any) -> Any:
        def walk(held: Sequence[Message], *args: Any) -> Any:
            walked.append((name, threading.get_ident()))
            return original(held, *args)

        return walk

    for name in ("session_files", "latest_calls"):
        monkeypatch.setattr(held_facts, name, watched(name, getattr(held_facts, name)))
    pivot = call.service.session(sid).view_messages()[-3].id
    params = p.CompactParams(session_id=sid, direction="up_to", pivot_message_id=pivot)

    result = await asyncio.wait_for(compaction.compact(call, params), WAIT)

    assert result.summarized_message_ids
    assert {name for name, _ in walked} == {"session_files", "latest_calls"}
    assert threading.get_ident() not in {thread for _, thread in walked}
    view = call.service.session(sid).view_messages()
    assert view[0].kind == "summary" and view[1].text().startswith(HEADING)  # the open list


@pytest.mark.parametrize("read_ahead", ["stale", "current"])
async def test_what_was_read_ahead_is_used_at_its_revision_only(
    tmp_path: Path, read_ahead: str
) -> None:
    """A summary prepared for a session that changed since it was read (a later TodoWrite
    list): the commit reads the held messages again, and puts back the newer list."""
    ctx = context()
    store = SessionStore(tmp_path, ctx.estimator.count_message)
    session = store.create(title="changed")
    session.append([text_message("user", "Go."), *tool_call("todo0", "TodoWrite", {"todos": LIST})])
    session.append([text_message("assistant", "Started."), *chatter("one")])
    prepared = await summarize(session, CompactRequest(direction="all"), ctx)
    before = held_facts.read_held(session.revision, session.held_messages(), [], files=False)
    if read_ahead == "stale":
        newer = todos(("Parse the input", "completed"), ("Test it", "in_progress"))
        session.append(tool_call("todo1", "TodoWrite", {"todos": newer}))
    prepared.held = before

    commit_summary(session, prepared, ctx)

    carried = [m.text() for m in session.view_messages() if m.text().startswith(HEADING)]
    assert len(carried) == 1
    if read_ahead == "stale":
        assert "[in_progress] Test it" in carried[0] and "Parse the input" not in carried[0]
    else:
        assert "[in_progress] Parse the input" in carried[0]


async def eight_long_turns(tmp_path: Path, title: str) -> tuple[Call, str]:
    """A server with the extractive summarizer and a session of eight turns of 200 words."""
    settings = Settings.model_validate({"dataDir": str(tmp_path), "summarizer": "extractive"})
    call = Call(create_server(BatonService(settings)))
    sid = (await sessions.create(call, p.CreateParams(title=title))).session_id
    words = " ".join(f"w{j}" for j in range(200))
    turns: list[dict[str, Any]] = []
    for i in range(8):
        turns += [
            {"role": "user", "content": f"question {i}: {words}"},
            {"role": "assistant", "content": f"answer {i} {words}"},
        ]
    messages = [p.MessageInput.model_validate(m) for m in turns]
    await sessions.append(call, p.AppendParams(session_id=sid, messages=messages))
    return call, sid


async def test_a_compaction_checks_what_its_summary_dropped_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The span's facts (a prompt each turn) are checked against the summary, the kept
    messages and the ledger with the summary, in the lane's thread: at the commit, on the
    event loop, a 100,000-message session's 50,000 prompts took some 5 s, and every other
    session waited."""
    call, sid = await eight_long_turns(tmp_path, "facts")
    checked_on: set[int] = set()
    original = dropped_module.found_in

    def found_in(*args: Any) -> bool:
        checked_on.add(threading.get_ident())
        return original(*args)

    monkeypatch.setattr(dropped_module, "found_in", found_in)
    pivot = call.service.session(sid).view_messages()[-3].id
    params = p.CompactParams(session_id=sid, direction="up_to", pivot_message_id=pivot)

    result = await asyncio.wait_for(compaction.compact(call, params), WAIT)

    assert result.dropped is not None and result.dropped.messages_summarized == 14
    assert checked_on and threading.get_ident() not in checked_on


async def test_a_compaction_that_restores_a_file_of_its_span_checks_only_paths_at_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the summarized turns read, restored by the commit, is a path of the span: the
    retention check is made again then, on the event loop, and it looked for every prompt
    again (20,000 turns: 0.4-0.7 s, every other session waiting). The prompts, errors and
    instructions found ahead with the summary are used; the commit checks the paths."""
    service, source = service_with_open_file(tmp_path)
    sid = service.create("restores").session_id
    turns: list[dict[str, Any]] = []
    for i in range(4):
        turns += [
            {"role": "user", "content": f"question {i}: look at app.py"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i}",
                        "name": "read_file",
                        "input": {"path": str(source)},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x"}],
            },
            {"role": "assistant", "content": f"answer {i}"},
        ]
    words = " ".join(f"w{j}" for j in range(300))
    for i in range(4):
        turns += [
            {"role": "user", "content": f"later {i} {words}"},
            {"role": "assistant", "content": f"later answer {i} {words}"},
        ]
    service.append(sid, [MessageInput.model_validate(m) for m in turns])
    prompts_on: set[int] = set()
    original = ledger.found_in

    def found_in(haystack: str, needle: str, prefix: int | None = None) -> bool:
        if prefix is not None:  # a prompt's check
            prompts_on.add(threading.get_ident())
        return original(haystack, needle, prefix)

    monkeypatch.setattr(ledger, "found_in", found_in)

    result = await asyncio.wait_for(service.compaction.compact(sid, CompactRequest()), WAIT)

    assert [f.uri for f in result.restored_files] == [source.as_uri()]
    assert prompts_on and threading.get_ident() not in prompts_on


async def test_a_compaction_figures_the_view_it_replaces_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the view a compaction replaces holds (its messages' tokens less the framing
    its turns share: what it may reclaim) is figured with the summary, in the lane's
    thread: at the commit, on the event loop, a 100,000-message view took 0.9-1.0 s, and
    every other session waited."""
    call, sid = await eight_long_turns(tmp_path, "figures")
    whole = len(call.service.session(sid).view_messages())
    figured_on: set[int] = set()
    original = figures_module.joined_framing

    def joined_framing(messages: Sequence[Message], *args: Any) -> int:
        if len(messages) == whole:  # the view before the compaction
            figured_on.add(threading.get_ident())
        return original(messages, *args)

    monkeypatch.setattr(figures_module, "joined_framing", joined_framing)
    pivot = call.service.session(sid).view_messages()[-3].id
    params = p.CompactParams(session_id=sid, direction="up_to", pivot_message_id=pivot)

    result = await asyncio.wait_for(compaction.compact(call, params), WAIT)

    assert len(result.summarized_message_ids) == 14
    assert figured_on and threading.get_ident() not in figured_on
