"""Import of Claude Code session files record by record: compaction records, sidechains,
repairs of what breaks the API's rules, bad input (whole files: test_claude_code_files.py)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conversations import char_count
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import TextBlock, ToolResultBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SESSION_ID, SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers import claude_code_read
from baton.core.importers.claude_code import import_claude_code, import_with_report

# ---- synthetic files -------------------------------------------------------------------------


def record(kind: str, uid: str, content: Any, **extra: Any) -> dict[str, Any]:
    role = kind if kind in ("user", "assistant") else None
    message: dict[str, Any] = {"role": role, "content": content}
    message.update(extra.pop("message_fields", {}))
    return {"type": kind, "uuid": uid, "sessionId": "s1", "message": message, **extra}


def tool_use(use_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": "Read", "input": {"file_path": "a.py"}}


def tool_result(use_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": text}


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def assistant(uid: str, content: Any, api_id: str) -> dict[str, Any]:
    usage = {"input_tokens": 100, "output_tokens": 20}
    fields = {"id": api_id, "model": "claude-sonnet-4-5", "usage": usage}
    return record("assistant", uid, content, message_fields=fields)


def compacted_conversation() -> list[dict[str, Any]]:
    return [
        record("user", "u1", "read a.py please"),
        assistant("a1", [tool_use("t1")], "api1"),
        record("user", "u2", [tool_result("t1", "print('hi')")]),
        assistant("a2", [{"type": "text", "text": "a.py prints hi"}], "api2"),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b1",
            "parentUuid": None,
            "logicalParentUuid": "a2",
            "compactMetadata": {"trigger": "auto", "preTokens": 12345},
            "timestamp": "2025-01-01T00:00:00.000Z",
        },
        record("user", "s1", "Summary: the user asked about a.py", isCompactSummary=True),
        record("user", "u3", "now edit it"),
        assistant("a3", [{"type": "text", "text": "done"}], "api3"),
    ]


def test_compact_boundary_becomes_a_boundary_whose_summary_starts_the_view(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", compacted_conversation())

    session, report = import_with_report(path, plain_store)

    assert session.view == ["s1", "u3", "a3"]
    summary = session.view_messages()[0]
    assert summary.kind == "summary" and summary.role == "user"
    assert summary.text() == "Summary: the user asked about a.py"
    boundary = session.boundaries[session.active[0]]
    assert boundary.trigger == "auto"
    assert boundary.pre_tokens == 12345
    assert boundary.summarizer == "claude-code"
    assert boundary.stands_for == {"s1": ["u1", "a1", "u2", "a2"]}
    assert boundary.summarized_ids == ["u1", "a1", "u2", "a2"]
    assert boundary.view_before == ["u1", "a1", "u2", "a2"]
    assert boundary.view_after == ["s1"]
    assert report.boundaries == 1
    assert session.compactions == 1
    anchor = session.anchor()  # usage recorded after the compaction still anchors the count
    assert anchor is not None and session.view[anchor[0]] == "a3"


def test_imported_compaction_can_be_undone_and_the_undo_survives_a_reload(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", compacted_conversation())
    session = import_claude_code(path, plain_store)

    session.uncompact()

    assert session.view == ["u1", "a1", "u2", "a2", "u3", "a3"]
    assert invariant_violations(session.view_messages()) == []
    plain_store.close()
    reopened = SessionStore(tmp_path / "data", char_count).get(session.session_id)
    assert reopened.view == ["u1", "a1", "u2", "a2", "u3", "a3"]
    reopened.transcript.close()


def test_tool_results_between_records_of_one_response_stay_separate_and_valid(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = write_jsonl(
        tmp_path / "p.jsonl",
        [
            record("user", "u1", "read two files"),
            assistant("a1", [tool_use("t1")], "api1"),
            record("user", "r1", [tool_result("t1")]),
            assistant("a2", [tool_use("t2")], "api1"),
            record("user", "r2", [tool_result("t2")]),
        ],
    )

    session, report = import_with_report(path, plain_store)

    assert session.view == ["u1", "a1", "r1", "a2", "r2"]
    assert [session.get(i).api_message_id for i in ("a1", "a2")] == ["api1", "api1"]
    assert invariant_violations(session.view_messages()) == []
    assert report.tool_pairs == 2 and report.merged_records == 0


def test_unanswered_tool_call_before_a_prompt_is_answered_and_reported(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = write_jsonl(
        tmp_path / "i.jsonl",
        [
            record("user", "u1", "run it"),
            assistant("a1", [tool_use("t1")], "api1"),
            record("user", "u2", "stop, do something else"),
        ],
    )

    session, report = import_with_report(path, plain_store)

    repair = session.view_messages()[2]
    assert session.view[3] == "u2"
    assert repair.tool_results()[0].tool_use_id == "t1"
    assert repair.tool_results()[0].is_error is True
    assert len(report.repairs) == 1 and "t1" in report.repairs[0]
    assert invariant_violations(session.view_messages()) == []
    assert report.messages == 3  # the repair is reported, not counted as a source message


def test_blocks_strings_empties_unknowns_sidechains_and_unsafe_ids(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = write_jsonl(
        tmp_path / "b.jsonl",
        [
            {"type": "summary", "summary": "A title", "leafUuid": "x"},
            record("user", "../etc", "a typed prompt"),
            record("assistant", "e1", []),
            record("assistant", "a1", [{"type": "server_magic", "x": 1}, {"type": "text"}]),
            record("user", "side", "subagent prompt", isSidechain=True),
            record("user", "a1", "same uuid again"),
            {"type": "brand-new-kind", "payload": [1, 2]},
        ],
    )

    session, report = import_with_report(path, plain_store)

    prompt, reply, again = session.view_messages()
    assert prompt.content == [TextBlock(text="a typed prompt")]
    assert prompt.id != "../etc" and SESSION_ID.match(prompt.id)
    assert [b.text for b in reply.content if isinstance(b, TextBlock)] == [
        "[unsupported block: server_magic]",
        "[unsupported block: text]",
    ]
    assert again.id != reply.id and SESSION_ID.match(again.id)
    assert report.empty == 1 and report.sidechain == 1 and report.unsupported_blocks == 2
    assert [r.get("type") for r in session.opaque] == [
        "summary",
        "assistant",
        "user",
        "brand-new-kind",
    ]
    assert session.title == "A title"


@pytest.mark.parametrize("uuid", ["a b\nc", "u1/../x", "u" * 300, "u1\u00e9"])
def test_a_uuid_that_is_no_safe_id_is_not_taken_as_the_messages_id(
    tmp_path: Path, plain_store: SessionStore, uuid: str
) -> None:
    """Only a uuid that starts like a safe id was asked for: one with a space, a line
    break, a slash or 300 characters after a safe first one became the message's id."""
    path = write_jsonl(tmp_path / "u.jsonl", [record("user", uuid, "a typed prompt")])

    session = import_claude_code(path, plain_store)

    (prompt,) = session.view_messages()
    assert prompt.id != uuid and SESSION_ID.fullmatch(prompt.id)
    assert session.messages[prompt.id].content == [TextBlock(text="a typed prompt")]


def test_a_first_message_that_continues_an_earlier_session_is_its_summary(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    text = "This session is being continued from a previous conversation that ran out."
    path = write_jsonl(
        tmp_path / "o.jsonl", [record("user", "u1", [{"type": "text", "text": text}])]
    )

    session = import_claude_code(path, plain_store, title="Mine")

    assert session.view_messages()[0].kind == "summary"
    assert session.title == "Mine"


def test_broken_lines_are_skipped_and_counted(tmp_path: Path, plain_store: SessionStore) -> None:
    path = tmp_path / "broken.jsonl"
    lines = [
        json.dumps(record("user", "u1", "hello")),
        "{not json",
        json.dumps(assistant("a1", [{"type": "text", "text": "hi"}], "api1")),
        '"a string, not an object"',
        '{"type": "user", "uuid": "u2", "mess',
    ]
    path.write_text("\n".join(lines), encoding="utf-8")

    session, report = import_with_report(path, plain_store)

    assert session.view == ["u1", "a1"]
    assert report.broken_lines == [2, 4, 5]
    assert report.records == 2


def no_sessions_written(store: SessionStore) -> bool:
    return not store.sessions_dir.exists() or not any(store.sessions_dir.iterdir())


@pytest.mark.parametrize(
    "content",
    [
        b"this is not json\n{{{\n",
        b'[{"type": "user", ',  # a JSON array cut short
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        b"",
        b'{"type": "summary", "summary": "only a title"}\n',
    ],
    ids=["garbage", "truncated-array", "binary", "empty", "no-conversation"],
)
def test_a_file_with_no_conversation_is_rejected_and_nothing_is_created(
    tmp_path: Path, plain_store: SessionStore, content: bytes
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)

    with pytest.raises(InvalidParams):
        import_claude_code(path, plain_store)

    assert no_sessions_written(plain_store)


def test_a_missing_or_huge_file_is_rejected(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InvalidParams, match="cannot read"):
        import_claude_code(tmp_path / "nope.jsonl", plain_store)
    path = write_jsonl(tmp_path / "big.jsonl", [record("user", "u1", "x" * 2000)])
    monkeypatch.setattr(claude_code_read, "MAX_IMPORT_BYTES", 1000)
    with pytest.raises(InvalidParams, match="limited"):
        import_claude_code(path, plain_store)
    assert no_sessions_written(plain_store)


def test_imported_tool_results_keep_their_api_fields(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    blocks = [{**tool_result("t1", "boom"), "is_error": True}]
    path = write_jsonl(
        tmp_path / "e.jsonl",
        [
            record("user", "u1", "go"),
            assistant("a1", [tool_use("t1")], "api1"),
            record("user", "r1", blocks, toolUseResult={"stderr": "boom"}),
        ],
    )

    session = import_claude_code(path, plain_store)

    (result,) = session.get("r1").content
    assert isinstance(result, ToolResultBlock)
    assert (result.tool_use_id, result.content, result.is_error) == ("t1", "boom", True)


# ---- files that break the API's rules: repaired in the imported copy, and reported -------


def text_of(session: Session) -> str:
    """Every text block of the view, joined: where repaired content must still be found."""
    return "\n".join(m.text() for m in session.view_messages())


@pytest.mark.parametrize("lost_call", ["missing", "in a sidechain"])
def test_a_tool_result_whose_call_is_not_in_the_conversation_becomes_text(
    tmp_path: Path, plain_store: SessionStore, lost_call: str
) -> None:
    records = [
        record("user", "u1", "look around"),
        assistant("a1", [tool_use("t1")], "api1"),
        record("user", "r1", [tool_result("t1", "a.py holds main()")]),
        record("user", "r9", [tool_result("t9", "secret output of the lost call")]),
        assistant("a2", [{"type": "text", "text": "done"}], "api2"),
        record("user", "u2", "thanks"),
    ]
    if lost_call == "in a sidechain":
        side_call = assistant("side", [tool_use("t9")], "api-side")
        records.insert(3, {**side_call, "isSidechain": True})
    path = write_jsonl(tmp_path / "orphan.jsonl", records)
    before = path.read_bytes()

    session, report = import_with_report(path, plain_store)

    view = session.view_messages()
    assert invariant_violations(view) == []
    assert report.problems == []
    assert "secret output of the lost call" in text_of(session)
    assert all(r.tool_use_id != "t9" for m in view for r in m.tool_results())
    assert session.get("r1").tool_results()[0].content == "a.py holds main()"
    assert any("r9" in r and "t9" in r for r in report.repairs)
    assert path.read_bytes() == before


def test_an_orphan_result_among_parallel_calls_waits_until_the_calls_are_answered(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = write_jsonl(
        tmp_path / "parallel.jsonl",
        [
            record("user", "u1", "read both"),
            assistant("a1", [tool_use("t1")], "api1"),
            assistant("a1b", [tool_use("t2")], "api1"),
            record("user", "r1", [tool_result("t1", "first file")]),
            record("user", "rx", [tool_result("tx", "stray result")]),
            record("user", "r2", [tool_result("t2", "second file")]),
            assistant("a2", [{"type": "text", "text": "both read"}], "api2"),
        ],
    )

    session, report = import_with_report(path, plain_store)

    view = session.view_messages()
    assert invariant_violations(view) == []
    # both calls keep their real results: the stray one does not cut the turn short
    results = {r.tool_use_id: r.content for m in view for r in m.tool_results()}
    assert results == {"t1": "first file", "t2": "second file"}
    assert "stray result" in text_of(session)
    assert session.view[-1] == "a2"
    assert any("rx" in r and "dropped" in r for r in report.repairs)


def test_an_orphan_result_next_to_a_prompt_stays_in_that_message_as_text(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    png = "iVBORw0KGgo="  # a PNG's signature: an image the API takes as one
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    stray = {
        "type": "tool_result",
        "tool_use_id": "gone",
        "is_error": True,
        "content": [{"type": "text", "text": "screenshot failed halfway"}, image],
    }
    path = write_jsonl(
        tmp_path / "prompt.jsonl",
        [record("user", "u1", [stray, {"type": "text", "text": "what happened?"}])],
    )

    session, report = import_with_report(path, plain_store)

    (message,) = session.view_messages()
    assert message.id == "u1"
    assert message.tool_results() == []
    assert "screenshot failed halfway" in message.text()
    assert "what happened?" in message.text()
    assert [b.type for b in message.content] == ["text", "image", "text"]
    assert invariant_violations(session.view_messages()) == []
    assert len(report.repairs) == 1


def test_a_result_after_a_compaction_answering_a_call_before_it_becomes_text(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    records = compacted_conversation()
    records[1] = assistant("a1", [tool_use("t1"), tool_use("t2")], "api1")
    records.insert(6, record("user", "late", [tool_result("t2", "late output")]))
    path = write_jsonl(tmp_path / "late.jsonl", records)

    session, report = import_with_report(path, plain_store)

    assert invariant_violations(session.view_messages()) == []
    assert "late output" in text_of(session)
    assert report.problems == []
    session.uncompact()
    assert invariant_violations(session.view_messages()) == []


def test_a_response_resumed_after_a_prompt_loses_its_shared_api_id(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = write_jsonl(
        tmp_path / "split.jsonl",
        [
            record("user", "u1", "go"),
            assistant("a1", [{"type": "text", "text": "part one"}], "api1"),
            record("user", "u2", "and?"),
            assistant("a2", [{"type": "text", "text": "part two"}], "api1"),
            assistant("a3", [{"type": "text", "text": "part three"}], "api1"),
        ],
    )

    session, report = import_with_report(path, plain_store)

    assert invariant_violations(session.view_messages()) == []
    assert session.view == ["u1", "a1", "u2", "a2"]  # a3 still joins the record before it
    assert session.get("a1").api_message_id == "api1"
    assert session.get("a2").api_message_id is None
    assert session.get("a2").text() == "part two\npart three"
    assert len(report.repairs) == 1 and "a2" in report.repairs[0] and "api1" in report.repairs[0]


def test_a_repeated_tool_call_id_becomes_text_and_so_does_its_result(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = write_jsonl(
        tmp_path / "repeat.jsonl",
        [
            record("user", "u1", "read it twice"),
            assistant("a1", [tool_use("t1")], "api1"),
            record("user", "r1", [tool_result("t1", "first read")]),
            assistant("a2", [tool_use("t1")], "api2"),
            record("user", "r2", [tool_result("t1", "second read")]),
        ],
    )

    session, report = import_with_report(path, plain_store)

    assert invariant_violations(session.view_messages()) == []
    assert session.get("a2").tool_uses() == []
    assert "a.py" in session.get("a2").text()
    assert "second read" in text_of(session)
    assert any("a2" in r and "t1" in r for r in report.repairs)
    assert any("r2" in r and "t1" in r for r in report.repairs)


def test_a_file_that_starts_with_an_assistant_record_gets_a_user_message_before_it(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path = write_jsonl(
        tmp_path / "headless.jsonl",
        [
            assistant("a1", [{"type": "text", "text": "as I was saying"}], "api1"),
            record("user", "u1", "go on"),
        ],
    )

    session, report = import_with_report(path, plain_store)

    first = session.view_messages()[0]
    assert first.role == "user" and first.text()
    assert session.view[1:] == ["a1", "u1"]
    assert invariant_violations(session.view_messages()) == []
    assert len(report.repairs) == 1 and "a1" in report.repairs[0]
    assert report.messages == 2


# Generated files: records in any order, with lost, stray, repeated and sidechain parts.
USE_IDS = ["t1", "t2", "t3", "t4"]
API_IDS = ["api1", "api2", "api3"]
record_kinds = st.one_of(
    st.tuples(st.just("prompt"), st.sampled_from(USE_IDS)),
    st.tuples(st.just("call"), st.sampled_from(USE_IDS), st.sampled_from(API_IDS)),
    st.tuples(st.just("text"), st.sampled_from(API_IDS)),
    st.tuples(st.just("result"), st.sampled_from(USE_IDS)),
    st.tuples(st.just("side-call"), st.sampled_from(USE_IDS)),
    st.just(("boundary",)),
)


def generated_records(index: int, kind: tuple[Any, ...]) -> list[dict[str, Any]]:
    uid = f"r{index}"
    output = f"<output of {uid}>"  # unique, and no prefix of another record's output
    if kind[0] == "prompt":
        blocks = [tool_result(kind[1], output), {"type": "text", "text": f"prompt {uid}"}]
        return [record("user", uid, blocks)]
    if kind[0] == "call":
        return [assistant(uid, [tool_use(kind[1])], kind[2])]
    if kind[0] == "text":
        return [assistant(uid, [{"type": "text", "text": f"reply {uid}"}], kind[1])]
    if kind[0] == "result":
        return [record("user", uid, [tool_result(kind[1], output)])]
    if kind[0] == "side-call":
        return [{**assistant(uid, [tool_use(kind[1])], "api-side"), "isSidechain": True}]
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": f"b{index}"}
    return [boundary, record("user", uid, f"summary {uid}", isCompactSummary=True)]


@settings(max_examples=150, deadline=None)
@given(st.lists(record_kinds, min_size=1, max_size=14))
def test_any_mix_of_records_imports_into_a_valid_view_that_keeps_every_result(
    kinds: list[tuple[Any, ...]],
) -> None:
    records = [r for i, kind in enumerate(kinds) for r in generated_records(i, kind)]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_jsonl(Path(tmp) / "mix.jsonl", records)
        store = SessionStore(Path(tmp) / "data", char_count)
        try:
            if all(kind[0] == "side-call" for kind in kinds):  # a subagent's records alone
                with pytest.raises(InvalidParams):
                    import_with_report(path, store)
                return
            session, report = import_with_report(path, store)
            assert invariant_violations(session.view_messages()) == []
            assert report.problems == []
            messages = list(session.messages.values())
            as_results = {r.content for m in messages for r in m.tool_results()}
            texts = "\n".join(m.text() for m in messages)
            for raw in records:
                content = raw["message"]["content"] if "message" in raw else None
                for block in content if isinstance(content, list) else []:
                    if block["type"] == "tool_result" and block["content"] not in as_results:
                        # not kept as a result: kept as text, and the repair says so
                        assert block["content"] in texts
                        assert any(f"record {raw['uuid']}:" in r for r in report.repairs)
            while session.active:
                session.uncompact()
                assert invariant_violations(session.view_messages()) == []
        finally:
            store.close()
