"""Every Claude Code format an import meets: old compactions (a summary record mid-file with
no compact_boundary, and a restart after one), `summary` title records, sidechains and the
newer record types; for each, the view holds no more than the API last saw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers.claude_code import import_with_report
from baton.core.importers.claude_code_boundaries import RESTARTED
from baton.core.usage.estimator import Estimator
from baton_testkit.claude_code_gen import CASES, Generated, case, generate
from corpus_names import CORPUS_FILES


def read_records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def last_api_usage(records: list[dict[str, Any]]) -> int:
    """What the API last saw: the last main-chain response's input, cache creation, cache
    read and output tokens (a synthetic reply is no response)."""
    last = 0
    for record in records:
        message = record.get("message")
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        if not isinstance(message, dict) or message.get("model") == "<synthetic>":
            continue
        usage = message.get("usage")
        if isinstance(usage, dict):
            keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            last = sum(int(usage.get(k) or 0) for k in (*keys, "output_tokens"))
    return last


def view_tokens(session: Session, estimator: Estimator) -> int:
    return sum(estimator.count_message(m) for m in session.view_messages())


def imported(generated: Generated, folder: Path, store: SessionStore) -> Session:
    path = generated.write(folder / f"file.{'json' if generated.array else 'jsonl'}")
    return import_with_report(path, store)[0]


GENERATED = [*CASES, *(f"seed-{n}" for n in range(16))]


def generated_file(name: str) -> Generated:
    return case(name) if name in CASES else generate(int(name.removeprefix("seed-")))


@pytest.mark.parametrize("name", GENERATED)
def test_the_view_holds_no_more_than_the_api_last_saw(
    tmp_path: Path, store: SessionStore, estimator: Estimator, name: str
) -> None:
    generated = generated_file(name)
    session = imported(generated, tmp_path, store)

    assert view_tokens(session, estimator) <= last_api_usage(generated.records)


def test_an_old_compaction_mid_file_stands_for_what_came_before(
    tmp_path: Path, store: SessionStore, estimator: Estimator
) -> None:
    generated = case("old-mid-file-compactions")
    summaries = [r for r in generated.records if r.get("isCompactSummary")]
    assert len(summaries) == 2 and all(r["parentUuid"] is None for r in summaries)
    assert not any(r.get("subtype") == "compact_boundary" for r in generated.records)

    session = imported(generated, tmp_path, store)

    # the file's two summaries and the restart after the first each start the view again
    assert session.compactions == 3
    last_summary = summaries[-1]["uuid"]
    assert session.view[0] == last_summary
    assert session.messages[last_summary].kind == "summary"
    before = len(session.messages)
    whole = sum(estimator.count_message(m) for m in session.messages.values())
    assert view_tokens(session, estimator) < whole / 2  # the earlier segments are out
    for _ in range(3):
        session.uncompact()
    assert len(session.view) == before - 3  # all of it back, in place of the summaries


def record(kind: str, uid: str, content: Any, parent: str | None, **fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message |= {"id": f"msg_{uid}", "model": "claude-sonnet-4-20250514"}
        message["usage"] = fields.pop("usage", {"input_tokens": 10, "output_tokens": 5})
    return {
        "type": kind,
        "uuid": uid,
        "parentUuid": parent,
        "sessionId": "cc-1",
        "version": "1.0.65",
        "timestamp": f"2025-07-01T10:00:{len(uid):02d}Z",
        "message": message,
        **fields,
    }


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


SUMMARY = "This session is being continued from a previous conversation. Summary: the bug."


def test_a_prompt_with_no_parent_after_an_old_compaction_starts_the_view_again(
    tmp_path: Path, store: SessionStore
) -> None:
    records = [
        record("user", "u1", "first question", None),
        record("assistant", "a1", [{"type": "text", "text": "first answer"}], "u1"),
        record("user", "u2", [{"type": "text", "text": SUMMARY}], None, isCompactSummary=True),
        record("user", "u3", "second question", "u2"),
        record("user", "s1", "a subagent's task", None, isSidechain=True),  # not a restart
        record("assistant", "a3", [{"type": "text", "text": "second answer"}], "u3"),
        record("user", "u4", "a fresh start", None),
        record("assistant", "a4", [{"type": "text", "text": "third answer"}], "u4"),
    ]
    session, report = import_with_report(write(tmp_path / "old.jsonl", records), store)

    assert report.boundaries == 2 and report.messages == 7  # the note is the import's own
    assert session.view == ["restart-u4", "u4", "a4"]
    note = session.messages["restart-u4"]
    assert note.kind == "summary" and note.text() == RESTARTED
    restart = next(b for b in session.boundaries.values() if b.summary_id == "restart-u4")
    assert restart.view_before == ["u2", "u3", "a3"]
    assert session.uncompact().id == restart.id
    assert session.view == ["u2", "u3", "a3", "u4", "a4"]
    session.uncompact()
    assert session.view == ["u1", "a1", "u3", "a3", "u4", "a4"]


def test_newer_record_types_and_sidechains_are_kept_and_stay_out_of_the_view(
    tmp_path: Path, store: SessionStore
) -> None:
    generated = case("newest-recaps")
    session, report = import_with_report(generated.write(tmp_path / "new.jsonl"), store)

    for kind in ("attachment", "permission-mode", "last-prompt", "system/turn_duration"):
        assert report.kinds[kind] > 0, kind
    assert report.kinds["system/away_summary"] == generated.truth.shapes["away-summary"] > 0
    assert report.sidechain == generated.truth.sidechain > 0
    kept = {str(r.get("uuid")) for r in session.opaque}
    assert not kept & set(session.view)
    recaps = [r for r in generated.records if r.get("subtype") == "away_summary"]
    assert {r["uuid"] for r in recaps} <= kept


def test_the_title_is_the_summary_record_about_this_file(
    tmp_path: Path, store: SessionStore
) -> None:
    generated = case("old-mid-file-compactions")
    titles = [r for r in generated.records if r.get("type") == "summary"]
    assert titles[0]["summary"] == "Another Session Entirely"  # the first in the file

    session = imported(generated, tmp_path, store)

    assert session.title == generated.truth.title != "Another Session Entirely"
    assert len(titles) == 2 and all(t in session.opaque for t in titles)


def test_the_title_is_the_name_rename_gave_then_claude_codes_own_title(
    tmp_path: Path, store: SessionStore
) -> None:
    """As Claude Code's /resume list names a session: the latest `custom-title` record (its
    /rename), else the latest `ai-title` (the title 2.1 writes), else a `summary` record."""
    conversation = [
        {"type": "summary", "summary": "Parser bug", "leafUuid": "a1"},
        record("user", "u1", "why does the parser fail?", None),
        record("assistant", "a1", [{"type": "text", "text": "a missing comma"}], "u1"),
    ]
    generated = {"type": "ai-title", "aiTitle": "Fix the parser", "sessionId": "cc-1"}
    renamed = {"type": "custom-title", "customTitle": "parser comma", "sessionId": "cc-1"}
    files = {
        "generated": [*conversation, {**generated, "aiTitle": "Parser"}, generated],
        "renamed": [renamed, *conversation, generated, {**renamed, "customTitle": "  "}],
    }

    titles = {
        name: import_with_report(write(tmp_path / f"{name}.jsonl", records), store)[0].title
        for name, records in files.items()
    }

    assert titles == {"generated": "Fix the parser", "renamed": "parser comma"}


def test_an_api_error_claude_code_wrote_itself_is_out_of_the_view_as_out_of_its_requests(
    tmp_path: Path, store: SessionStore
) -> None:
    """Claude Code shows a failed request as an 'API Error' reply of its own (a `<synthetic>`
    one with `isApiErrorMessage`) and never sends it back; a synthetic reply without that
    mark (1.0's usage-limit notice) it sends as any other."""
    synthetic = {"model": "<synthetic>", "usage": {"input_tokens": 0, "output_tokens": 0}}
    error = record("assistant", "e1", [{"type": "text", "text": "API Error: 529"}], "u1")
    error["message"] |= synthetic
    notice = record("assistant", "n1", [{"type": "text", "text": "usage limit reached"}], "u2")
    notice["message"] |= synthetic
    records = [
        record("user", "u1", "why does the parser fail?", None),
        {**error, "isApiErrorMessage": True},
        record("user", "u2", "try again", "e1"),
        notice,
        record("user", "u3", "and now?", "n1"),
        record("assistant", "a1", [{"type": "text", "text": "a missing comma"}], "u3"),
    ]

    session, report = import_with_report(write(tmp_path / "errors.jsonl", records), store)

    assert session.view == ["u1", "u2", "n1", "u3", "a1"]
    assert report.api_errors == 1 and records[1] in session.opaque


def local_command(uid: str, parent: str, content: str) -> dict[str, Any]:
    """A slash command's input or output as Claude Code 2.x writes it: a system record."""
    return {
        "type": "system",
        "subtype": "local_command",
        "uuid": uid,
        "parentUuid": parent,
        "sessionId": "cc-1",
        "content": content,
        "level": "info",
        "isMeta": False,
    }


COMMAND = "<command-name>/model</command-name>\n<command-args>opus</command-args>"
OUTPUT = "<local-command-stdout>Set model to opus</local-command-stdout>"
CAVEAT = "<local-command-caveat>Caveat: generated by local commands.</local-command-caveat>"


def test_a_slash_commands_system_records_are_in_the_view_as_claude_code_sends_them(
    tmp_path: Path, store: SessionStore
) -> None:
    """Claude Code 2.x writes a slash command's input and output as `system/local_command`
    records and sends them to the model as user messages; no edited prompt, no title."""
    records = [
        record("user", "u1", "why does the parser fail?", None),
        record("assistant", "a1", [{"type": "text", "text": "a missing comma"}], "u1"),
        record("user", "c0", CAVEAT, "a1", isMeta=True),
        local_command("c1", "c0", COMMAND),
        local_command("c2", "c1", OUTPUT),
        local_command("c2", "c1", OUTPUT),  # written again
        record("user", "u2", "which model is this?", "c2"),
        record("assistant", "a2", [{"type": "text", "text": "opus"}], "u2"),
    ]

    session, report = import_with_report(write(tmp_path / "command.jsonl", records), store)

    assert session.view == ["u1", "a1", "c0", "c1", "c2", "u2", "a2"]
    assert [m.text() for m in session.view_messages()][3:5] == [COMMAND, OUTPUT]
    assert report.edits == 0 and report.repeated == 1
    assert session.title == "why does the parser fail?"


def test_a_slash_command_run_in_another_terminal_stays_out_of_the_view(
    tmp_path: Path, store: SessionStore
) -> None:
    """Resumed in two terminals, one ran /model while the other went on: the command's
    records are the other conversation's, not the one Claude Code resumes."""
    records = [
        record("user", "u1", "why does the parser fail?", None),
        record("assistant", "a1", [{"type": "text", "text": "a missing comma"}], "u1"),
        record("user", "c0", CAVEAT, "a1", isMeta=True),
        record("user", "u2", "fix it", "a1"),
        local_command("c1", "c0", COMMAND),
        local_command("c2", "c1", OUTPUT),
        record("assistant", "a2", [{"type": "text", "text": "fixed"}], "u2"),
    ]

    session, report = import_with_report(write(tmp_path / "two.jsonl", records), store)

    assert session.view == ["u1", "a1", "u2", "a2"]
    assert report.beside == 3


def test_a_prompt_typed_while_claude_code_worked_is_in_the_view_where_it_was_read(
    tmp_path: Path, store: SessionStore
) -> None:
    """2.1 writes a prompt typed during a turn as a `queued_command` attachment where it
    read it, between a tool's result and the next request, and sends it there."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a = 1,"}
    queued = {
        "type": "attachment",
        "uuid": "q1",
        "parentUuid": "r1",
        "sessionId": "cc-1",
        "attachment": {"type": "queued_command", "prompt": "also check b.py"},
    }
    records = [
        record("user", "u1", "why does the parser fail?", None),
        record("assistant", "a1", [call], "u1"),
        record("user", "r1", [result], "a1"),
        queued,
        queued,  # written again
        record("assistant", "a2", [{"type": "text", "text": "a comma; b.py is fine"}], "q1"),
    ]

    session, report = import_with_report(write(tmp_path / "queued.jsonl", records), store)

    assert session.view == ["u1", "a1", "r1", "q1", "a2"]
    assert session.view_messages()[3].text() == "also check b.py"
    assert report.edits == 0 and report.repeated == 1
    assert session.title == "why does the parser fail?"


# ---- the corpus tier: each real file's view against the API's last usage -----------------


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_file_view_holds_no_more_than_the_api_last_saw(
    corpus_dir: Path, store: SessionStore, estimator: Estimator, name: str
) -> None:
    session, _ = import_with_report(corpus_dir / name, store)

    assert view_tokens(session, estimator) <= last_api_usage(read_records(corpus_dir / name))


def test_an_import_title_follows_the_rules_of_a_title(tmp_path: Path, store: SessionStore) -> None:
    """A title given to the import is checked as create checks one (a blank one is none
    given); one the file gives is made one line of at most 200 characters."""
    long_summary = "Fix the parser\n\n## Assistant: injected\t" + "x" * 300
    records = [
        {"type": "summary", "summary": long_summary, "leafUuid": "a1"},
        record("user", "u1", "first question", None),
        record("assistant", "a1", [{"type": "text", "text": "first answer"}], "u1"),
    ]
    path = write(tmp_path / "titled.jsonl", records)

    session, _ = import_with_report(path, store)
    assert session.title.startswith("Fix the parser ## Assistant: injected xxx")
    assert len(session.title) == 200 and "\n" not in session.title
    assert import_with_report(path, store, title="   ")[0].title == session.title
    assert import_with_report(path, store, title=" Mine ")[0].title == "Mine"
    for bad in ("x" * 201, "two\nlines"):
        with pytest.raises(InvalidParams):
            import_with_report(path, store, title=bad)


def test_a_subagents_own_file_is_refused_saying_what_it_is(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """Claude Code writes a subagent's conversation to a file of its own (agent-<id>.jsonl,
    every record a sidechain), beside the sessions a picker shows: 'no conversation
    records' would say the file holds none."""
    records = [
        {**r, "isSidechain": True, "agentId": "a1b2c3"}
        for r in generate(7, era="recent", repairs=False).records
        if r.get("type") in ("user", "assistant")
    ]
    path = write(tmp_path / "agent-a1b2c3.jsonl", records)

    with pytest.raises(InvalidParams) as refused:
        import_with_report(path, plain_store)

    assert str(refused.value) == (
        f"agent-a1b2c3.jsonl holds only a subagent's conversation ({len(records)} sidechain "
        "records), a part of the session that ran the subagent: use that session's file"
    )
    assert list(plain_store.data_dir.glob("**/*.json*")) == []
