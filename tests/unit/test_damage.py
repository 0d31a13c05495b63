"""Damaged transcripts: a lost middle line, a missing header, strings that cannot be
written, a create that fails. The session still loads, says what it lost, and its view
stays within the API rules."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conversations import say, summary_boundary, ten_per_block

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import (
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_message,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams, SessionLocked, StorageError

COUNT = ten_per_block  # how the `store` fixture counts


def reply(mid: str, text: str = "sure") -> MessageInput:
    return MessageInput(id=mid, role="assistant", content=text)


def call(mid: str, use_id: str) -> MessageInput:
    return MessageInput(
        id=mid, role="assistant", content=[ToolUseBlock(id=use_id, name="Bash", input={"c": 1})]
    )


def result(mid: str, use_id: str) -> MessageInput:
    return MessageInput(
        id=mid, role="user", content=[ToolResultBlock(tool_use_id=use_id, content="a.py")]
    )


def compacted(store: SessionStore) -> tuple[Session, str]:
    """p1 a1 | p2 c2 r2 a2 p3 a3: the first turn summarized, the rest kept by a boundary."""
    session = store.create(title="t")
    session.append(
        [say("p1"), reply("a1"), say("p2"), call("c2", "u2"), result("r2", "u2"), reply("a2")]
    )
    session.append([say("p3"), reply("a3")])
    summary = text_message("user", "Summary of p1 and a1", kind="summary")
    kept = ["p2", "c2", "r2", "a2", "p3", "a3"]
    session.commit_boundary(
        Boundary(
            summary_id=summary.id,
            new_messages=[summary],
            stands_for={summary.id: ["p1", "a1"]},
            summarized_ids=["p1", "a1"],
            kept_ids=kept,
            view_before=list(session.view),
            view_after=[summary.id, *kept],
        )
    )
    return session, summary.id


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def message_line(path: Path, message_id: str) -> int:
    for n, line in enumerate(lines_of(path)):
        event = json.loads(line)
        if event.get("type") == "message" and event["message"]["id"] == message_id:
            return n
    raise AssertionError(message_id)


def rewrite(path: Path, change: Callable[[list[bytes]], list[bytes]]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in change(lines_of(path))))


def garbage(n: int) -> Callable[[list[bytes]], list[bytes]]:
    return lambda lines: [*lines[:n], b"{not json at all", *lines[n + 1 :]]


def bad_utf8(n: int) -> Callable[[list[bytes]], list[bytes]]:
    return lambda lines: [*lines[:n], lines[n][:30] + b"\xff\xfe" + lines[n][30:], *lines[n + 1 :]]


def merged(n: int) -> Callable[[list[bytes]], list[bytes]]:
    return lambda lines: [*lines[:n], lines[n] + lines[n + 1], *lines[n + 2 :]]


def deleted(n: int) -> Callable[[list[bytes]], list[bytes]]:
    return lambda lines: [*lines[:n], *lines[n + 1 :]]


def bad_role(n: int) -> Callable[[list[bytes]], list[bytes]]:
    def change(lines: list[bytes]) -> list[bytes]:
        event = json.loads(lines[n])
        event["message"]["role"] = "system"
        return [*lines[:n], json.dumps(event).encode(), *lines[n + 1 :]]

    return change


DAMAGE = {
    "garbage": garbage,
    "invalid-utf8": bad_utf8,
    "merged": merged,
    "deleted": deleted,
    "bad-role": bad_role,
}


def assert_usable(session: Session) -> None:
    view = session.view_messages()  # no KeyError: every id in the view is a message
    assert all(mid in session.messages for mid in session.view)
    assert invariant_violations(view) == []


@pytest.mark.parametrize("kind", list(DAMAGE))
@pytest.mark.parametrize("lost", ["p2", "c2", "r2", "a3"])
def test_a_lost_line_that_a_boundary_kept_leaves_a_usable_reported_session(
    store: SessionStore, kind: str, lost: str
) -> None:
    session, summary_id = compacted(store)
    sid, path = session.session_id, session.transcript.path
    n = message_line(path, lost)
    store.close()
    rewrite(path, DAMAGE[kind](n))
    damaged = lines_of(path)[n]

    session = store.get(sid)

    assert lost not in session.view
    assert_usable(session)
    damage = session.damage
    assert damage.any and not damage.header_missing
    # (a line merged with the boundary after it takes the boundary with it: then no
    # record names the lost message, and only the unreadable line tells of it)
    assert lost in damage.lost_messages or (kind == "merged" and not session.active)
    assert any("lost" in p or "unreadable" in p for p in damage.describe())
    assert not path.with_suffix(".jsonl.bad").exists()  # reading writes nothing

    # the session still works: append, pin, undo, and a reload shows the same
    session.append([say("p4"), reply("a4")])
    aside = b""
    if kind != "deleted":  # the unreadable line is kept aside at the first write
        assert damage.lines >= 1
        aside = path.with_suffix(".jsonl.bad").read_bytes()
        kept = aside.split(b"\n")
        if kind == "bad-role":
            assert any(json.loads(line)["message"]["id"] == lost for line in kept if line)
        else:
            assert damaged in kept
    session.set_pinned("p3" if lost != "p3" else "p2", True)
    if session.active:  # (two merged lines may have taken the boundary with them)
        session.uncompact()
        assert "p1" in session.view and summary_id not in session.view
    assert_usable(session)
    view = list(session.view)
    store.close()
    again = store.get(sid)
    assert again.view == view
    assert_usable(again)
    if kind != "deleted":  # the line is kept aside once, however often the file is opened
        assert path.with_suffix(".jsonl.bad").read_bytes() == aside


@pytest.mark.parametrize("repeated", ["a3", "a5", "boundary"])
def test_a_line_written_twice_is_applied_once_and_reported(
    store: SessionStore, repeated: str
) -> None:
    """A message or boundary line duplicated by hand: before, the reply stood twice in the
    view (and was sent twice), the boundary counted two compactions and its summary stood
    twice; nothing was reported."""
    session, _ = compacted(store)
    session.append([say("p5"), reply("a5")])
    sid, path = session.session_id, session.transcript.path
    view, compactions = list(session.view), session.compactions
    store.close()
    lines = lines_of(path)
    n = next(i for i, line in enumerate(lines) if b'"boundary"' in line[:20])
    n = n if repeated == "boundary" else message_line(path, repeated)
    rewrite(path, lambda lines: [*lines[: n + 1], lines[n], *lines[n + 1 :]])
    written = path.read_bytes()

    session = store.get(sid)

    assert session.view == view and session.compactions == compactions == 1
    assert_usable(session)
    assert session.damage.lines == 1
    assert any("repeated" in p for p in session.load_problems)
    session.append([say("p4"), reply("a4")])
    assert path.read_bytes().startswith(written)  # nothing taken out of the file
    assert path.with_suffix(".jsonl.bad").read_bytes().count(b"\n") == 1  # kept aside
    store.close()
    assert store.get(sid).view == [*view, "p4", "a4"]


@pytest.mark.parametrize("edit", ["before-its-boundary", "twice"])
def test_an_undo_line_that_names_no_compaction_in_force_is_reported(
    store: SessionStore, edit: str
) -> None:
    """An undo line moved before the boundary it undoes (two lines swapped by hand), or
    written twice: it is skipped, and the session says it is damaged (before, only a load
    note told: the undone compaction was back in force, 2 compactions, nothing reported)."""
    session, _ = compacted(store)
    session.commit_boundary(summary_boundary(session, ["p2", "c2", "r2", "a2"]))
    session.uncompact()
    session.append([say("p5"), reply("a5")])
    sid, path = session.session_id, session.transcript.path
    store.close()
    lines = lines_of(path)
    k = next(i for i, line in enumerate(lines) if b'"uncompact"' in line[:20])
    if edit == "twice":
        rewrite(path, lambda lines: [*lines[: k + 1], lines[k], *lines[k + 1 :]])
    else:
        rewrite(path, lambda lines: [*lines[: k - 1], lines[k], lines[k - 1], *lines[k + 1 :]])

    session = store.get(sid)

    assert session.damage.any and session.damage.lines == 1
    assert any("undo of" in p for p in session.load_problems)
    assert_usable(session)
    if edit == "twice":
        assert session.compactions == 1  # the first copy undid it; the second changes nothing


def test_a_lost_line_that_a_compaction_in_force_summarized_is_reported_at_load(
    store: SessionStore,
) -> None:
    """Before, the session loaded healthy and the loss showed only once an undo brought
    the summarized turns back."""
    session, _ = compacted(store)
    sid, path = session.session_id, session.transcript.path
    store.close()
    rewrite(path, deleted(message_line(path, "a1")))

    session = store.get(sid)

    assert session.damage.lost_messages == ["a1"]
    assert_usable(session)
    session.uncompact()
    assert "p1" in session.view and "a1" not in session.view
    assert session.damage.lost_messages == ["a1"]
    assert_usable(session)


def test_a_lost_tool_call_turns_its_result_into_text(store: SessionStore) -> None:
    session, _ = compacted(store)
    sid, path = session.session_id, session.transcript.path
    store.close()
    rewrite(path, garbage(message_line(path, "c2")))

    session = store.get(sid)

    assert session.view[1:] == ["p2", "r2", "a2", "p3", "a3"]
    repaired = session.get("r2")
    assert repaired.tool_results() == [] and "a.py" in repaired.text()
    assert "r2" in session.damage.repaired_messages
    assert_usable(session)


def test_a_lost_tool_result_turns_its_call_into_text(store: SessionStore) -> None:
    session, _ = compacted(store)
    sid, path = session.session_id, session.transcript.path
    store.close()
    rewrite(path, deleted(message_line(path, "r2")))

    session = store.get(sid)

    assert session.get("c2").tool_uses() == []
    assert "u2" in session.get("c2").text()
    assert_usable(session)


def test_a_lost_first_prompt_gets_an_opening_that_says_so(store: SessionStore) -> None:
    session = store.create()
    session.append([say("p1"), reply("a1"), say("p2"), reply("a2")])
    sid, path = session.session_id, session.transcript.path
    store.close()
    rewrite(path, garbage(message_line(path, "p1")))

    session = store.get(sid)

    assert session.view[1:] == ["a1", "p2", "a2"]
    assert session.view_messages()[0].role == "user"
    assert "lost" in session.view_messages()[0].text()
    assert_usable(session)
    session.append([say("p3")])
    store.close()
    assert store.get(sid).view[1:] == ["a1", "p2", "a2", "p3"]


def test_a_lost_boundary_line_never_brings_summarized_messages_back_at_the_end(
    store: SessionStore,
) -> None:
    session, _ = compacted(store)
    later = text_message("user", "Summary of everything", kind="summary")
    view = list(session.view)
    session.commit_boundary(
        Boundary(
            summary_id=later.id,
            new_messages=[later],
            stands_for={later.id: view[:4]},
            summarized_ids=view[:4],
            kept_ids=view[4:],
            view_before=view,
            view_after=[later.id, *view[4:]],
        )
    )
    sid, path = session.session_id, session.transcript.path
    expected = list(session.view)
    store.close()
    first_boundary = next(
        n for n, line in enumerate(lines_of(path)) if json.loads(line)["type"] == "boundary"
    )
    rewrite(path, garbage(first_boundary))

    session = store.get(sid)

    assert session.view == expected
    assert session.damage.lines == 1
    assert_usable(session)


def test_a_healthy_session_reports_no_damage(store: SessionStore) -> None:
    session, _ = compacted(store)
    store.close()
    again = store.get(session.session_id)
    assert not again.damage.any and again.damage.describe() == []
    assert not again.transcript.path.with_suffix(".jsonl.bad").exists()


# ---- headers and creates -------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"", b"\n", b"{garbage\n", b'{"type": "message"}\n', b'{"type": "session"}\n'],
    ids=["empty", "blank", "garbage", "no-header", "header-without-id"],
)
def test_a_file_without_a_valid_header_is_listed_as_damaged_and_never_written(
    store: SessionStore, content: bytes
) -> None:
    store.sessions_dir.mkdir(parents=True)
    path = store.sessions_dir / "s_ghost.jsonl"
    path.write_bytes(content)

    listed = store.list()

    assert [s.session_id for s in listed] == ["s_ghost"]
    ghost = listed[0]
    assert ghost.damage.header_missing and ghost.damage.any and ghost.read_only
    opened = store.get("s_ghost")
    assert opened.damage.header_missing and opened.read_only
    with pytest.raises(SessionLocked):
        opened.append([say("p1")])
    assert path.read_bytes() == content


@pytest.mark.parametrize("field", ["title", "system_prompt", "model"])
def test_a_create_with_a_lone_surrogate_is_invalid_and_leaves_no_file(
    store: SessionStore, field: str
) -> None:
    with pytest.raises(InvalidParams) as caught:
        store.create(**{field: "bad \ud800 text"})
    assert "UTF-8" in caught.value.message
    assert not store.sessions_dir.exists() or list(store.sessions_dir.iterdir()) == []
    assert store.list() == []
    assert store.create(title="fine").session_id


def open_fds_on(directory: Path) -> list[str]:
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory)):
            out.append(target)
    return out


def test_a_create_on_a_full_disk_leaves_no_file_and_no_lock(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int, data: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    monkeypatch.setattr(os, "writev", full)
    with pytest.raises(StorageError, match="No space left on device"):
        store.create(title="t")
    monkeypatch.undo()

    assert list(store.sessions_dir.iterdir()) == []
    assert open_fds_on(store.sessions_dir) == []
    assert store.list() == []
    assert store.create(title="after").title == "after"


@pytest.mark.parametrize(
    "bad",
    [
        MessageInput(role="user", content="a \ud800 b"),
        MessageInput(role="user", content=[TextBlock(text="x\udfff")]),
        MessageInput(
            role="assistant", content=[ToolUseBlock(id="t1", name="R", input={"k\ud800": 1})]
        ),
        MessageInput(id="m\ud800", role="user", content="hi"),
    ],
    ids=["text", "block", "tool-input-key", "id"],
)
def test_an_append_with_a_lone_surrogate_is_invalid_and_writes_nothing(
    store: SessionStore, bad: MessageInput
) -> None:
    session = store.create()
    session.append([say("p1"), reply("a1")])
    before = session.transcript.path.read_bytes()

    with pytest.raises(InvalidParams) as caught:
        session.append([say("p2"), bad])

    assert "UTF-8" in caught.value.message
    assert session.transcript.path.read_bytes() == before
    assert session.view == ["p1", "a1"]


def test_a_hand_edited_message_id_with_a_lone_surrogate_loads(store: SessionStore) -> None:
    """Baton never writes one (see above), but `json` reads `\\ud800` from a file edited by
    hand: the session loads with the message in its view, and takes appends."""
    session = store.create(title="t")
    session.append([say("p1")])
    path = session.transcript.path
    store.close()
    line = {
        "type": "message",
        "message": {
            "id": "m\\ud800",
            "role": "assistant",
            "content": [{"type": "text", "text": "hi"}],
        },
    }
    with path.open("a") as handle:
        handle.write(json.dumps(line).replace("\\\\ud800", "\\ud800") + "\n")

    reopened = SessionStore(store.sessions_dir.parent, ten_per_block)
    loaded = reopened.get(session.session_id)

    assert loaded.view == ["p1", "m\ud800"]
    loaded.append([say("p2")])
    assert loaded.view[-1] == "p2"
    reopened.close()
