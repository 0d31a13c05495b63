"""A session id given where a command takes a session FILE (`baton usage s_...`, the id
the editor's session list shows) is told as such: the transcript it names, where the
data dir holds it, else where it would be."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.cli.main import EXAMPLE_SESSION, main


@pytest.mark.parametrize("command", ["usage", "show", "payload", "compact"])
def test_a_session_id_is_answered_with_its_transcript(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: str,
) -> None:
    """It said "no such file: s_..." alone, as for a mistyped name, where the data dir held
    that session's transcript: the user had to know where sessions are kept and how their
    files are named."""
    data = tmp_path / "data"
    monkeypatch.setenv("BATON_DATA_DIR", str(data))
    monkeypatch.chdir(tmp_path)
    assert main(["import", str(EXAMPLE_SESSION)]) == 0
    (transcript,) = (data / "sessions").glob("s_*.jsonl")
    sid = transcript.stem
    capsys.readouterr()
    assert main([command, sid]) == 2
    assert capsys.readouterr().err == (
        f"baton: no such file: {sid}; the data dir's session {sid} is {transcript}: name that "
        "file\n"
    )
    assert main([command, "s_0123456789abcdef"]) == 2
    assert capsys.readouterr().err == (
        "baton: no such file: s_0123456789abcdef; a session id names a transcript of the "
        f"data dir, and {data / 'sessions'} holds none of that id\n"
    )
