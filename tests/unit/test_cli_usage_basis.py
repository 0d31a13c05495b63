"""`baton usage` words its figure as the meter does: a figure estimated since the view
changed is not one with "no API usage to anchor on" when a reply's usage still anchors it
(a `from` compaction keeps the prefix it covered), and past the window its share is the
real one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.cli.main import EXAMPLE_SESSION, main
from baton.core.compaction import engine
from baton.core.compaction.engine import CompactContext
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import ApiUsage, MessageInput, TextBlock
from baton.core.conversation.meta_records import AutoPause
from baton.core.conversation.store import SessionStore
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.estimator import Estimator, default_estimator
from baton.core.usage.session_usage import compute_usage
from baton.core.usage.wording import PausedBy


def _talk(store: SessionStore, turns: int) -> str:
    session = store.create(model="claude-sonnet-4-5")
    for n in range(turns):
        session.append([MessageInput(role="user", content=f"question {n}: " + "lorem " * 400)])
        usage = ApiUsage(input_tokens=1_000 + 900 * n, output_tokens=20)
        reply = MessageInput(
            role="assistant",
            content=[TextBlock(text=f"answer {n}: " + "dolor " * 50)],
            api_message_id=f"api_{n}",
            usage=usage,
        )
        session.append([reply])
    return session.session_id


def _used_line(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    code = main(["usage", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("Used tokens")]
    return line


async def test_a_from_compaction_over_a_valid_anchor_is_said_anchored_and_estimated(
    capsys: pytest.CaptureFixture[str], store: SessionStore, estimator: Estimator
) -> None:
    session = store.get(_talk(store, 8))
    pivot = session.view[6]
    keep = KeepWindowSettings(min_tokens=600, min_text_messages=2)
    context = CompactContext(
        Settings(keep_window=keep), estimator, ExtractiveSummarizer(estimator.count_text)
    )
    await engine.compact(session, CompactRequest(direction="from", pivot_message_id=pivot), context)
    usage = compute_usage(session, Settings(), estimator)
    anchor = session.anchor()
    assert usage.basis == "compacted" and anchor is not None
    anchored = session.view[anchor[0]]

    line = _used_line(capsys, session.transcript.path)
    assert "no API usage to anchor on" not in line
    assert f"anchored on real API usage of message {anchored}" in line
    assert "estimated" in line


async def test_an_all_compaction_says_what_it_carries(
    capsys: pytest.CaptureFixture[str], store: SessionStore, estimator: Estimator
) -> None:
    session = store.get(_talk(store, 8))
    keep = KeepWindowSettings(min_tokens=600, min_text_messages=2)
    context = CompactContext(
        Settings(keep_window=keep), estimator, ExtractiveSummarizer(estimator.count_text)
    )
    await engine.compact(session, CompactRequest(direction="all"), context)
    assert session.anchor() is None
    line = _used_line(capsys, session.transcript.path)
    assert "no API usage to anchor on" not in line
    assert "estimated since the view changed" in line
    assert "what the last API usage showed besides it" in line


def test_a_session_never_replied_to_has_no_usage_to_anchor_on(
    capsys: pytest.CaptureFixture[str], store: SessionStore
) -> None:
    session = store.create(model="claude-sonnet-4-5")
    session.append([MessageInput(role="user", content="hello " * 100)])
    line = _used_line(capsys, session.transcript.path)
    assert line.endswith("(estimated (no API usage to anchor on))")


def test_past_the_window_the_share_used_is_the_real_one_as_the_meter_says(
    capsys: pytest.CaptureFixture[str], store: SessionStore
) -> None:
    """`percentUsed` stops at 100; the meter's words say 125%, and so does `baton usage`."""
    session = store.create(model="claude-sonnet-4-5")  # a 200,000-token window
    session.append([MessageInput(role="user", content="hello")])
    usage = ApiUsage(input_tokens=249_980, output_tokens=20)
    reply = MessageInput(role="assistant", content="hi", api_message_id="api_big", usage=usage)
    session.append([reply])
    code = main(["usage", str(session.transcript.path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "125.0% of the window used" in out


def test_an_import_past_the_window_gives_its_real_share(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path / "data"))
    head = {"sessionId": "s1", "cwd": "/w", "timestamp": "2026-01-01T00:00:00Z"}
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "hi"}],
        "usage": {"input_tokens": 249_980, "output_tokens": 20},
    }
    records = [
        {
            **head,
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "message": {"role": "user", "content": "hello"},
        },
        {**head, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": reply},
    ]
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code = main(["import", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    said = "(125.0% used, 0% left until auto-compact, blocking)"
    assert f"Usage      250,000 of 200,000 tokens {said}" in out


@pytest.mark.parametrize(
    ("by", "said"),
    [
        ("failures", "paused after repeated failures"),
        ("thrashing", "stopped: the working set does not fit"),
    ],
)
def test_a_session_whose_auto_compact_paused_is_said_paused_as_the_meter_says(
    capsys: pytest.CaptureFixture[str], store: SessionStore, by: PausedBy, said: str
) -> None:
    """The transcript keeps the pause (a restarted server's meter says it): so does
    `baton usage`, in its state and its JSON, in the meter's words for that pause (a
    thrashing auto-compact is stopped, not paused)."""
    session = store.create(model="claude-sonnet-4-5")
    session.append([MessageInput(role="user", content="hello " * 100)])
    session.keep_auto_pause(AutoPause(by, "the summary request failed"))
    path = str(session.transcript.path)
    assert main(["usage", path]) == 0
    (state,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("State")]
    assert state == f"State           error (auto-compact {said})"
    assert main(["usage", path, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["autoCompactPaused"] and shown["autoCompactPausedBy"] == by
    assert shown["state"] == "error"
    assert f"auto-compact {said}" in shown["text"]["headline"]
    assert f"; {said}. " in shown["text"]["autoCompact"]


def test_an_import_with_no_usage_to_anchor_on_says_its_figure_is_estimated(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose replies carry no usage is counted offline: the import's usage line says
    so, as the meter's "~" and `baton usage` do."""
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path / "data"))
    head = {"sessionId": "s1", "cwd": "/w", "timestamp": "2026-01-01T00:00:00Z"}
    record = {
        **head,
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "message": {"role": "user", "content": "hello " * 200},
    }
    path = tmp_path / "fresh.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["import", str(path)]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("Usage")]
    assert " tokens (estimated; " in line, line


def calibrated_and_unanchored(tmp_path: Path) -> tuple[Path, Path]:
    """A data dir whose saved calibration is 1.3, and the example with no reply usage to
    anchor on (21,070 tokens uncalibrated, 27,391 at 1.3)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "calibration.json").write_text('{"factor": 1.3, "observations": 5}\n')
    records = [json.loads(line) for line in EXAMPLE_SESSION.read_text().splitlines()]
    for record in records:
        if isinstance(record.get("message"), dict):
            record["message"].pop("usage", None)
    path = tmp_path / "unanchored.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return data, path


def test_an_import_says_its_usage_with_the_data_dirs_calibration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With no usage to anchor on, `baton import` estimated uncalibrated (21,070 tokens)
    where the data dir's server, and `baton usage` of the new transcript, start from its
    saved calibration (27,391 at 1.3): the import now says what they say."""
    data, path = calibrated_and_unanchored(tmp_path)
    assert main(["import", str(path), "--data-dir", str(data)]) == 0
    imported = capsys.readouterr().out
    (transcript,) = (data / "sessions").iterdir()
    assert main(["usage", str(transcript), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["estimated"]
    assert f"Usage      {said['usedTokens']:,} of " in imported


def test_a_compaction_of_a_data_dir_session_is_measured_with_its_calibration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`baton compact SESSION --preview` drafted 21,070 -> 12,318 tokens, and a compaction
    of the transcript file said the same, where the data dir's server drafts 27,391 ->
    16,013 (its saved calibration, 1.3): the figures are now the server's."""
    data, path = calibrated_and_unanchored(tmp_path)
    assert main(["import", str(path), "--data-dir", str(data)]) == 0
    capsys.readouterr()
    (transcript,) = (data / "sessions").iterdir()
    assert main(["usage", str(transcript), "--json"]) == 0
    used = json.loads(capsys.readouterr().out)["usedTokens"]
    assert main(["compact", str(transcript), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["preTokens"] == used
    shared = default_estimator()
    factor = shared.factor
    assert main(["compact", transcript.stem, "--preview", "--data-dir", str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["preTokens"] == used
    assert shared.factor == factor  # the process's own estimator is left as it was


def test_a_data_dir_session_named_from_its_folder_is_counted_as_by_its_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cd DATA/sessions; baton usage s_….jsonl` was counted uncalibrated (21,070) where the
    same transcript named by its path was counted with the data dir's calibration (27,391):
    a relative name's folder has no name to tell it is a data dir's."""
    data, path = calibrated_and_unanchored(tmp_path)
    assert main(["import", str(path), "--data-dir", str(data)]) == 0
    capsys.readouterr()
    (transcript,) = (data / "sessions").iterdir()
    said = []
    for name in (str(transcript), transcript.name):
        monkeypatch.chdir(transcript.parent)
        assert main(["usage", name, "--json"]) == 0
        said.append(json.loads(capsys.readouterr().out)["usedTokens"])
        assert main(["compact", name, "--json"]) == 0
        said.append(json.loads(capsys.readouterr().out)["preTokens"])
    assert said[0] > 21_070 and len(set(said)) == 1, said
