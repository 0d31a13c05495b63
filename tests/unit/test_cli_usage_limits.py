"""`baton usage` and `baton import` count against the limits a server started with the
same key counts against: the Models API's with ANTHROPIC_API_KEY, else the model table's,
and `baton usage` says which."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.cli.main import EXAMPLE_SESSION, main
from baton_testkit.fake_anthropic import FakeAnthropic

MODEL = "claude-sonnet-4-5-20250929"  # the bundled example's
KEY = "sk-ant-test-usage-limits-0123456789"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def window_line(out: str) -> str:
    (line,) = [x for x in out.splitlines() if x.startswith("Context window")]
    return line


def test_with_a_key_usage_counts_against_the_models_api_limits_as_the_server_does(
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """A server with a key told a window of 60,000 (the Models API's), blocking, where
    `baton usage` of the same session said 200,000 (the model table's), ok, unsaid."""
    fake_anthropic.models[MODEL] = {"max_input_tokens": 60_000, "max_tokens": 2_048}
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    usage = json.loads(run(capsys, "usage", str(EXAMPLE_SESSION), "--json"))
    assert (usage["contextWindow"], usage["effectiveWindow"]) == (60_000, 57_952)
    assert window_line(run(capsys, "usage", str(EXAMPLE_SESSION))) == (
        f"Context window  60,000 ({MODEL}, the Models API's)"
    )
    told = run(capsys, "import", str(EXAMPLE_SESSION), "--data-dir", str(tmp_path / "data"))
    (line,) = [x for x in told.splitlines() if x.startswith("Usage")]
    assert f"{usage['usedTokens']:,} of 60,000 tokens" in line


def test_without_a_key_usage_says_its_window_is_the_model_tables_and_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert window_line(run(capsys, "usage", str(EXAMPLE_SESSION))) == (
        f"Context window  200,000 ({MODEL}, the model table's; no ANTHROPIC_API_KEY: a send "
        "asks the Models API, whose limits may differ)"
    )


def test_a_window_the_settings_set_is_said_to_be_theirs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    settings = tmp_path / "baton.json"
    settings.write_text(json.dumps({"contextWindow": 100_000}), encoding="utf-8")
    out = run(capsys, "usage", str(EXAMPLE_SESSION), "--settings", str(settings))
    assert window_line(out) == f"Context window  100,000 ({MODEL}, the contextWindow setting's)"


def test_with_exact_counts_and_a_key_usage_shows_the_apis_count_as_the_server_does(
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """A server with exactCounts and a key shows the API's count of the view (count_tokens)
    as the usage; `baton usage --settings` with the same settings showed the estimate,
    anchored on the last reply, with no word of the setting."""
    fake_anthropic.count_tokens_result = 31_337
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    settings = tmp_path / "baton.json"
    settings.write_text(json.dumps({"exactCounts": True}), encoding="utf-8")
    argv = ["usage", str(EXAMPLE_SESSION), "--settings", str(settings)]
    usage = json.loads(run(capsys, *argv, "--json"))
    assert (usage["usedTokens"], usage["basis"], usage["estimated"]) == (31_337, "exact", False)
    (line,) = [x for x in run(capsys, *argv).splitlines() if x.startswith("Used tokens")]
    said = "(exact: the API's count of the view, as exactCounts asks)"
    assert line == f"Used tokens     31,337 {said}"
