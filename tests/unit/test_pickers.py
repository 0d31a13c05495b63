"""The pickers' core: the model catalog (the Models API's list, the configured one), the
list index's last known size (a change's, else the last reply's, unknown after a
compaction), a rename appended as a record, and a session's source."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from baton.core.conversation.listing import Summary
from baton.core.conversation.messages import ApiUsage, MessageInput
from baton.core.conversation.store import SessionStore
from baton.core.errors import ApiError, InvalidParams
from baton.core.model_api.client import AnthropicClient
from baton.core.model_api.model_list import ListedModel
from baton.core.models.windows import ModelLimits
from baton.core.service.model_catalog import configured, from_api, option
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.lsp.features.common import session_info, source_of
from baton_testkit.fake_anthropic import FakeAnthropic


def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path, lambda message: 7)


# ---- the catalog ---------------------------------------------------------------------------


def test_an_option_has_the_window_its_budget_would() -> None:
    settings = Settings()
    assert option("claude-opus-4-1", "", settings, _limits()).context_window == 200_000
    assert option("claude-opus-4-1", "", settings, _limits()).window_from == "table"
    assert option("claude-opus-4-1[1m]", "", settings, _limits()).context_window == 1_000_000
    api = option("claude-x", "X", settings, _limits(64_000, 9_000))
    assert (api.context_window, api.max_output, api.window_from) == (64_000, 9_000, "api")
    assert api.display_name == "X"
    unknown = option("gpt-nope", "", settings, _limits())
    assert (unknown.context_window, unknown.window_from) == (200_000, "assumed")
    fixed = option("claude-x", "", Settings(context_window=50_000), _limits(64_000))
    assert (fixed.context_window, fixed.window_from) == (50_000, "setting")


def test_the_configured_list_marks_the_current_model_and_says_why() -> None:
    settings = Settings(models=["claude-opus-4-1", " claude-opus-4-1 "], model="claude-z")
    catalog = configured(settings, "claude-opus-4-1", "no key")
    assert [m.id for m in catalog.models] == ["claude-opus-4-1", "claude-z"]
    assert [m.current for m in catalog.models] == [True, False]
    assert (catalog.source, catalog.reason, catalog.current) == (
        "configured",
        "no key",
        "claude-opus-4-1",
    )


def test_the_api_list_keeps_its_order_and_adds_an_unlisted_current_model_first() -> None:
    listed = [ListedModel("b", "B", 100_000, 1_000), ListedModel("a", "A")]
    catalog = from_api(listed, Settings(), "mine")
    assert [m.id for m in catalog.models] == ["mine", "b", "a"]
    assert catalog.models[0].current and not catalog.models[1].current
    assert catalog.source == "api" and catalog.reason is None
    assert catalog.wire()["models"][1]["contextWindow"] == 100_000


async def test_the_sdk_list_reads_every_page(
    fake_anthropic: FakeAnthropic, anthropic_client: Callable[..., AnthropicClient]
) -> None:
    for n in range(205):
        fake_anthropic.models[f"m-{n:03d}"] = {"max_input_tokens": 1000 + n}
    listed = await anthropic_client().list_models()
    assert [m.id for m in listed] == list(fake_anthropic.models)
    assert listed[-1].max_input_tokens == 1204 and listed[-1].max_tokens is None


async def test_the_sdk_list_failure_is_an_api_error_without_the_key(
    fake_anthropic: FakeAnthropic, anthropic_client: Callable[..., AnthropicClient]
) -> None:
    fake_anthropic.models_error = (403, "permission_error", "not for you")
    with pytest.raises(ApiError) as caught:
        await anthropic_client(max_retries=0).list_models()
    assert "not for you" in caught.value.message and "403" in caught.value.message


async def test_the_service_falls_back_when_the_api_fails(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.models_error = (529, "overloaded_error", "busy")
    service = BatonService(
        Settings(data_dir=str(tmp_path), anthropic_base_url=fake_anthropic.base_url),
        api_key="sk-ant-test-0123456789abcdefghij",
    )
    try:
        catalog = await service.model_catalog(None)
        assert catalog.source == "configured"
        assert catalog.reason is not None and "busy" in catalog.reason
        fake_anthropic.models_error = None
        catalog = await service.model_catalog(None)  # a failure is not kept: asked again
        assert catalog.source == "api"
        assert [m.id for m in catalog.models] == list(fake_anthropic.models)
    finally:
        await service.close()


async def test_a_rate_limited_list_falls_back_at_once_and_is_asked_again_later(
    fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    """The SDK sat out the list's retry-after before asking again, the picker waiting with
    nothing said (for as long as the API asked: this SDK does not stop at a minute)."""
    fake_anthropic.models_error = (429, "rate_limit_error", "slow down")
    fake_anthropic.models_retry_after = "2"
    service = BatonService(
        Settings(data_dir=str(tmp_path), anthropic_base_url=fake_anthropic.base_url),
        api_key="sk-ant-test-0123456789abcdefghij",
    )
    try:
        catalog = await service.model_catalog(None)
        assert catalog.source == "configured"
        assert catalog.reason is not None and "Rate limited" in catalog.reason
        lists = [r for r in fake_anthropic.requests if r.path.split("?")[0] == "/v1/models"]
        assert len(lists) == 1
    finally:
        await service.close()


# ---- the list's size, rename, source -------------------------------------------------------


def test_the_index_knows_the_last_replys_size_until_a_compaction(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    session = sessions.create("a")
    sid = session.session_id
    sessions.release(sid)
    assert _listed(sessions, sid).context_tokens is None  # no reply, no change noted
    session = sessions.get(sid)
    usage = ApiUsage(input_tokens=900, output_tokens=100, cache_read_input_tokens=4000)
    session.append([MessageInput(role="user", content="q"), _reply("a", usage)])
    sessions.release(sid)  # listed from the index, not as the open session
    assert _listed(sessions, sid).context_tokens == 5000
    assert sessions.context_size(_listed(sessions, sid)) == 5000
    assert sessions._index.size(sid, None) == 5000  # what an open session's row is given
    session = sessions.get(sid)
    session.append([MessageInput(role="user", content="more")])  # the reply's figure stays
    sessions.release(sid)
    assert _listed(sessions, sid).context_tokens == 5000
    session = sessions.get(sid)
    session.transcript.append(
        {"type": "uncompact", "boundaryId": "b_x", "at": "2026-01-01T00:00:00Z"}
    )
    sessions.release(sid)
    assert _listed(sessions, sid).context_tokens is None  # the view changed shape: unknown


def test_a_noted_size_wins_and_is_forgotten_with_the_session(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    sid = sessions.create("a").session_id
    sessions.note_size(sid, 1234)
    listed = sessions.list()
    open_one = next(s for s in listed if s.session_id == sid)
    assert sessions.context_size(open_one) == 1234  # the open session: the noted figure
    sessions.release(sid)
    assert _listed(sessions, sid).context_tokens == 1234
    sessions._index.forget(sid)
    assert sessions._index.size(sid, None) is None


def test_a_size_noted_for_a_session_another_process_writes_gives_way_to_its_reply(
    tmp_path: Path,
) -> None:
    """A view of another process's session notes no size of its own: the list follows the
    writer's replies (it showed the view's 5,100 after the writer's 60,100 before)."""
    writer, viewer = store(tmp_path), store(tmp_path)
    sid = writer.create("theirs").session_id
    writer.get(sid).append([MessageInput(role="user", content="q"), _reply("a", _usage(5000))])
    assert viewer.get(sid).read_only
    viewer.note_size(sid, 5100)  # a settings change published the view's usage

    writer.get(sid).append([MessageInput(role="user", content="r"), _reply("b", _usage(60000))])

    assert _listed(viewer, sid).context_tokens == 60100
    assert viewer.context_size(viewer.get(sid)) == 60100
    writer.close()
    viewer.close()


def test_a_size_noted_here_stands_only_until_another_process_changes_the_file(
    tmp_path: Path,
) -> None:
    """A session written here, let go, then written by another process: the list shows the
    other process's reply (it kept showing this one's 3,700)."""
    mine = store(tmp_path)
    session = mine.create("shared")
    sid = session.session_id
    session.append([MessageInput(role="user", content="q"), _reply("a", _usage(3600))])
    mine.note_size(sid, 3700)
    mine.release(sid)
    assert _listed(mine, sid).context_tokens == 3700  # the file as it left it: the note
    other = store(tmp_path)

    other.get(sid).append([MessageInput(role="user", content="r"), _reply("b", _usage(9000))])

    assert _listed(mine, sid).context_tokens == 9100
    assert mine.context_size(mine.get(sid)) == 9100
    other.close()
    mine.close()


def test_a_rename_is_one_record_appended(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    session = sessions.create("first")
    path = session.transcript.path
    before = path.read_bytes()
    sessions.rename(session.session_id, "  second  ")
    after = path.read_bytes()
    assert after.startswith(before)
    assert json.loads(after[len(before) :])["title"] == "second"
    assert session.title == "second"
    sessions.release(session.session_id)
    assert _listed(sessions, session.session_id).title == "second"
    for bad in ["", "  ", "a\x00b"]:
        with pytest.raises(InvalidParams):
            sessions.rename(session.session_id, bad)
    assert path.read_bytes() == after


def test_a_source_names_the_file(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    session = sessions.create("imported")
    session.imported_from = "/home/me/.claude/projects/x/abc.jsonl"
    source = source_of(session)
    assert source is not None
    assert (source.kind, source.file) == ("claude-code", "abc.jsonl")
    assert source_of(sessions.create("here")) is None
    wired = session_info(session, None).wire()
    assert "contextTokens" not in wired and wired["source"]["file"] == "abc.jsonl"


def _limits(window: int | None = None, output: int | None = None) -> ModelLimits:
    return ModelLimits(window, output)


def _usage(tokens: int) -> ApiUsage:
    return ApiUsage(input_tokens=tokens, output_tokens=100)


def _reply(text: str, usage: ApiUsage) -> MessageInput:
    return MessageInput(role="assistant", content=text, usage=usage)


def _listed(sessions: SessionStore, sid: str) -> Summary:
    found = [s for s in sessions.list() if s.session_id == sid]
    assert len(found) == 1, found
    assert isinstance(found[0], Summary), "listed as the open session, not from the index"
    return found[0]


def test_a_size_noted_for_a_file_that_went_is_dropped_by_the_next_list(tmp_path: Path) -> None:
    sessions = store(tmp_path)
    sid = sessions.create("gone").session_id
    sessions.note_size(sid, 99)
    sessions.release(sid)
    sessions.path_for(sid).unlink()
    assert all(s.session_id != sid for s in sessions.list())
    assert sessions._index.size(sid, None) is None
