"""The meter on a response written as several records with tool results between them
(issue 19, item 1): when each record carries the usage as it grew (its prompt already
holding the results before it), the latest record's usage covers them and they are not
counted again; when the records share one usage (one request), the results between them
are counted on top of it, as before. And the bench's generated files, cut before each
request, meet the goal."""

from __future__ import annotations

from pathlib import Path

from baton.core.conversation.messages import (
    ApiUsage,
    Message,
    MessageInput,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.settings import Settings
from baton.core.usage.estimator import MESSAGE_OVERHEAD, Estimator
from baton.core.usage.session_usage import compute_usage
from baton_testkit.claude_code_gen import generate
from baton_testkit.meter_error import figures, measure

PROMPT = 20_000  # the first record's prompt, as its usage says


def _part(call: str, prompt: int) -> Message:
    return Message(
        role="assistant",
        content=[ToolUseBlock(id=call, name="Read", input={"file_path": f"/p/{call}.py"})],
        api_message_id="msg_split",
        usage=ApiUsage(input_tokens=4, cache_read_input_tokens=prompt - 4, output_tokens=30),
    )


def _result(call: str) -> Message:
    text = "\n".join(f"{n}\tline {n} of {call}, with words to count" for n in range(300))
    return Message(role="user", content=[ToolResultBlock(tool_use_id=call, content=text)])


def _split_response(session: Session, growing: bool) -> tuple[int, int]:
    """One response in three records with a result after each; returns the tokens of the
    results between its first and last record, and of the last result."""
    session.append([MessageInput(role="user", content="read the three files")])
    prompt = PROMPT
    between = 0
    for n, call in enumerate(("toolu_a", "toolu_b", "toolu_c")):
        session.append([_part(call, prompt)])
        result = _result(call)
        session.append([result])
        if n < 2:
            between += result.tokens
            if growing:  # the next record's usage was taken with this result in its prompt
                prompt += session.get(session.view[-2]).tokens + result.tokens
    return between, result.tokens


def _used(session: Session, estimator: Estimator) -> int:
    return compute_usage(session, Settings(), estimator).used_tokens


def test_a_usage_that_grew_record_by_record_covers_the_results_before_it(
    tmp_path: Path, estimator: Estimator
) -> None:
    session = SessionStore(tmp_path, estimator.count_message).create("split", "", None)
    between, last = _split_response(session, growing=True)
    newest = session.get(session.view[-2]).usage
    assert newest is not None and between > 0
    # the newest usage already holds the results between the records: only what follows
    # its record is added (the old count added `between` a second time)
    # the last result joins the turn of the results before it
    assert _used(session, estimator) == newest.context_tokens + last - MESSAGE_OVERHEAD


def test_records_sharing_one_usage_count_the_results_between_them(
    tmp_path: Path, estimator: Estimator
) -> None:
    session = SessionStore(tmp_path, estimator.count_message).create("split", "", None)
    between, last = _split_response(session, growing=False)
    shared = session.get(session.view[-2]).usage
    assert shared is not None
    parts = sum(session.get(mid).tokens for mid in session.view[3:-1:2])  # records 2 and 3
    # one turn holds the three records, one the three results: four framings not sent
    joined = 4 * MESSAGE_OVERHEAD
    assert _used(session, estimator) == shared.context_tokens + between + parts + last - joined


def test_the_bench_generated_files_meet_the_meter_goal(
    tmp_path: Path, estimator: Estimator
) -> None:
    """The bench's meter row (`bench/measure_meter.py`): twelve generated files of both
    eras with two compactions each, cut before each request."""
    measured = []
    for seed in range(12):
        era = ("newest", "recent")[seed % 2]
        made = generate(seed, era=era, compactions=2, media=False)
        measured += measure(made.write(tmp_path / f"g{seed}.jsonl"), tmp_path, estimator)
    found = figures(measured)
    assert found.after_compaction, "the generated files hold compactions"
    assert found.median <= 0.02 and found.p90 <= 0.05, found.line()
    assert max(found.after_compaction) <= 0.10, found.line()
