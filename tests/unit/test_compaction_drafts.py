"""Compaction drafts: preview, then apply as written or edited, regenerate, discard; the
draft record is never history (undo, restart); a stale draft is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from baton.core.compaction.draft_file import draft_path
from baton.core.compaction.draft_record import CompactDraft
from baton.core.compaction.preview import EDITED_WARNING
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import MessageInput, TextBlock, ToolResultBlock, ToolUseBlock
from baton.core.errors import DraftNotFound, DraftStale, NothingToCompact, SummarizerFailed
from baton.core.service.service import BatonService
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.workspace.editor_files import path_to_uri

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
]


def _text(i: int, n: int = 120) -> str:
    return " ".join(WORDS[(i * 7 + k) % len(WORDS)] + str(k % 13) for k in range(n))


def conversation(service: BatonService, turns: int = 24, model: str = "claude-sonnet-4-5") -> str:
    session = service.create(title="drafts", model=model)
    sid = session.session_id
    batch: list[MessageInput] = []
    for i in range(turns):
        batch.append(
            MessageInput(role="user", content=f"Please fix module m{i}.py now. {_text(i)}")
        )
        call = f"toolu_{i:04d}"
        batch.append(
            MessageInput(
                role="assistant",
                content=[
                    TextBlock(text=f"Reading m{i}.py. {_text(i + 1, 40)}"),
                    ToolUseBlock(id=call, name="Read", input={"file_path": f"/src/m{i}.py"}),
                ],
            )
        )
        batch.append(
            MessageInput(
                role="user",
                content=[ToolResultBlock(tool_use_id=call, content=_text(i + 2, 200))],
            )
        )
        batch.append(MessageInput(role="assistant", content=f"Done with m{i}. {_text(i + 3, 60)}"))
    service.append(sid, batch)
    return sid


@pytest.fixture
def service(tmp_path: Path) -> BatonService:
    settings = Settings(
        data_dir=str(tmp_path / "data"),
        keep_window=KeepWindowSettings(min_tokens=500, min_text_messages=2, max_tokens=3_000),
    )
    return BatonService(settings)


def _request(service: BatonService, sid: str, direction: str) -> CompactRequest:
    view = service.session(sid).view
    if direction == "all":
        return CompactRequest("all")
    if direction == "up_to":
        return CompactRequest("up_to", view[len(view) // 2])
    if direction == "from":
        return CompactRequest("from", view[len(view) // 3])
    return CompactRequest("range", view[8], view[len(view) // 2])


@pytest.mark.parametrize("direction", ["all", "up_to", "from", "range"])
def test_preview_then_apply_give_the_same_sizes(service: BatonService, direction: str) -> None:
    sid = conversation(service)
    transcript = Path(service.session(sid).transcript.path)
    before = transcript.read_bytes()
    draft = asyncio.run(service.drafts.preview(sid, _request(service, sid, direction)))
    assert transcript.read_bytes() == before  # a preview writes no history
    assert draft.summary and draft.summarized_message_ids and draft.post_tokens < draft.pre_tokens
    result = asyncio.run(service.drafts.apply(sid, draft.draft_id))
    assert result.summarized_message_ids == draft.summarized_message_ids
    assert abs(result.post_tokens - draft.post_tokens) <= 0.01 * result.post_tokens
    assert service.usage(sid).used_tokens == result.post_tokens
    assert not draft_path(service.session(sid)).exists()


def _preview(service: BatonService, sid: str, direction: str = "all", **kw: object) -> CompactDraft:
    return asyncio.run(service.drafts.preview(sid, _request(service, sid, direction), **kw))  # type: ignore[arg-type]


def test_an_edited_summary_is_committed_as_edited_with_the_ledger_of_what_it_removed(
    service: BatonService,
) -> None:
    sid = conversation(service)
    draft = _preview(service, sid, "up_to")
    assert draft.dropped is not None and draft.dropped.messages_summarized > 0
    edited = "The user had modules fixed; only the last ones matter now."
    result = asyncio.run(service.drafts.apply(sid, draft.draft_id, edited))
    session = service.session(sid)
    summary = session.get(session.view[0])
    assert summary.kind == "summary" and edited in summary.text()
    assert result.summary is not None and result.summary.startswith(edited)
    assert EDITED_WARNING in result.warnings
    # the edit dropped the prompts and paths the written summary named: the ledger has them
    assert result.dropped is not None and result.dropped.not_in_summary.count > 0
    assert "/src/m0.py" in result.dropped.not_in_summary.paths
    assert "/src/m0.py" in summary.text()  # carried by the ledger
    assert summary.dropped is not None and summary.dropped[0].endswith("messages summarized")
    assert any(line.startswith("24 tool results cleared") for line in summary.dropped) or any(
        "tool results cleared" in line for line in summary.dropped
    )
    # counted again: the meter shows the edited summary's size, smaller than the draft's
    assert service.usage(sid).used_tokens == result.post_tokens


def test_a_draft_made_before_the_session_changed_is_refused(service: BatonService) -> None:
    sid = conversation(service)
    draft = _preview(service, sid, "all")
    service.append(sid, [MessageInput(role="user", content="one more thing")])
    transcript = Path(service.session(sid).transcript.path)
    before = transcript.read_bytes()
    with pytest.raises(DraftStale) as caught:
        asyncio.run(service.drafts.apply(sid, draft.draft_id))
    assert caught.value.code == "draft_stale"
    assert transcript.read_bytes() == before and service.session(sid).boundaries == {}


def test_a_pin_or_other_settings_make_a_draft_stale(service: BatonService) -> None:
    sid = conversation(service)
    draft = _preview(service, sid, "all")
    service.pin(sid, draft.summarized_message_ids[0], True)
    with pytest.raises(DraftStale):
        asyncio.run(service.drafts.apply(sid, draft.draft_id))
    again = _preview(service, sid, "all")
    service.settings = service.settings.model_copy(
        update={
            "keep_window": KeepWindowSettings(min_tokens=50, min_text_messages=1, max_tokens=400)
        }
    )
    with pytest.raises(DraftStale, match="settings changed"):
        asyncio.run(service.drafts.apply(sid, again.draft_id))


def test_a_discarded_draft_leaves_the_transcript_byte_identical(service: BatonService) -> None:
    sid = conversation(service)
    transcript = Path(service.session(sid).transcript.path)
    before = transcript.read_bytes()
    listing = sorted(p.name for p in transcript.parent.iterdir())
    draft = _preview(service, sid, "from")
    assert draft_path(service.session(sid)).exists()
    service.drafts.discard(sid, draft.draft_id)
    assert transcript.read_bytes() == before
    assert sorted(p.name for p in transcript.parent.iterdir()) == listing
    with pytest.raises(DraftNotFound):
        asyncio.run(service.drafts.apply(sid, draft.draft_id))
    with pytest.raises(DraftNotFound):
        service.drafts.discard(sid, draft.draft_id)


def test_a_draft_survives_a_restart_and_is_never_history(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=str(tmp_path / "data"),
        keep_window=KeepWindowSettings(min_tokens=500, min_text_messages=2, max_tokens=3_000),
    )
    first = BatonService(settings)
    sid = conversation(first)
    view = list(first.session(sid).view)
    draft = _preview(first, sid, "range")
    asyncio.run(first.close())

    second = BatonService(settings)
    session = second.session(sid)
    assert session.view == view and session.boundaries == {}  # replay never sees the draft
    assert [s.session_id for s in asyncio.run(second.list_sessions())] == [sid]
    assert second.drafts.current(sid) == (draft, True)
    result = asyncio.run(second.drafts.apply(sid, draft.draft_id))
    assert abs(result.post_tokens - draft.post_tokens) <= 0.01 * result.post_tokens
    asyncio.run(second.close())


def test_undo_never_takes_a_draft_for_a_compaction(service: BatonService) -> None:
    sid = conversation(service)
    _preview(service, sid, "all")
    with pytest.raises(NothingToCompact):  # a draft alone: nothing to undo
        service.compaction.uncompact(sid)
    committed = asyncio.run(
        service.compaction.compact(sid, CompactRequest("up_to", service.session(sid).view[6]))
    )
    draft = _preview(service, sid, "from")
    service.compaction.uncompact(sid)  # undoes the committed compaction, not the draft
    session = service.session(sid)
    assert list(session.boundaries) == [committed.boundary_id] and session.active == []
    with pytest.raises(DraftStale):
        asyncio.run(service.drafts.apply(sid, draft.draft_id))


def test_regenerate_writes_the_draft_again_with_new_instructions(service: BatonService) -> None:
    sid = conversation(service)
    draft = _preview(service, sid, "up_to")
    again = asyncio.run(
        service.drafts.preview(
            sid, CompactRequest(instructions="Keep every file name."), regenerate=draft.draft_id
        )
    )
    assert again.draft_id != draft.draft_id and again.direction == "up_to"
    assert again.summarized_message_ids == draft.summarized_message_ids
    assert again.instructions is not None and "Keep every file name." in again.instructions
    with pytest.raises(DraftNotFound):  # one draft a session: the new one replaced it
        asyncio.run(service.drafts.apply(sid, draft.draft_id))
    asyncio.run(service.drafts.apply(sid, again.draft_id))


def test_an_edited_summary_measured_again_is_the_figure_its_commit_gives(
    service: BatonService,
) -> None:
    sid = conversation(service)
    draft = _preview(service, sid, "up_to")
    edited = "Edited: modules m0 to m11 were fixed, " + "in detail " * 200
    again = asyncio.run(
        service.drafts.preview(sid, CompactRequest(), regenerate=draft.draft_id, summary=edited)
    )
    assert again.summary == edited and again.post_tokens != draft.post_tokens
    assert again.warnings.count(EDITED_WARNING) == 1
    twice = asyncio.run(
        service.drafts.preview(
            sid, CompactRequest(), regenerate=again.draft_id, summary=edited + "!"
        )
    )
    assert twice.warnings.count(EDITED_WARNING) == 1  # measured again: said once
    again = twice
    edited += "!"
    with pytest.raises(DraftNotFound):
        asyncio.run(service.drafts.apply(sid, draft.draft_id))
    result = asyncio.run(service.drafts.apply(sid, again.draft_id))
    assert result.summary is not None and result.summary.startswith(edited.rstrip())
    assert abs(result.post_tokens - again.post_tokens) <= 0.01 * result.post_tokens


def test_an_edited_summary_far_longer_than_a_short_conversation_is_refused(
    service: BatonService,
) -> None:
    # a conversation under 10,000 tokens may grow by its summary (whose size the summarizer
    # bounds); an edited one is bounded by its length alone: 1.8 million characters were
    # committed, and 4,529 tokens of context became 402,247 in a 200,000-token window
    sid = conversation(service, turns=3)
    before = service.usage(sid).used_tokens
    assert before < 10_000
    draft = _preview(service, sid, "up_to")
    huge = "The user worked on the modules, in great detail. " * 36_000
    measured = asyncio.run(
        service.drafts.preview(sid, CompactRequest(), regenerate=draft.draft_id, summary=huge)
    )
    assert any("would not make the conversation smaller" in w for w in measured.warnings)
    transcript = service.session(sid).transcript.path.read_bytes()
    with pytest.raises(SummarizerFailed):
        asyncio.run(service.drafts.apply(sid, measured.draft_id))
    assert service.session(sid).transcript.path.read_bytes() == transcript
    assert service.usage(sid).used_tokens == before
    modest = "The user had modules m0 to m2 fixed, " + "in great detail " * 600
    result = asyncio.run(service.drafts.apply(sid, measured.draft_id, modest))
    assert result.boundary_id and result.post_tokens > before  # a summary's growth: allowed
    assert service.usage(sid).used_tokens == result.post_tokens


def test_a_draft_whose_restored_file_changed_before_it_was_applied_says_so(
    service: BatonService, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    app = workspace / "app.py"
    app.write_text("x = 1\n" * 50)
    uri = path_to_uri(app)
    service.set_workspace_folders([path_to_uri(workspace)])
    service.editor_files.opened(uri, app.read_text(), 1)
    sid = conversation(service)
    draft = _preview(service, sid, "all")
    assert [f.uri for f in draft.restored_files] == [uri]
    service.editor_files.changed(uri, "y = 2\n" * 2_000, 2)  # the user goes on editing
    result = asyncio.run(service.drafts.apply(sid, draft.draft_id))
    restored = result.restored_files[0]
    assert restored.tokens > 10 * draft.restored_files[0].tokens  # the commit restores it now
    assert result.post_tokens > draft.post_tokens + 1_000
    changed = [w for w in result.warnings if "since the draft was made" in w]
    assert len(changed) == 1, result.warnings
    assert "app.py" in changed[0]
    assert f"{result.post_tokens:,}" in changed[0] and f"{draft.post_tokens:,}" in changed[0]
