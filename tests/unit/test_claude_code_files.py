"""Import of whole Claude Code session files: generated ones of every shape, checked
against the generator's ground truth, and the real corpus (when BATON_CORPUS names it)."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conversations import char_count, say

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.session import Session
from baton.core.conversation.store import SESSION_ID, SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers.claude_code import import_claude_code, import_with_report
from baton_testkit.claude_code_gen import (
    CASES,
    SHAPES,
    Generated,
    Truth,
    case,
    foreign_files,
    generate,
)
from corpus_names import CHAT_JSON, CORPUS_FILES

# ---- an independent reading of a Claude Code file -------------------------------------------


def read_plainly(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def is_conversation(record: dict[str, Any]) -> bool:
    message = record.get("message")
    return (
        record.get("type") in ("user", "assistant")
        and not record.get("isSidechain")
        and isinstance(message, dict)
        and bool(message.get("content"))
    )


def expected_figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    """What a correct import must produce, counted straight from the records."""
    conversation = [r for r in records if is_conversation(r)]
    first_ids: list[str] = []  # the uuid of the first record of each message
    previous_api_id = None
    for record in conversation:
        api_id = record["message"].get("id") if record["type"] == "assistant" else None
        if api_id is None or api_id != previous_api_id:
            first_ids.append(record["uuid"])
        previous_api_id = api_id
    uses, results = set(), set()
    for record in conversation:
        content = record["message"]["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                uses.add(block["id"])
            if block.get("type") == "tool_result":
                results.add(block["tool_use_id"])
    return {
        "records": len(records),
        "messages": len(first_ids),
        "first_ids": first_ids,
        "tool_pairs": len(uses & results),
        "opaque": [r for r in records if not is_conversation(r)],
    }


# ---- generated files: every shape the importer handles, against the generator's truth -----


def write_case(name: str, folder: Path) -> tuple[Path, Generated]:
    generated = case(name)
    return generated.write(folder / f"{name}.{'json' if generated.array else 'jsonl'}"), generated


def test_the_generated_cases_hold_every_shape_between_them() -> None:
    found = {shape for name in CASES for shape, n in case(name).truth.shapes.items() if n}
    assert found == SHAPES


def test_the_generator_is_reproducible() -> None:
    assert generate(7).records == generate(7).records
    assert generate(7).records != generate(8).records


def check_against_truth(path: Path, truth: Truth, store: SessionStore) -> Session:
    session, report = import_with_report(path, store)

    assert report.records == truth.records
    assert report.kinds == truth.kinds
    assert report.messages == truth.messages
    assert report.merged_records == truth.merged_records
    assert report.tool_pairs == truth.tool_pairs
    assert report.boundaries == session.compactions == truth.compactions
    assert len(report.repairs) == truth.repairs, report.repairs
    assert report.sidechain == truth.sidechain
    assert report.opaque == len(session.opaque) == truth.opaque
    assert report.empty == truth.empty
    assert report.session_ids == truth.session_ids
    assert report.broken_lines == [] and report.problems == []
    record_ids = {r["uuid"] for r in read_plainly(path) if "uuid" in r}
    assert [i if i in record_ids else None for i in session.view] == truth.view
    for summary_id, replaced in truth.boundaries:
        boundary = next(b for b in session.boundaries.values() if b.summary_id == summary_id)
        assert [i if i in record_ids else None for i in boundary.view_before] == replaced
    assert session.title == truth.title
    assert invariant_violations(session.view_messages()) == []
    for message in session.view_messages():
        assert SESSION_ID.match(message.id)
        assert message.tokens == char_count(message)
    return session


@pytest.mark.parametrize("name", CASES)
def test_generated_file_imports_with_the_counts_of_its_ground_truth(
    tmp_path: Path, plain_store: SessionStore, name: str
) -> None:
    path, generated = write_case(name, tmp_path)
    before = path.read_bytes()

    check_against_truth(path, generated.truth, plain_store)

    assert path.read_bytes() == before


@pytest.mark.parametrize("seed", range(16))
def test_a_seeded_file_of_any_era_imports_with_the_counts_of_its_ground_truth(
    tmp_path: Path, plain_store: SessionStore, seed: int
) -> None:
    generated = generate(seed, array=seed % 4 == 0)
    path = generated.write(tmp_path / "seeded.jsonl")
    check_against_truth(path, generated.truth, plain_store)


@pytest.mark.parametrize("name", [n for n in CASES if not case(n).truth.repairs])
def test_a_plain_reading_of_a_generated_file_agrees_with_the_generator(
    tmp_path: Path, name: str
) -> None:
    # the generator's truth and an independent reading of its records say the same
    path, generated = write_case(name, tmp_path)
    want = expected_figures(read_plainly(path))
    assert want["records"] == generated.truth.records
    assert want["tool_pairs"] == generated.truth.tool_pairs
    if not generated.truth.compactions:
        assert want["messages"] == generated.truth.messages
        assert want["first_ids"] == generated.truth.view


def assert_reload_unchanged(path: Path, tmp_path: Path, plain_store: SessionStore) -> None:
    """Imports `path`, closes the store and reopens the session: its view is unchanged."""
    session = import_claude_code(path, plain_store)
    view = [m.wire() for m in session.view_messages()]
    plain_store.close()

    reopened = SessionStore(tmp_path / "data", char_count).get(session.session_id)

    assert [m.wire() for m in reopened.view_messages()] == view
    assert reopened.load_problems == []
    reopened.transcript.close()


@pytest.mark.parametrize("name", CASES)
def test_generated_file_survives_a_reload_unchanged(
    tmp_path: Path, plain_store: SessionStore, name: str
) -> None:
    path, _ = write_case(name, tmp_path)
    assert_reload_unchanged(path, tmp_path, plain_store)


def test_records_of_one_response_become_one_message_with_its_api_fields(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path, _ = write_case("recent-one-compaction", tmp_path)
    records = read_plainly(path)
    session = import_claude_code(path, plain_store)

    assistant = [m for m in session.view_messages() if m.role == "assistant"]
    merged = next(m for m in assistant if len(m.content) > 2)
    parts = [r for r in records if r.get("message", {}).get("id") == merged.api_message_id]
    assert len(parts) == len(merged.content)
    assert merged.id == parts[0]["uuid"]
    assert merged.model == parts[0]["message"]["model"]
    assert merged.usage is not None
    assert merged.usage.input_tokens == parts[-1]["message"]["usage"]["input_tokens"]
    assert (
        merged.usage.cache_read_input_tokens
        == parts[-1]["message"]["usage"]["cache_read_input_tokens"]
    )
    assert merged.stop_reason == parts[-1]["message"]["stop_reason"]
    assert merged.created_at == parts[0]["timestamp"]


def test_a_summary_first_json_array_starts_with_its_summary_and_notes_two_session_ids(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    path, generated = write_case("old-summary-first-array", tmp_path)
    assert path.read_text(encoding="utf-8").startswith("[")

    session, report = import_with_report(path, plain_store)

    first = session.view_messages()[0]
    assert first.kind == "summary"
    assert first.role == "user"
    assert first.text().startswith("This session is being continued from a previous conversation")
    assert session.compactions == 0  # the compaction happened in another file
    assert report.session_ids == generated.truth.session_ids and len(report.session_ids) == 2
    assert any("2 Claude Code session ids" in note for note in report.notes())
    wire = json.loads(json.dumps(report.wire()))
    assert wire["sessionIds"] == report.session_ids
    assert wire["kinds"] == dict(generated.truth.kinds)
    assert wire["toolPairs"] == generated.truth.tool_pairs


def test_a_file_that_starts_with_a_byte_order_mark_imports_as_without_it(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """Windows tools write one (PowerShell's UTF-8 Out-File, a Stop hook that saves the
    records as a JSON array): the JSONL form read it, the array was refused whole."""
    for name in ("old-summary-first-array", "old-jsonl"):
        path, _ = write_case(name, tmp_path)
        marked = tmp_path / f"bom-{path.name}"
        marked.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())

        plain, plain_report = import_with_report(path, plain_store)
        session, report = import_with_report(marked, plain_store)

        assert [m.text() for m in session.view_messages()] == [
            m.text() for m in plain.view_messages()
        ]
        assert report.records == plain_report.records and report.broken_lines == []


def test_a_utf16_copy_is_refused_saying_so(tmp_path: Path, plain_store: SessionStore) -> None:
    """Windows PowerShell's `>` writes UTF-16: such a copy of a session was 'a binary file'."""
    path, _ = write_case("old-jsonl", tmp_path)
    for codec in ("utf-16", "utf-16-be"):  # with a byte order mark, and without one
        copy = tmp_path / f"{codec}.jsonl"
        copy.write_bytes(path.read_text(encoding="utf-8").encode(codec))

        with pytest.raises(InvalidParams) as refused:
            import_with_report(copy, plain_store)

        assert str(refused.value) == (
            f"{codec}.jsonl is UTF-16 text; Claude Code writes its sessions in UTF-8: "
            "save it as UTF-8 to read it"
        )


def test_import_of_a_large_file_is_quick(tmp_path: Path, plain_store: SessionStore) -> None:
    # guards against accidental quadratic work (about as large as the largest real file);
    # CPU time, so that a busy machine does not fail it
    generated = generate(3, turns=250, compactions=4)
    path = generated.write(tmp_path / "large.jsonl")
    assert path.stat().st_size > 2_000_000
    started = time.process_time()
    _, report = import_with_report(path, plain_store)
    assert time.process_time() - started < 2.0
    assert report.messages == generated.truth.messages


def test_other_agents_trajectories_are_rejected(tmp_path: Path, plain_store: SessionStore) -> None:
    for path in foreign_files(tmp_path):
        with pytest.raises(InvalidParams):
            import_claude_code(path, plain_store)
    assert no_sessions_written(plain_store)


def test_a_baton_transcript_is_named_as_one_not_as_a_file_without_records(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    """It was refused as 'holds no Claude Code conversation records', which a client shows
    as if the file were damaged or empty."""
    session = plain_store.create("Kept")
    session.append([say("m1")])
    before = sorted(plain_store.sessions_dir.iterdir())
    with pytest.raises(InvalidParams) as refused:
        import_claude_code(session.transcript.path, plain_store)
    assert refused.value.message == (
        f"{session.session_id}.jsonl is a Baton transcript (session {session.session_id}), "
        "not a Claude Code session file: nothing to import"
    )
    headless = plain_store.data_dir / "headless.jsonl"  # its header line lost
    headless.write_bytes(session.transcript.path.read_bytes().split(b"\n", 1)[1])
    with pytest.raises(InvalidParams) as refused:
        import_claude_code(headless, plain_store)
    assert refused.value.message == (
        "headless.jsonl is a Baton transcript whose first line is no valid header, not a "
        "Claude Code session file: nothing to import"
    )
    assert sorted(plain_store.sessions_dir.iterdir()) == before


# ---- the real corpus (BATON_CORPUS): the same checks on files as Claude Code wrote them ---


@pytest.mark.corpus
def test_the_corpus_holds_the_files_these_tests_name(corpus_dir: Path) -> None:
    found = sorted(p.name for p in corpus_dir.iterdir() if p.suffix in (".jsonl", ".json"))
    assert found == sorted(CORPUS_FILES)


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_file_imports_with_the_counts_the_file_itself_gives(
    corpus_dir: Path, plain_store: SessionStore, name: str
) -> None:
    path = corpus_dir / name
    want = expected_figures(read_plainly(path))

    session, report = import_with_report(path, plain_store)

    assert report.records == want["records"]
    assert report.messages == want["messages"]
    assert report.tool_pairs == want["tool_pairs"]
    assert report.broken_lines == []
    assert [m.id for m in session.view_messages()] == want["first_ids"]
    # every record without a conversation role is kept, in order, as an opaque event
    assert session.opaque == want["opaque"]
    assert report.opaque == len(want["opaque"])


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_file_imports_into_a_view_the_api_would_accept(
    corpus_dir: Path, plain_store: SessionStore, name: str
) -> None:
    session, report = import_with_report(corpus_dir / name, plain_store)

    assert invariant_violations(session.view_messages()) == []
    assert report.problems == []
    for message in session.view_messages():
        assert SESSION_ID.match(message.id)
        assert message.tokens == char_count(message)


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_file_survives_a_reload_unchanged(
    corpus_dir: Path, tmp_path: Path, plain_store: SessionStore, name: str
) -> None:
    assert_reload_unchanged(corpus_dir / name, tmp_path, plain_store)


@pytest.mark.corpus
def test_chat_json_view_starts_with_its_summary_and_notes_two_session_ids(
    corpus_dir: Path, plain_store: SessionStore
) -> None:
    session, report = import_with_report(corpus_dir / CHAT_JSON, plain_store)

    first = session.view_messages()[0]
    assert first.kind == "summary"
    assert first.text().startswith("This session is being continued from a previous conversation")
    assert len(report.session_ids) == 2
    records = read_plainly(corpus_dir / CHAT_JSON)
    assert report.wire()["kinds"] == dict(Counter(r["type"] for r in records))


@pytest.mark.corpus
def test_import_of_the_largest_corpus_file_is_quick(
    corpus_dir: Path, plain_store: SessionStore
) -> None:
    started = time.process_time()
    import_claude_code(corpus_dir / CHAT_JSON, plain_store)
    assert time.process_time() - started < 2.0


@pytest.mark.corpus
def test_other_agents_trajectories_in_the_corpus_are_rejected(
    corpus_dir: Path, plain_store: SessionStore
) -> None:
    for path in sorted((corpus_dir / "other").iterdir()):
        with pytest.raises(InvalidParams):
            import_claude_code(path, plain_store)
    assert no_sessions_written(plain_store)


def no_sessions_written(store: SessionStore) -> bool:
    return not store.sessions_dir.exists() or not any(store.sessions_dir.iterdir())
