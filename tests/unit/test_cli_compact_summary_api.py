"""`baton compact SESSION --preview` with the `anthropic` summarizer, against the fake API:
the draft is written by the model, and the command ends cleanly."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from test_compaction_drafts import conversation

from baton.cli.main import main
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton_testkit.fake_anthropic import FakeAnthropic

KEY = "sk-ant-test-SECRET-123"
ANSWER = (
    "<analysis>\nmy draft notes\n</analysis>\n"
    "<summary>\n## 1. Primary request\nShip the fix.\n</summary>"
)


@pytest.fixture
def keyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropic
) -> list[str]:
    """The arguments of a data dir with one saved session and a settings file naming the
    `anthropic` summarizer, with a key for the fake API."""
    data = tmp_path / "data"
    service = BatonService(Settings(data_dir=str(data)))
    sid = conversation(service, turns=40)
    service._runtimes.close_store()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"summarizer": "anthropic"}), encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return [sid, "--settings", str(settings), "--data-dir", str(data)]


def test_a_preview_the_model_writes_ends_cleanly(
    capsys: pytest.CaptureFixture[str], keyed: list[str], fake_anthropic: FakeAnthropic
) -> None:
    """It raised "RuntimeError: Event loop is closed" once the draft was made: the API's
    connections, opened in the preview's event loop, were closed in another one."""
    fake_anthropic.reply(ANSWER)
    code = main(["compact", *keyed, "--preview", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    draft = json.loads(out)
    assert draft["summarizer"] == "anthropic"
    assert draft["summary"].startswith("## 1. Primary request\nShip the fix.")
    assert len(fake_anthropic.message_requests()) == 1


WAIT = "Rate limited by the API: trying again in 1 s (attempt 2 of 3)"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_wait_of_the_summary_is_said_on_the_progress(
    capsys: pytest.CaptureFixture[str], keyed: list[str], fake_anthropic: FakeAnthropic
) -> None:
    """A 429 on the summary's request was waited out with nothing said: the preview's
    progress wrote nothing unless on a terminal, and there a wait was drawn over at once."""
    fake_anthropic.error(429, "rate_limit_error", "slow down", retry_after="0.01")
    fake_anthropic.reply(ANSWER)
    code = main(["compact", *keyed, "--preview"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"  {WAIT}\n" in err.splitlines(keepends=True)
    assert "Draft       " in out
    assert len(fake_anthropic.message_requests()) == 2


def test_on_a_terminal_a_wait_stays_above_the_bar_and_the_bar_is_cleared(
    capsys: pytest.CaptureFixture[str],
    keyed: list[str],
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    fake_anthropic.error(529, "overloaded_error", "busy", retry_after="0.01")
    fake_anthropic.reply(ANSWER)
    code = main(["compact", *keyed, "--preview"])
    assert code == 0, terminal.getvalue()
    shown = terminal.getvalue()
    wait = "The API is overloaded: trying again in 1 s (attempt 2 of 3)"
    assert f"\r\x1b[K  {wait}\n" in shown  # a line of its own, the bar cleared before it
    assert shown.endswith("\r\x1b[K")  # the report starts on a clean line
    assert "Draft       " in capsys.readouterr().out
