"""What a session keeps about its view as it grows (running API rules, tallies, anchor,
shared usage) agrees with working it all out again from the view."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from conversations import summary_boundary

from baton.core.conversation.invariants import (
    ApiRules,
    ToolPairs,
    invariant_violations,
    unanswered_tool_uses,
)
from baton.core.conversation.messages import (
    ApiUsage,
    ContentBlock,
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.settings import Settings
from baton.core.usage.estimator import Estimator
from baton.core.usage.session_usage import compute_usage
from baton.lsp.session_document.diagnostics import unpaired_tool_calls
from baton_testkit.request_size import framing_not_sent


def random_messages(seed: int, n: int = 40) -> list[Message]:
    """Messages that break the rules in every way, often: stray results, repeated calls,
    split responses, prompts between calls and results."""
    r = random.Random(seed)
    out: list[Message] = []
    for i in range(n):
        if r.random() < 0.45:
            uses: list[ContentBlock] = [
                ToolUseBlock(id=f"u{r.randint(0, 9)}", name="Bash", input={})
                for _ in range(r.randint(0, 2))
            ]
            content: list[ContentBlock] = [TextBlock(text="a"), *uses]
            api = r.choice([None, "r1", "r2", "r3", f"r{i}"])
            out.append(Message(id=f"m{i}", role="assistant", content=content, api_message_id=api))
        elif r.random() < 0.6:
            results: list[ContentBlock] = [
                ToolResultBlock(tool_use_id=f"u{r.randint(0, 9)}", content="ok")
                for _ in range(r.randint(1, 2))
            ]
            out.append(Message(id=f"m{i}", role="user", content=results))
        else:
            out.append(Message(id=f"m{i}", role="user", content=[TextBlock(text="p")]))
    return out


@pytest.mark.parametrize("seed", range(60))
def test_rules_kept_as_a_list_grows_find_what_a_check_of_the_whole_list_finds(seed: int) -> None:
    messages = random_messages(seed)
    cut = random.Random(seed).randint(0, len(messages))
    base = ApiRules().extend(messages[:cut])
    before = list(base.problems)

    trial = base.fork().extend(messages[cut:])

    assert before + trial.problems == invariant_violations(messages)
    assert trial.unanswered() == unanswered_tool_uses(messages)
    assert base.problems == before  # a trial changes nothing of what it continues
    assert base.unanswered() == unanswered_tool_uses(messages[:cut])
    assert base.extend(messages[cut:]).problems == invariant_violations(messages)


def count(message: Message) -> int:
    return 7 + 3 * len(message.content)


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[SessionStore]:
    store = SessionStore(tmp_path, count)
    yield store
    store.close()


def turn(session: Session, n: int, usage: int) -> None:
    """A prompt, a call answered by a result, and a reply with real usage."""
    session.append([MessageInput(id=f"p{n}", role="user", content=f"prompt {n}")])
    call = ToolUseBlock(id=f"t{n}", name="Read", input={"path": f"/f{n}"})
    session.append(
        [
            Message(
                id=f"c{n}",
                role="assistant",
                content=[call],
                api_message_id=f"r{n}",
                usage=ApiUsage(input_tokens=usage),
            ),
            Message(id=f"res{n}", role="user", content=[ToolResultBlock(tool_use_id=f"t{n}")]),
        ]
    )
    if n % 3:
        reply = Message(id=f"a{n}", role="assistant", content=[TextBlock(text="done")])
        reply.usage = ApiUsage(input_tokens=usage + 50, output_tokens=5)
        reply.api_message_id = f"q{n}"
        session.append([reply])


def same_as_loaded(store: SessionStore, session: Session, estimator: Estimator) -> None:
    """The kept state of `session` equals that of the same transcript loaded afresh."""
    settings = Settings()
    kept = compute_usage(session, settings, estimator, tools_tokens=11)
    kept_anchor = session.anchor()
    view = list(session.view)
    total = session.tokens_in_view(0, len(view))
    loaded = Session(type(session.transcript).open(session.transcript.path, writable=False), count)
    assert loaded.view == view
    assert loaded.anchor() == kept_anchor
    messages = loaded.view_messages()
    assert total == sum(m.tokens for m in messages) - framing_not_sent(messages)
    assert compute_usage(loaded, settings, estimator, tools_tokens=11) == kept
    fresh = ApiRules().extend(loaded.view_messages())
    assert session._state.api_rules(session.view_messages).problems == fresh.problems


def test_kept_state_matches_a_fresh_load_after_appends_compaction_undo_and_pins(
    sessions: SessionStore, estimator: Estimator
) -> None:
    session = sessions.create()
    for n in range(6):
        turn(session, n, 1000 + 100 * n)
        same_as_loaded(sessions, session, estimator)
    summarized = list(session.view[:8])
    boundary = summary_boundary(session, summarized, "so far")
    session.commit_boundary(boundary)
    same_as_loaded(sessions, session, estimator)
    assert session.anchor() is None  # the kept replies' usage no longer anchors...
    turn(session, 6, 5000)  # ... but a new reply's does
    same_as_loaded(sessions, session, estimator)
    session.set_pinned("p6", True)
    same_as_loaded(sessions, session, estimator)
    session.uncompact()
    same_as_loaded(sessions, session, estimator)
    turn(session, 7, 7000)
    same_as_loaded(sessions, session, estimator)


def test_a_refused_append_leaves_the_running_rules_as_they_were(
    sessions: SessionStore, estimator: Estimator
) -> None:
    session = sessions.create()
    turn(session, 1, 1000)
    rules = session._state.api_rules(session.view_messages)
    problems, unanswered = list(rules.problems), rules.unanswered()
    stray = Message(id="x", role="user", content=[ToolResultBlock(tool_use_id="nobody")])

    with pytest.raises(Exception, match="answers no tool_use"):
        session.append([MessageInput(id="ok", role="user", content="fine"), stray])

    assert "ok" not in session.messages
    assert rules.problems == problems and rules.unanswered() == unanswered
    session.append([MessageInput(id="ok", role="user", content="fine")])
    same_as_loaded(sessions, session, estimator)


def test_one_usage_per_change_is_shared_and_a_change_makes_a_new_one(
    sessions: SessionStore, estimator: Estimator
) -> None:
    session = sessions.create()
    turn(session, 1, 1000)
    settings = Settings()
    first = compute_usage(session, settings, estimator)

    assert compute_usage(session, settings, estimator) is first
    assert compute_usage(session, Settings(), estimator) is first  # equal settings
    other = compute_usage(session, settings, estimator, tools_tokens=500)
    assert other is not first and other.breakdown.tools > first.breakdown.tools == 0
    session.append([MessageInput(role="user", content="more words here")])
    after = compute_usage(session, settings, estimator)
    assert after is not first and after.used_tokens > first.used_tokens
    estimator.observe(10_000, 15_000)  # calibration moves the estimate of what follows
    assert compute_usage(session, settings, estimator) is not after


@pytest.mark.parametrize("seed", range(40))
def test_tool_pairs_kept_as_a_list_grows_are_those_found_in_the_whole_list(seed: int) -> None:
    messages = random_messages(seed)
    cut = random.Random(seed).randint(0, len(messages))
    pairs = ToolPairs().extend(messages[:cut])
    pairs.problems(set())
    pairs.extend(messages[cut:])
    awaiting = {u.id for u in unanswered_tool_uses(messages)}

    assert pairs.problems(awaiting) == unpaired_tool_calls(messages)


@pytest.mark.parametrize("seed", range(30))
def test_packed_rules_and_pairs_continue_as_the_unpacked_ones(seed: int) -> None:
    """What a view's state packs after it is built (its sets copied to their size) reads
    and grows as before."""
    messages = random_messages(seed)
    cut = random.Random(seed).randint(0, len(messages))
    rules = ApiRules().extend(messages[:cut]).packed()
    pairs = ToolPairs().extend(messages[:cut]).packed()

    trial = rules.fork().extend(messages[cut:])
    assert rules.problems + trial.problems == invariant_violations(messages)
    assert trial.unanswered() == unanswered_tool_uses(messages)
    assert rules.extend(messages[cut:]).problems == invariant_violations(messages)
    pairs.extend(messages[cut:])
    awaiting = {u.id for u in unanswered_tool_uses(messages)}
    assert pairs.problems(awaiting) == unpaired_tool_calls(messages)
