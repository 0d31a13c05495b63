"""`baton usage` and `baton import` count with the settings a server would have: those of a
settings file (`--settings`, the file `baton acp --settings` takes), else the defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.cli.main import EXAMPLE_SESSION, main


def usage_of(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    code = main(["usage", str(EXAMPLE_SESSION), *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def test_with_auto_compact_off_in_the_settings_it_is_said_off(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """It said "N% left until auto-compact" whatever the editor's settings: it read none."""
    settings = tmp_path / "baton.json"
    settings.write_text(json.dumps({"autoCompact": {"enabled": False}}))
    out, _ = usage_of(capsys, "--settings", str(settings))
    assert "until auto-compact" not in out and "(auto-compact off)" in out
    assert f"Settings        {settings}" in out.splitlines()
    shown, _ = usage_of(capsys, "--settings", str(settings), "--json")
    usage = json.loads(shown)
    assert usage["autoCompactEnabled"] is False and "auto-compact off" in usage["text"]["headline"]


def test_an_import_with_auto_compact_off_in_the_settings_says_it_as_usage_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Its usage line said "87% left" (left until the effective window, unsaid) and no word
    of auto-compact being off, where `baton usage` says both."""
    settings = tmp_path / "baton.json"
    settings.write_text(json.dumps({"autoCompact": {"enabled": False}}))
    data_dir = str(tmp_path / "data")
    argv = ["import", str(EXAMPLE_SESSION), "--settings", str(settings), "--data-dir", data_dir]
    assert main(argv) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("Usage")]
    said, _ = usage_of(capsys, "--settings", str(settings))
    left = said.split(" · ")[-1].split("\n")[0]  # "N% left until the effective window"
    assert left.endswith("% left until the effective window") and left in line
    assert line.endswith(", ok (auto-compact off))")
    assert "State           ok (auto-compact off)" in said.splitlines()


def test_without_a_settings_file_it_says_it_counts_with_the_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, _ = usage_of(capsys)
    (line,) = [x for x in out.splitlines() if x.startswith("Settings")]
    assert "defaults" in line and "--settings" in line


def test_a_bad_value_warns_and_keeps_its_default_as_a_server_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    settings = tmp_path / "baton.json"
    settings.write_text(json.dumps({"autoCompact": {"enabled": "maybe"}}))
    out, err = usage_of(capsys, "--settings", str(settings))
    assert "baton: warning: baton.autoCompact.enabled: invalid value" in err
    assert "until auto-compact" in out


def test_a_settings_file_that_is_no_json_object_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    settings = tmp_path / "baton.json"
    settings.write_text("[1]")
    assert main(["usage", "--settings", str(settings)]) != 0
    err = capsys.readouterr().err
    assert err == f"baton: --settings {settings}: the file must hold a JSON object\n"


def test_compact_keeps_the_window_the_settings_file_sets(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`baton compact` compacted with the defaults whatever the editor set: its kept window
    was not the one the server's compaction of the same conversation keeps."""
    settings = tmp_path / "baton.json"
    narrow = {"minTokens": 0, "minTextMessages": 1, "maxTokens": 500}
    settings.write_text(json.dumps({"keepWindow": narrow}))
    kept = []
    for extra in ([], ["--settings", str(settings)]):
        code = main(["compact", str(EXAMPLE_SESSION), "--json", *extra])
        out, err = capsys.readouterr()
        assert code == 0, err
        kept.append(len(json.loads(out)["keptMessageIds"]))
    assert kept[1] < kept[0]


def test_an_import_places_and_counts_with_a_settings_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`baton import` took no `--settings`: it kept the session in the default data dir and
    told its usage against the default window, whatever the editor's server would use."""
    settings = tmp_path / "baton.json"
    data_dir = tmp_path / "editor-data"
    settings.write_text(json.dumps({"contextWindow": 50_000, "dataDir": str(data_dir)}))
    code = main(["import", str(EXAMPLE_SESSION), "--settings", str(settings)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert " of 50,000 tokens " in out
    (transcript,) = (data_dir / "sessions").glob("*.jsonl")
    assert f"Transcript {transcript}" in out.splitlines()
    other = tmp_path / "other-data"  # --data-dir wins over the file's, as for every command
    assert (
        main(
            ["import", str(EXAMPLE_SESSION), "--settings", str(settings), "--data-dir", str(other)]
        )
        == 0
    )
    assert len(list((other / "sessions").glob("*.jsonl"))) == 1


def test_a_relative_data_dir_in_a_settings_file_is_read_from_the_files_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`"dataDir": "sessions-here"` kept the sessions wherever the command was run from, so
    one settings file put them in another folder from each directory it was used in (and
    `baton acp --settings`, started by an editor, in the editor's). A relative dataDir
    now names a folder beside the settings file, as a path in a config file does."""
    conf = tmp_path / "conf"
    conf.mkdir()
    settings = conf / "baton.json"
    settings.write_text(json.dumps({"dataDir": "kept"}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    argv = ["import", str(EXAMPLE_SESSION), "--settings", str(settings)]
    assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert len(list((conf / "kept" / "sessions").glob("*.jsonl"))) == 1
    assert list(elsewhere.iterdir()) == []
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    settings.write_text(json.dumps({"dataDir": "~/kept"}))  # a home-relative one: as it says
    assert main(argv) == 0, capsys.readouterr().err
    assert len(list((home / "kept" / "sessions").glob("*.jsonl"))) == 1


def test_on_an_output_that_cannot_show_block_characters_the_chart_is_drawn_in_ascii() -> None:
    """On an output whose encoding has no block characters (a terminal in a Latin-1 or an
    ASCII locale), each bar was printed as the escapes of its characters ("\\u2588\\u2588
    \\u258e"), six characters a cell, pushing the figures out of their column."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "baton", "usage", str(EXAMPLE_SESSION)],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "latin-1"},
        check=True,
    )
    lines = done.stdout.decode("latin-1").splitlines()
    (messages,) = [x for x in lines if x.startswith("  messages ")]
    assert "\\u" not in "\n".join(lines)
    assert messages.startswith("  messages     ####") and messages.endswith("%")
    widths = {len(x) for x in lines if x.startswith("  ") and x.endswith("%")}
    assert len(widths) == 1  # every figure in its column
