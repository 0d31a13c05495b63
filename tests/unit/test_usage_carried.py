"""What the context holds besides the view, carried across a boundary (issue 19, item 1):
the last real usage's excess over the estimate survives compactions, undo and pins until
a newer usage arrives; a client declares its own system prompt and tools; a compaction's
figures (meter, postTokens, dry run) agree and say they are estimated."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from baton.core.compaction import engine
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import ApiUsage, Message, MessageInput, TextBlock
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers.claude_code import import_claude_code
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.budget import observe_response
from baton.core.usage.estimator import Estimator
from baton.core.usage.overhead import ClientContext, carried_tokens, declare
from baton.core.usage.session_usage import compute_usage
from baton_testkit.claude_code_gen import generate
from baton_testkit.meter_error import figures, measure, measure_compacted
from baton_testkit.request_size import framing_not_sent

OVERHEAD = 30_000  # what a client sends besides the messages, in these tests


def _user(text: str) -> MessageInput:
    return MessageInput(role="user", content=text)


def _reply(api_id: str, text: str, context: int) -> MessageInput:
    usage = ApiUsage(input_tokens=5, cache_read_input_tokens=context - 25, output_tokens=20)
    return MessageInput(
        role="assistant", content=[TextBlock(text=text)], api_message_id=api_id, usage=usage
    )


def _talk(session: Session, turns: int, words: int = 400) -> None:
    """Turns whose usages hold the view's count plus OVERHEAD (an exact tokenizer's world)."""
    for n in range(turns):
        session.append([_user(f"question {n}: " + "lorem ipsum dolor " * words)])
        prompt = sum(session.get(mid).tokens for mid in session.view)
        reply = Message(
            role="assistant",
            content=[TextBlock(text=f"answer {n}: " + "sit amet " * 50)],
            api_message_id=f"api_{n}",
        )
        reply.usage = _reply("x", "", OVERHEAD + prompt + session.count(reply)).usage
        session.append([reply])


def _context(estimator: Estimator) -> CompactContext:
    chosen = Settings(keep_window=KeepWindowSettings(min_tokens=600, min_text_messages=2))
    return CompactContext(
        settings=chosen,
        estimator=estimator,
        summarizer=ExtractiveSummarizer(estimator.count_text),
    )


def _truth(session: Session) -> int:
    """The context the next request would hold: OVERHEAD plus the view's messages, as
    its turns frame them."""
    view = session.view_messages()
    return OVERHEAD + sum(m.tokens for m in view) - framing_not_sent(view)


async def test_the_overhead_is_carried_across_a_compaction_undo_and_a_pin(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    _talk(session, 8)
    before = compute_usage(session, settings, estimator)
    assert before.basis == "api" and before.used_tokens == _truth(session)

    result = await engine.compact(session, CompactRequest(direction="all"), _context(estimator))
    usage = compute_usage(session, settings, estimator)
    assert usage.basis == "compacted" and usage.estimated
    assert usage.used_tokens == _truth(session)  # not the estimate of the summary alone
    assert usage.used_tokens > OVERHEAD
    assert usage.breakdown.unattributed == OVERHEAD

    session.set_pinned(session.view[-1], True)
    assert compute_usage(session, settings, estimator).used_tokens == _truth(session)

    engine.uncompact(session, result.boundary_id)
    undone = compute_usage(session, settings, estimator)
    assert undone.used_tokens == before.used_tokens and undone.basis == "api"


async def test_a_reloaded_session_still_carries_it(
    store: SessionStore, settings: Settings, estimator: Estimator, tmp_path: Path
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    _talk(session, 6)
    await engine.compact(session, CompactRequest(direction="all"), _context(estimator))
    shown = compute_usage(session, settings, estimator).used_tokens
    store.close()
    again = SessionStore(tmp_path, estimator.count_message).get(session.session_id)
    assert compute_usage(again, settings, estimator).used_tokens == shown == _truth(again)


async def test_a_new_usage_after_the_compaction_anchors_again(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    _talk(session, 6)
    await engine.compact(session, CompactRequest(direction="all"), _context(estimator))
    session.append([_user("and now?")])
    session.append([_reply("api_new", "done", 50_000)])
    usage = compute_usage(session, settings, estimator)
    assert usage.basis == "api" and not usage.estimated
    assert usage.used_tokens == 50_000
    assert "From the API's usage of the last reply" in usage.text.basis


async def test_post_tokens_the_preview_and_the_meter_show_one_figure(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    _talk(session, 8)
    ctx = _context(estimator)
    preview = await engine.compact(session, CompactRequest(direction="all", dry_run=True), ctx)
    assert preview.dry_run and preview.boundary_id == "" and preview.summary is None
    assert session.compactions == 0  # nothing was committed
    result = await engine.compact(session, CompactRequest(direction="all"), ctx)
    meter = compute_usage(session, settings, estimator)
    assert result.post_tokens == meter.used_tokens == preview.post_tokens
    assert meter.text.headline.startswith(
        f"Context {meter.percent_used:.0f}% used ({meter.used_tokens:,} / "
        f"{meter.context_window:,}, estimated until the next reply)"
    )
    assert "Estimated since the conversation changed" in meter.text.basis
    assert meter.text.meter == f"~{meter.percent_used:.0f}% " + meter.text.meter.split(" ")[1]


async def test_a_from_compaction_over_a_valid_anchor_says_estimated(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    _talk(session, 8)
    pivot = session.view[6]
    request = CompactRequest(direction="from", pivot_message_id=pivot)
    result = await engine.compact(session, request, _context(estimator))
    usage = compute_usage(session, settings, estimator)
    assert usage.estimated and usage.basis == "compacted"
    assert "Exact" not in usage.text.basis
    assert result.post_tokens == usage.used_tokens


# ---- a client's own system prompt and tools ----------------------------------------------


def test_a_declared_client_context_counts_as_system_and_tools(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    session.append([_user("hello")])
    plain = compute_usage(session, settings, estimator)
    assert declare(session, ClientContext(system_tokens=12_000, tools_tokens=9_000), estimator)
    usage = compute_usage(session, settings, estimator)
    assert usage.used_tokens == plain.used_tokens + 21_000
    assert (usage.breakdown.system, usage.breakdown.tools) == (12_000, 9_000)
    # the same figures again write nothing
    assert not declare(session, ClientContext(system_tokens=12_000), estimator)


def test_a_declared_text_is_counted_and_only_its_size_kept(
    store: SessionStore, settings: Settings, estimator: Estimator, tmp_path: Path
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    system = "You are a careful coding assistant. " * 200
    tools = [{"name": "Read", "description": "read a file " * 50, "input_schema": {}}]
    declare(session, ClientContext(system=system, tools=tools), estimator)
    assert session.client_context.system_tokens == estimator.count_text(system)
    assert session.client_context.tools_tokens == estimator.count_json(tools)
    text = session.transcript.path.read_text()
    assert "careful coding assistant" not in text  # the size is kept, never the text
    store.close()
    again = SessionStore(tmp_path, estimator.count_message).get(session.session_id)
    assert again.client_context == session.client_context


@pytest.mark.parametrize(
    "declared",
    [ClientContext(system_tokens=1_500), ClientContext(system="The client's own prompt. " * 60)],
)
def test_a_client_that_declares_its_own_system_prompt_gets_no_default(
    tmp_path: Path, estimator: Estimator, declared: ClientContext
) -> None:
    """Its size or its text: either way the client sends its own, so Baton's default is
    neither kept nor counted (the text was counted beside the default before)."""
    from baton.core.service.service import BatonService

    service = BatonService(Settings(data_dir=str(tmp_path)), estimator=estimator)
    session = service.create(client_context=declared)
    assert session.system_prompt is None
    usage = service.usage(session.session_id)
    assert usage.breakdown.system == session.client_context.system_tokens > 0
    plain = service.create()
    assert plain.system_prompt  # without a declaration: the default


def test_a_declaration_gives_a_size_or_a_text_not_both() -> None:
    with pytest.raises(ValidationError, match="systemTokens or system"):
        ClientContext(system_tokens=5, system="x")
    with pytest.raises(ValidationError):
        ClientContext(tools_tokens=-1)


def test_a_declared_context_calibrates_against_the_whole_prompt(
    store: SessionStore, estimator: Estimator
) -> None:
    """A client sending 30K of its own besides the messages no longer drags the factor to
    its cap once it declares them."""
    session = store.create(model="claude-sonnet-4-5")
    declare(session, ClientContext(system_tokens=20_000, tools_tokens=10_000), estimator)
    _talk(session, 1)
    observe_response(session, session.view[-1], estimator)
    assert 0.97 < estimator.factor < 1.03


def test_an_undeclared_overhead_does_not_pass_for_a_tokenizer_that_counts_more(
    store: SessionStore, estimator: Estimator
) -> None:
    """After the first usage, calibration learns from the growth between two usages, so
    the 30K a client sends besides the messages cancels out."""
    session = store.create(model="claude-sonnet-4-5")
    _talk(session, 8)
    replies = [mid for mid in session.view if session.get(mid).role == "assistant"]
    for reply in replies:
        observe_response(session, reply, estimator)
    assert abs(estimator.factor - 1.0) < 0.05, estimator.factor


def test_service_create_and_append_take_a_declaration(tmp_path: Path, estimator: Estimator) -> None:
    from baton.core.service.service import BatonService

    settings = Settings(data_dir=str(tmp_path))
    # its own estimator: the process-wide one may have been calibrated by another test
    service = BatonService(settings, estimator=estimator)
    declared = ClientContext(system_tokens=7_000, tools_tokens=3_000)
    session = service.create(title="t", client_context=declared)
    done = service.append(session.session_id, [_user("hi")])
    assert (done.usage.breakdown.system, done.usage.breakdown.tools) == (7_000, 3_000)
    more = service.append(
        session.session_id, [_reply("a1", "ok", 100)], ClientContext(tools_tokens=4_000)
    )
    assert (more.usage.breakdown.system, more.usage.breakdown.tools) != (0, 0)
    assert session.client_context.tools_tokens == 4_000
    # a bad batch declares nothing
    with pytest.raises(InvalidParams):
        service.append(session.session_id, [], ClientContext(tools_tokens=1))
    assert session.client_context.tools_tokens == 4_000


# ---- why auto-compact is paused ------------------------------------------------------------


@pytest.mark.parametrize(
    ("paused", "enabled", "said", "sentence"),
    [
        ("failures", True, "failures", "paused after repeated failures"),
        ("thrashing", True, "thrashing", "the working set does not fit"),
        (None, False, "user", "auto-compact off"),
        (None, True, None, "left until auto-compact"),
    ],
)
def test_the_usage_says_why_auto_compact_is_paused(
    store: SessionStore,
    estimator: Estimator,
    paused: str | None,
    enabled: bool,
    said: str | None,
    sentence: str,
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    session.append([_user("hi")])
    settings = Settings.model_validate({"autoCompact": {"enabled": enabled}})
    usage = compute_usage(
        session,
        settings,
        estimator,
        auto_paused=paused is not None,
        paused_by=paused,  # type: ignore[arg-type]
    )
    assert usage.auto_compact_paused_by == said
    assert usage.auto_compact_paused == (paused is not None)
    assert sentence in usage.text.headline
    assert usage.wire().get("autoCompactPausedBy") == said


# ---- real Claude Code sessions cut before each request -----------------------------------


def test_generated_sessions_cut_before_each_request_meet_the_goal(
    tmp_path: Path, estimator: Estimator
) -> None:
    """The generated files' usages hold the client's 14K besides the messages, plus noise
    (cache writes and output of 50-1,500 tokens a request) that bounds any meter."""
    measured = []
    for seed in range(6):
        path = generate(seed, era="newest", compactions=2, media=False).write(
            tmp_path / f"s{seed}.jsonl"
        )
        measured += measure(path, tmp_path, estimator)
    found = figures(measured)
    assert found.after_compaction, "the generated files hold compactions"
    assert max(found.after_compaction) <= 0.10, found.line()
    assert found.median <= 0.03 and found.p90 <= 0.08, found.line()


def test_an_imported_compaction_keeps_the_clients_overhead(
    tmp_path: Path, store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    generated = generate(3, era="newest", compactions=1, media=False, turns=8)
    records = generated.records
    boundary = next(i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    # cut just before the first request after the compaction
    first = next(i for i, r in enumerate(records) if i > boundary and r.get("type") == "assistant")
    generated.records = records[:first]
    session = import_claude_code(generated.write(tmp_path / "cut.jsonl"), store)
    usage = compute_usage(session, settings, estimator)
    actual = records[first]["message"]["usage"]
    real = sum(actual[k] for k in ("input_tokens", "cache_creation_input_tokens"))
    real += actual["cache_read_input_tokens"]
    assert abs(usage.used_tokens - real) / real <= 0.10
    assert usage.breakdown.unattributed > 10_000 and usage.basis == "compacted"


@pytest.mark.parametrize(
    ("era", "start", "end"), [("old", 5, 6), ("recent", 3, 5), ("newest", 3, 5)]
)
async def test_a_compaction_on_a_from_compaction_carries_the_figure_it_compacted(
    era: str,
    start: int,
    end: int,
    tmp_path: Path,
    store: SessionStore,
    settings: Settings,
    estimator: Estimator,
) -> None:
    """An imported file's usages grow apart from the estimate of their views (here as
    Claude Code's own counts do, 14K besides the messages and the text counted at 4
    characters a token): after a `from`, the meter anchors on the kept part's last reply,
    and a compaction up to a message of that part carries what that reply showed besides
    the estimate, not what the newest reply, summarized by the `from`, showed. Its report
    compares the same client overhead before and after, and says the context shrank."""
    generated = generate(1, era=era, compactions=0, media=False, turns=14, repairs=False)
    session = import_claude_code(generated.write(tmp_path / f"{era}.jsonl"), store)
    ctx = _context(estimator)
    pivot = session.view[len(session.view) * start // 10]
    await engine.compact(session, CompactRequest(direction="from", pivot_message_id=pivot), ctx)
    before = compute_usage(session, settings, estimator)
    last = session.view[len(session.view) * end // 10]
    request = CompactRequest(direction="up_to", pivot_message_id=last)
    preview = await engine.compact(session, replace(request, dry_run=True), ctx)
    result = await engine.compact(session, request, ctx)
    after = compute_usage(session, settings, estimator)
    assert after.breakdown.unattributed == before.breakdown.unattributed > 10_000
    assert preview.post_tokens == result.post_tokens == after.used_tokens
    assert result.pre_tokens == before.used_tokens > result.post_tokens
    # and read again, the session carries the same
    store.close()
    again = SessionStore(tmp_path, estimator.count_message).get(session.session_id)
    assert compute_usage(again, settings, estimator).used_tokens == after.used_tokens


@pytest.mark.corpus
def test_real_sessions_cut_before_each_request_meet_the_goal(
    corpus_dir: Path, tmp_path: Path, estimator: Estimator
) -> None:
    files = [p for p in sorted(corpus_dir.iterdir()) if p.suffix in (".jsonl", ".json")]
    measured = [m for path in files for m in measure(path, tmp_path, estimator)]
    found = figures(measured)
    assert found.requests >= 100, found.line()
    assert found.median <= 0.02 and found.p90 <= 0.05, found.line()


@pytest.mark.corpus
async def test_real_sessions_compacted_before_a_request_stay_within_ten_percent(
    corpus_dir: Path, tmp_path: Path, estimator: Estimator
) -> None:
    files = [p for p in sorted(corpus_dir.iterdir()) if p.suffix in (".jsonl", ".json")]
    measured = []
    for path in files:
        measured += await measure_compacted(path, tmp_path, estimator, every=5)
    found = figures(measured)
    assert len(found.after_compaction) >= 20, found.line()
    assert max(found.after_compaction) <= 0.10, found.line()
    assert found.median <= 0.02, found.line()


async def test_the_hover_says_where_the_figure_comes_from(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    from baton.lsp.session_document.hover import breakdown_line, usage_hover

    session = store.create(model="claude-sonnet-4-5")
    _talk(session, 6)
    await engine.compact(session, CompactRequest(direction="all"), _context(estimator))
    usage = compute_usage(session, settings, estimator)
    text = usage_hover(usage, None, {})
    assert usage.text.headline in text and usage.text.basis in text
    assert f"unattributed (the original client's system prompt and tools) {OVERHEAD:,}" in (
        breakdown_line(usage)
    )


async def test_the_smaller_check_compares_the_figures_the_compaction_reports(
    store: SessionStore, settings: Settings, estimator: Estimator
) -> None:
    """An API that counts well under the estimate: the compaction is judged on the meter's
    figures (the usage before, the postTokens after), so one whose dry run says it shrinks
    the context is not refused as one that would not."""
    session = store.create(model="claude-sonnet-4-5")
    for n in range(10):
        session.append([_user(f"r{n}: please fix bug {n} in src/mod{n}.py. " + "lorem " * 1000)])
        session.append([MessageInput(role="assistant", content=f"Fixed {n}. " + "dolor " * 1000)])
    estimated = compute_usage(session, settings, estimator).used_tokens
    session.append([_user("and the last one?")])
    session.append([_reply("api_low", "done", int(estimated * 0.5))])
    before = compute_usage(session, settings, estimator)
    assert before.basis == "api" and before.used_tokens >= engine.MIN_CHECKED_TOKENS
    ctx = CompactContext(
        settings=Settings(keep_window=KeepWindowSettings(min_tokens=5_000, min_text_messages=2)),
        estimator=estimator,
        summarizer=ExtractiveSummarizer(estimator.count_text),
    )
    preview = await engine.compact(session, CompactRequest(direction="all", dry_run=True), ctx)
    # the case in question: the new view's bare estimate is over the usage before
    assert preview.post_tokens - carried_tokens(session, estimator) > before.used_tokens
    assert preview.post_tokens < preview.pre_tokens == before.used_tokens
    assert preview.warnings == []
    result = await engine.compact(session, CompactRequest(direction="all"), ctx)
    assert result.post_tokens == preview.post_tokens
    assert compute_usage(session, settings, estimator).used_tokens == result.post_tokens
