"""What the panel's pickers ask over the wire: `baton/models` (the Models API's list on the
fake API, the configured list without a key or when the API fails), a switch through
`baton/session/setModel`, and the session list's size and source, rename and delete."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_harness import Harness, assistant, conversation, user

from baton import protocol
from baton.core.settings import DEFAULT_MODEL, DEFAULT_MODELS
from baton_testkit.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-test-0123456789abcdefghij"
WITH_KEY = {"anthropicApiKey": API_KEY}
EXAMPLE = Path(protocol.__file__).parent / "examples" / "session.jsonl"


async def test_models_without_a_key_are_the_configured_list(start_server) -> None:
    lsp = await start_server(options={"models": ["claude-opus-4-1", "my-own"]})
    sid = (await lsp.create(title="m", model="claude-haiku-4-5"))["sessionId"]
    found = await lsp.request(protocol.MODELS, {"sessionId": sid})
    assert found["source"] == "configured"
    assert "no Anthropic API key" in found["reason"]
    ids = [m["id"] for m in found["models"]]
    # the session's model (named by no list) first, then the setting, then `model`
    assert ids == ["claude-haiku-4-5", "claude-opus-4-1", "my-own", "claude-sonnet-5-5"]
    by_id = {m["id"]: m for m in found["models"]}
    assert by_id["claude-haiku-4-5"]["current"] is True
    assert [m["id"] for m in found["models"] if m["current"]] == ["claude-haiku-4-5"]
    assert by_id["claude-opus-4-1"]["contextWindow"] == 200_000
    assert by_id["claude-opus-4-1"]["windowFrom"] == "table"
    assert by_id["claude-sonnet-5-5"]["contextWindow"] == 1_000_000
    assert by_id["my-own"]["windowFrom"] == "assumed"
    assert found["current"] == "claude-haiku-4-5"


def test_the_default_model_is_among_the_configured_ones() -> None:
    assert DEFAULT_MODEL in DEFAULT_MODELS


async def test_models_without_a_session_mark_none(lsp: Harness) -> None:
    found = await lsp.request(protocol.MODELS, {})
    assert found["source"] == "configured"
    assert not any(m["current"] for m in found["models"])
    assert "current" not in found
    error = await lsp.error(protocol.MODELS, {"sessionId": "s_missing"})
    assert error.data["code"] == "session_not_found"


async def test_models_from_the_models_api_every_page(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.models["claude-small-test"] = {"max_input_tokens": 50_000, "max_tokens": 8_000}
    for n in range(130):  # the SDK asks for 100 a page: two pages
        fake_anthropic.models[f"claude-extra-{n:03d}"] = {"max_input_tokens": 100_000 + n}
    fake_anthropic.display_names["claude-small-test"] = "Claude Small (test)"
    lsp = await start_server(options=WITH_KEY)
    sid = (await lsp.create(title="m", model="claude-sonnet-4-5"))["sessionId"]
    found = await lsp.request(protocol.MODELS, {"sessionId": sid})
    assert found["source"] == "api" and "reason" not in found
    ids = [m["id"] for m in found["models"]]
    assert ids == list(fake_anthropic.models)  # in the API's order, none added, none lost
    small = next(m for m in found["models"] if m["id"] == "claude-small-test")
    assert small == {
        "id": "claude-small-test",
        "displayName": "Claude Small (test)",
        "contextWindow": 50_000,
        "maxOutput": 8_000,
        "windowFrom": "api",
        "current": False,
    }
    assert [m["id"] for m in found["models"] if m["current"]] == ["claude-sonnet-4-5"]
    pages = [r for r in fake_anthropic.requests if r.path.startswith("/v1/models?")]
    assert len(pages) == 2 and all(r.api_key == API_KEY for r in pages)

    # asked again soon after: the list is reused, not fetched again
    await lsp.request(protocol.MODELS, {"sessionId": sid})
    assert len([r for r in fake_anthropic.requests if r.path.startswith("/v1/models?")]) == 2


async def test_models_api_failure_falls_back_and_says_why(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.models_error = (500, "api_error", "the list is down")
    lsp = await start_server(options=WITH_KEY)
    found = await lsp.request(protocol.MODELS, {})
    assert found["source"] == "configured"
    assert "Models API failed" in found["reason"] and "the list is down" in found["reason"]
    assert API_KEY not in json.dumps(found)
    assert [m["id"] for m in found["models"]] == list(DEFAULT_MODELS)  # `model` is among them


async def test_switching_to_a_listed_model_moves_the_budget(
    start_server, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.models["claude-small-test"] = {"max_input_tokens": 50_000, "max_tokens": 8_000}
    lsp = await start_server(options=WITH_KEY)
    sid = (await lsp.create(title="m", model="claude-sonnet-4-5"))["sessionId"]
    await lsp.append(sid, *conversation(4))
    before = (await lsp.get(sid))["usage"]
    chosen = next(
        m
        for m in (await lsp.request(protocol.MODELS, {"sessionId": sid}))["models"]
        if m["id"] == "claude-small-test"
    )
    switched = await lsp.request(
        protocol.SESSION_SET_MODEL, {"sessionId": sid, "model": chosen["id"]}
    )
    assert switched["session"]["model"] == "claude-small-test"
    assert switched["session"]["contextTokens"] == switched["usage"]["usedTokens"]
    found = await lsp.request(protocol.MODELS, {"sessionId": sid})
    assert [m["id"] for m in found["models"] if m["current"]] == ["claude-small-test"]
    usage = (await lsp.get(sid))["usage"]
    assert before["contextWindow"] == 200_000
    # the figure the picker showed is the one the budget now uses (once the API said it)
    assert usage["contextWindow"] in (chosen["contextWindow"], 200_000)
    assert usage["usedTokens"] == before["usedTokens"]


async def test_rename_appends_a_record_and_the_list_shows_it(lsp: Harness) -> None:
    sid = (await lsp.create(title="Old title"))["sessionId"]
    path = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    before = path.read_bytes()
    mark = lsp.recorder.mark()
    renamed = await lsp.request(
        protocol.SESSION_RENAME, {"sessionId": sid, "title": "  Parser fixes  "}
    )
    assert renamed["title"] == "Parser fixes"
    await lsp.recorder.notification(
        protocol.SESSION_CHANGED, lambda p: p["reason"] == "rename", after=mark
    )
    after = path.read_bytes()
    assert after.startswith(before)  # append-only: nothing before it rewritten
    record = json.loads(after[len(before) :])
    assert record["type"] == "meta" and record["title"] == "Parser fixes"
    listed = (await lsp.request(protocol.SESSION_LIST, {}))["sessions"]
    assert [s["title"] for s in listed if s["sessionId"] == sid] == ["Parser fixes"]

    # the same title again writes nothing
    await lsp.request(protocol.SESSION_RENAME, {"sessionId": sid, "title": "Parser fixes"})
    assert path.read_bytes() == after


async def test_bad_renames_change_nothing(lsp: Harness) -> None:
    sid = (await lsp.create(title="Kept"))["sessionId"]
    path = lsp.data_dir / "sessions" / f"{sid}.jsonl"
    before = path.read_bytes()
    for title in ["", "   ", "x" * 201]:
        error = await lsp.error(protocol.SESSION_RENAME, {"sessionId": sid, "title": title})
        assert error.data["code"] == "invalid_params", title
    missing = await lsp.error(protocol.SESSION_RENAME, {"sessionId": "s_nope", "title": "A"})
    assert missing.data["code"] == "session_not_found"
    assert path.read_bytes() == before


async def test_list_carries_size_and_source_and_forgets_deleted(lsp: Harness) -> None:
    made = (await lsp.create(title="made here"))["sessionId"]
    appended = await lsp.append(made, *conversation(3))
    empty = (await lsp.create(title="empty"))["sessionId"]
    imported = await lsp.request(protocol.SESSION_IMPORT, {"path": str(EXAMPLE)})
    listed = {s["sessionId"]: s for s in (await lsp.request(protocol.SESSION_LIST, {}))["sessions"]}
    assert listed[made]["contextTokens"] == appended["usage"]["usedTokens"]
    shown = (await lsp.get(made))["session"]
    assert shown["contextTokens"] == appended["usage"]["usedTokens"]  # a get says it too
    assert "source" not in listed[made]
    assert listed[imported["sessionId"]]["source"] == {
        "kind": "claude-code",
        "file": "session.jsonl",
        "path": str(EXAMPLE),
    }
    assert listed[imported["sessionId"]]["contextTokens"] > 0
    assert listed[empty]["contextTokens"] > 0  # its system prompt

    await lsp.request(protocol.SESSION_DELETE, {"sessionId": empty})
    listed_ids = [
        s["sessionId"] for s in (await lsp.request(protocol.SESSION_LIST, {}))["sessions"]
    ]
    assert empty not in listed_ids and made in listed_ids


async def test_a_new_server_knows_the_last_replys_size_or_says_unknown(start_server) -> None:
    first = await start_server()
    replied = (await first.create(title="replied"))["sessionId"]
    usage = {"inputTokens": 1200, "outputTokens": 30, "cacheReadInputTokens": 5000}
    await first.append(replied, user("hi"), assistant("hello", usage=usage))
    bare = (await first.create(title="no reply"))["sessionId"]
    await first.append(bare, user("hi"))
    await first.close()

    second = await start_server()
    listed = {
        s["sessionId"]: s for s in (await second.request(protocol.SESSION_LIST, {}))["sessions"]
    }
    assert listed[replied]["contextTokens"] == 1200 + 30 + 5000  # the API's figure
    assert "contextTokens" not in listed[bare]  # unknown: no reply, no change seen here
    assert listed[bare]["title"] == "no reply"
