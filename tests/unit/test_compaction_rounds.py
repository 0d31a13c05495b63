"""A compaction on top of a compaction: the facts an earlier summary quoted (Claude Code's,
Baton's, the API's block) are carried into the new summary, counted by the retention report,
and still visible after three rounds (the bench's sessions, and real ones in the corpus)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.prompts import summary_message_text
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention.facts import message_haystack, normalize, summary_prompts
from baton.core.compaction.retention.ledger import PROMPT_PREFIX_CHARS, found_in, retention
from baton.core.compaction.retention.ledger_text import write_ledger
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.compaction.retention.summary_facts import CARRIED, read_summary, summary_text
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer, SummaryRequest
from baton.core.conversation.messages import CompactionBlock, Message, text_message
from baton.core.conversation.store import SessionStore
from baton.core.importers.claude_code import import_claude_code
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator
from baton_testkit.bench_modules import bench_module

measure_retention = bench_module("measure_retention")
sessions = bench_module("sessions")

WORDS = ["the", "parser", "keeps", "order", "of", "records", "when", "a", "session", "grows"]


def words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def claude_code_summary(rng: random.Random, prompts: int, paths: int) -> tuple[str, dict[str, Any]]:
    """A summary as Claude Code writes one: an analysis, then nine numbered sections; the
    user messages quoted, files as nested bullets, paths also named in the prose."""
    asked = [f"request {n}: please {words(rng, 20, 60)} in src/mod_{n}.py" for n in range(prompts)]
    files = [f"/repo/src/pkg_{n % 7}/module_{n}.ts" for n in range(paths)]
    errors = [f"TypeError: cannot read {words(rng, 2, 4)} (case {n})" for n in range(6)]
    file_items = "\n".join(
        f"   - {path}\n      - {words(rng, 10, 30)}\n      - ```ts\n      export const x{n} = 1;\n"
        "      ```"
        for n, path in enumerate(files)
    )
    text = (
        "This session is being continued from a previous conversation that ran out of "
        "context. The conversation is summarized below:\nAnalysis:\n"
        f"1. First the user asked about {files[0]} and {words(rng, 20, 40)}.\n\nSummary:\n"
        f"1. Primary Request and Intent:\n   - {words(rng, 30, 60)}\n"
        f"   - Also touched CHANGELOG.md and docs/guide/setup.md while {words(rng, 5, 9)}\n"
        "2. Key Technical Concepts:\n   - TypeScript\n   - Node.js streams\n"
        f"3. Files and Code Sections:\n{file_items}\n   - Makefile\n      - the build\n"
        "4. Errors and fixes:\n"
        + "".join(f"   - {e}:\n      - Fixed by {words(rng, 4, 8)}\n" for e in errors)
        + f"5. Problem Solving:\n   {words(rng, 40, 80)}\n"
        "6. All user messages:\n"
        + "".join(f'   - "{p}"\n' for p in asked)
        + f"7. Pending Tasks:\n   - {words(rng, 4, 10)}\n"
        f"8. Current Work:\n   {words(rng, 200, 400)}\n"
        f"9. Optional Next Step:\n   {words(rng, 6, 14)}"
    )
    in_prompts = [f"src/mod_{n}.py" for n in range(prompts)]
    paths_named = [*files, "CHANGELOG.md", "docs/guide/setup.md", "Makefile", *in_prompts]
    return text, {"prompts": asked, "paths": paths_named, "errors": errors}


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def claude_code_file(path: Path, summary: str, turns: int) -> Path:
    """A Claude Code session that was compacted: its boundary, the summary, then `turns`
    turns that read and edit files."""
    stamp = "2025-09-01T10:00:00.000Z"
    base = {"sessionId": "s1", "timestamp": stamp, "cwd": "/repo", "version": "1.0.120"}
    records: list[dict[str, Any]] = [
        base
        | {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b1",
            "parentUuid": None,
            "logicalParentUuid": "x0",
            "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto", "preTokens": 160_000},
        },
        base
        | {
            "type": "user",
            "uuid": "s0",
            "parentUuid": "b1",
            "isCompactSummary": True,
            "isVisibleInTranscriptOnly": True,
            "message": {"role": "user", "content": summary},
        },
    ]
    parent = "s0"
    for n in range(turns):
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "Edit"}
        use["input"] = {
            "file_path": f"/repo/lib/after_{n}.py",
            "old_string": "a",
            "new_string": "b",
        }
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok " * 400}
        reply = [text_block("done " * 300)]
        steps = [
            ("user", {"role": "user", "content": f"now change after_{n} " + "please " * 30}),
            ("assistant", {"role": "assistant", "id": f"m{n}a", "content": [use]}),
            ("user", {"role": "user", "content": [result]}),
            ("assistant", {"role": "assistant", "id": f"m{n}b", "content": reply}),
        ]
        for k, (kind, message) in enumerate(steps):
            uid = f"r{n}_{k}"
            records.append(
                base | {"type": kind, "uuid": uid, "parentUuid": parent, "message": message}
            )
            parent = uid
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def visible(facts: Sequence[str], view: Sequence[Message], prefix: int | None) -> list[str]:
    haystack = message_haystack(view)
    return [fact for fact in facts if found_in(haystack, normalize(fact), prefix)]


# ---- reading an earlier summary back --------------------------------------------------------


def test_a_claude_code_summary_gives_back_its_prompts_paths_and_errors() -> None:
    text, truth = claude_code_summary(random.Random(1), prompts=5, paths=4)

    facts = read_summary(text)

    assert facts.prompts == truth["prompts"]  # unquoted, in order
    assert {t.path for t in facts.paths} == set(truth["paths"])
    assert all(t.ops == [CARRIED] for t in facts.paths)
    assert [e.line.split(": Fixed by")[0] for e in facts.errors] == truth["errors"]
    assert "Node.js" not in {t.path for t in facts.paths}  # a name, not a file


def test_baton_summary_and_ledger_give_back_full_paths_ops_and_locations() -> None:
    long_prompt = "please look at " + "the parser " * 80
    ledger = (  # as a shortened ledger writes them: paths under their common folder
        "Fact ledger: details of the summarized messages that the summary above does not "
        "carry.\nShortened to fit 400 tokens: long entries are cut.\n\n"
        f"### User messages (verbatim, long ones cut)\n- {long_prompt}\n\n"
        "### Files touched (under /repo/src/)\n- a/one.py\n- b/two.py\n\n"
        "### Errors seen\n- KeyError: 'x'"
    )
    body = (
        "## 3. Files and code sections\n- /repo/src/app.py (read, edited)\n- ... and 2 more\n\n"
        "## 4. Errors and fixes\n- ValueError: bad date (at /repo/src/app.py, line 9)\n\n"
        f"## 6. All user messages\n- {long_prompt[:40]} [... 900 characters cut ...]\n\n"
        f"## 9. Optional next step\nContinue.\n\n{ledger}"
    )
    text = summary_message_text(body, transcript_path="/t.jsonl", auto=False, direction="all")

    facts = read_summary(text)

    paths = {t.path: t.ops for t in facts.paths}
    assert paths["/repo/src/app.py"] == ["read", "edited"]
    assert {"/repo/src/a/one.py", "/repo/src/b/two.py"} <= set(paths)
    assert not any(p.startswith(("a/", "b/")) for p in paths)
    assert ("ValueError: bad date", "/repo/src/app.py, line 9") in {
        (e.line, e.location) for e in facts.errors
    }
    # the section's cut copy gives way to the ledger's longer one
    assert len(facts.prompts) == 1 and len(facts.prompts[0]) > 200


async def test_a_prompt_quoting_the_summary_tags_does_not_hide_the_rest_of_the_summary(
    tmp_path: Path,
) -> None:
    # the extractive summary quotes every prompt verbatim; one that mentions </summary> ended
    # the summary there when a later compaction read it back: none of its prompts came back
    estimator = Estimator()
    settings = Settings(keep_window=KeepWindowSettings(min_tokens=300, min_text_messages=2))
    ctx = CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))
    store = SessionStore(tmp_path, estimator.count_message)
    session = store.create(title="tags")
    quoting = "Parse the reply: keep what is between <summary> and </summary> only."
    later = [f"Step {n}: carry on with the parser please." for n in range(10)]
    for prompt in [quoting, *later]:
        session.append([text_message("user", prompt)])
        session.append([text_message("assistant", f"Working on it. {prompt} " * 30)])
    await compact(session, CompactRequest(direction="all"), ctx)
    summary = session.view_messages()[0]

    facts = SpanFacts.extract([summary])

    assert facts.prompts[:2] == [quoting, later[0]]
    assert later[5] in facts.prompts
    # a model's answer that quotes the tags in its user messages section keeps the rest too
    answer = "<analysis>draft</analysis>\n<summary>\n## 6. All user messages\n"
    answer += f"- {quoting}\n- Ship it\n</summary>"
    assert read_summary(answer).prompts == [quoting, "Ship it"]
    store.close()


def test_a_user_messages_list_ends_at_a_paragraph_after_a_blank_line() -> None:
    text = "## 6. All user messages\n- first\n  continued\n\n- second\n\nA note after the list."

    assert summary_prompts(text) == ["first\ncontinued", "second"]


def test_the_api_compaction_block_is_an_earlier_summary() -> None:
    block = CompactionBlock(content="6. All user messages:\n- fix /repo/x.py please\n")
    message = Message(role="assistant", kind="summary", content=[block])

    assert summary_text(message) is not None
    facts = SpanFacts.extract([message])
    assert facts.prompts == ["fix /repo/x.py please"]
    assert [t.path for t in facts.paths] == ["/repo/x.py"]


def test_the_retention_report_counts_an_earlier_summarys_facts() -> None:
    text, truth = claude_code_summary(random.Random(2), prompts=4, paths=3)
    summarized = [text_message("user", text, kind="summary"), text_message("user", "and now?")]

    figures, ledger = retention(summarized, "A short summary.", [])

    assert figures.prompts.total == 5 and figures.prompts.kept == 0
    assert figures.paths.total == len(truth["paths"])
    assert figures.errors.total == len(truth["errors"])
    assert ledger is not None
    for prompt in truth["prompts"]:
        assert prompt[:PROMPT_PREFIX_CHARS] in ledger
    for path in truth["paths"]:
        assert path.rsplit("/", 1)[-1] in ledger


def test_a_shortened_ledger_says_how_many_prompts_it_cut() -> None:
    prompts = [f"request {n}: " + "word " * 300 for n in range(20)]
    ledger = write_ledger(prompts, [], [], 1_500, lambda text: len(text) // 4, None)

    assert "long entries are cut (20 of 20 user messages)." in ledger
    for prompt in prompts:  # each keeps the head the retention check compares
        assert normalize(prompt)[:PROMPT_PREFIX_CHARS] in normalize(ledger)


# ---- compacting again ------------------------------------------------------------------------


async def test_compacting_a_claude_code_compaction_keeps_every_prompt_and_path_it_quoted(
    tmp_path: Path, estimator: Estimator
) -> None:
    text, truth = claude_code_summary(random.Random(3), prompts=40, paths=50)
    store = SessionStore(tmp_path / "data", estimator.count_message)
    session = import_claude_code(claude_code_file(tmp_path / "cc.jsonl", text, 12), store)
    before = session.view_messages()
    assert before[0].kind == "summary"
    typed = [m.text() for m in before if m.is_user_prompt]
    prompts = [*truth["prompts"], *typed]
    paths = [*truth["paths"], *(f"/repo/lib/after_{n}.py" for n in range(12))]
    assert visible(prompts, before, PROMPT_PREFIX_CHARS) == prompts
    assert visible(paths, before, None) == paths
    settings = Settings(keep_window=KeepWindowSettings(min_tokens=2_000, min_text_messages=3))
    ctx = CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))

    result = await compact(session, CompactRequest(direction="all"), ctx)

    after = session.view_messages()
    assert visible(prompts, after, PROMPT_PREFIX_CHARS) == prompts
    assert visible(paths, after, None) == paths
    assert result.retention is not None
    # the prompts the summary quoted count, beside those typed since
    assert result.retention.prompts.total >= len(truth["prompts"]) + 1


async def test_three_rounds_of_compaction_of_a_bench_session_keep_every_prompt_typed(
    estimator: Estimator,
) -> None:
    built = sessions.build(450_000, 7, estimator.count_message)  # 150K tokens a round

    found = await measure_retention.rounds_of_compaction(built.messages, estimator)

    assert found["prompts"] > 200
    assert found["rounds_pct"] == [100.0, 100.0, 100.0]
    assert found["paths_pct"] >= 95.0
    assert found["truncated_prompts_pct"] < 50.0  # the baseline loses most


# ---- the corpus: sessions Claude Code compacted, compacted again by Baton --------------------

CORPUS_COMPACTED = "kesslerio__attio-mcp-server__chat.json"


@pytest.mark.corpus
async def test_a_real_claude_code_compaction_compacted_again_keeps_what_the_model_could_see(
    corpus_dir: Path, tmp_path: Path, estimator: Estimator
) -> None:
    store = SessionStore(tmp_path / "data", estimator.count_message)
    session = import_claude_code(corpus_dir / CORPUS_COMPACTED, store)
    before = session.view_messages()
    assert before[0].kind == "summary"
    facts = SpanFacts.extract(before)
    prompts = visible(facts.prompts, before, PROMPT_PREFIX_CHARS)
    paths = visible([t.path for t in facts.paths], before, None)
    assert len(prompts) >= 20 and len(paths) >= 5
    ctx = CompactContext(Settings(), estimator, ExtractiveSummarizer(estimator.count_text))

    await compact(session, CompactRequest(direction="all"), ctx)

    after = session.view_messages()
    assert visible(prompts, after, PROMPT_PREFIX_CHARS) == prompts
    assert len(visible(paths, after, None)) >= 0.95 * len(paths)


async def test_an_earlier_summarys_prose_is_condensed_section_by_section() -> None:
    text, _ = claude_code_summary(random.Random(4), prompts=3, paths=30)
    text = text.replace("8. Current Work:\n   ", "8. Current Work:\n   LATEST-STATE ")
    messages = [text_message("user", text, kind="summary"), text_message("user", "go on")]
    request = SummaryRequest(direction="all", messages=messages)

    body = await ExtractiveSummarizer().summarize(request)

    primary = body.split("## 2.", 1)[0]
    assert "LATEST-STATE" in primary  # the earlier summary's current work, not only its head
    assert "Primary Request and Intent" in primary
    assert "module_0.ts" not in primary  # its files list is carried in section 3 instead
    assert "/repo/src/pkg_0/module_0.ts" in body.split("## 3.", 1)[1]
