"""`baton compact SESSION --preview`, `--apply-draft ID --summary-file F`, `--discard-draft`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_compaction_drafts import conversation

from baton.cli.main import main
from baton.core.service.service import BatonService
from baton.core.settings import Settings


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, str]:
    data = tmp_path / "data"
    service = BatonService(Settings(data_dir=str(data)))
    sid = conversation(service, turns=40)
    service._runtimes.close_store()
    return data, sid


def test_preview_prints_the_draft_and_an_edited_summary_is_applied(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, str], tmp_path: Path
) -> None:
    data, sid = saved
    transcript = data / "sessions" / f"{sid}.jsonl"
    before = transcript.read_bytes()
    out_file = tmp_path / "summary.md"
    code, out, err = run(
        capsys, "compact", sid, "--preview", "--summary-out", str(out_file), "--data-dir", str(data)
    )
    assert code == 0, err
    assert transcript.read_bytes() == before
    assert "(nothing is committed)" in out and "Cost        The summary was written offline" in out
    assert "Drops       Summarized" in out
    draft_id = out.split("Draft       ")[1].split()[0]
    assert out_file.read_text(encoding="utf-8").strip()

    out_file.write_text("Edited by hand: the modules were fixed.\n", encoding="utf-8")
    code, out, err = run(
        capsys,
        "compact",
        str(transcript),
        "--apply-draft",
        draft_id,
        "--summary-file",
        str(out_file),
        "--data-dir",
        str(data),
        "--json",
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["summary"].startswith("Edited by hand: the modules were fixed.")
    assert "the summary was edited before it was applied" in result["warnings"]
    code, _, err = run(capsys, "compact", sid, "--apply-draft", draft_id, "--data-dir", str(data))
    assert code == 2 and "no draft" in err


def test_a_discarded_draft_and_bad_uses_are_clear(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, str], tmp_path: Path
) -> None:
    data, sid = saved
    code, out, err = run(capsys, "compact", sid, "--preview", "--json", "--data-dir", str(data))
    assert code == 0, err
    draft_id = json.loads(out)["draftId"]
    code, out, err = run(
        capsys, "compact", sid, "--discard-draft", draft_id, "--data-dir", str(data)
    )
    assert code == 0 and "nothing changed" in out
    assert not (data / "sessions" / f"{sid}.draft.json").exists()

    code, out, err = run(capsys, "compact", "s_nosuchsession", "--preview", "--data-dir", str(data))
    assert code == 2 and "not a session of the data dir" in err
    code, out, err = run(
        capsys, "compact", sid, "--preview", "--summary-file", "x.md", "--data-dir", str(data)
    )
    assert code == 2 and "--summary-file goes with --apply-draft" in err


def test_a_preview_whose_summary_cannot_be_written_keeps_the_draft_there(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, str], tmp_path: Path
) -> None:
    """The --summary-out file is checked before the preview: a failure at its end had
    already replaced the session's draft, and never printed the new one's id."""
    data, sid = saved
    code, out, err = run(capsys, "compact", sid, "--preview", "--json", "--data-dir", str(data))
    assert code == 0, err
    draft_id = json.loads(out)["draftId"]
    draft_file = data / "sessions" / f"{sid}.draft.json"
    before = draft_file.read_bytes()
    for target, needle in ((tmp_path / "no" / "x.md", "no such folder"), (tmp_path, "a folder")):
        code, out, err = run(
            capsys, "compact", sid, "--preview", "--summary-out", str(target), "--data-dir",
            str(data),
        )  # fmt: skip
        assert code == 2 and out == "" and needle in err
        assert draft_file.read_bytes() == before
    code, _, err = run(capsys, "compact", sid, "--apply-draft", draft_id, "--data-dir", str(data))
    assert code == 0, err


def test_the_draft_flags_alone_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from baton.cli.main import EXAMPLE_SESSION

    for flag, needle in (("--summary-out", "goes with --preview"),
                         ("--summary-file", "goes with --apply-draft")):  # fmt: skip
        code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), flag, "x.md")
        assert code == 2 and out == "" and needle in err


def test_a_summary_the_output_file_refuses_names_the_file_and_the_draft(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, str]
) -> None:
    """--summary-out /dev/full (a full disk): 'baton: No space left on device', naming
    neither the file nor the draft the preview had made, which stays the session's."""
    data, sid = saved
    code, out, err = run(
        capsys, "compact", sid, "--preview", "--summary-out", "/dev/full", "--data-dir", str(data)
    )
    assert code == 2 and out == ""
    assert err.startswith("baton: cannot write the summary to /dev/full: No space left on device")
    draft_id = err.split("the draft ")[1].split()[0]
    assert f"--apply-draft {draft_id}" in err and err.count("\n") == 1, err
    code, out, err = run(
        capsys, "compact", sid, "--discard-draft", draft_id, "--data-dir", str(data)
    )
    assert code == 0, err


def test_a_preview_takes_the_short_ids_baton_show_prints(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, str]
) -> None:
    """`--up-to 2f749bc9` (as `baton show` prints it) was "not in the conversation's current
    view" for a preview, where a compaction of the file takes it; a whole id did."""
    data, sid = saved
    transcript = data / "sessions" / f"{sid}.jsonl"
    code, out, err = run(capsys, "show", str(transcript), "--json")
    assert code == 0, err
    rows = json.loads(out)["messages"]
    short, whole = rows[9]["shortId"], rows[9]["id"]
    assert short != whole
    code, out, err = run(
        capsys, "compact", sid, "--preview", "--up-to", short, "--data-dir", str(data), "--json"
    )
    assert code == 0, err
    assert whole in json.loads(out)["summarizedMessageIds"]
    code, _, err = run(
        capsys, "compact", sid, "--preview", "--range", short, rows[2]["shortId"],
        "--data-dir", str(data),
    )  # fmt: skip
    assert code == 2 and err == "baton: --range: END_ID comes before ID in the conversation\n"


@pytest.mark.parametrize("text", ["", "\n \n"])
def test_an_empty_summary_file_is_named_before_the_draft_is_looked_at(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, str], tmp_path: Path, text: str
) -> None:
    """It said "an edited summary cannot be empty", naming neither the file nor what to do
    (and only once the session and its draft were read)."""
    data, sid = saved
    edited = tmp_path / "summary.md"
    edited.write_text(text, encoding="utf-8")
    argv = ["compact", sid, "--apply-draft", "draft_1", "--summary-file", str(edited)]
    code, out, err = run(capsys, *argv, "--data-dir", str(data))
    assert code == 2 and out == ""
    assert err == (
        f"baton: the summary file {edited} is empty: write the summary in it, or leave "
        "--summary-file out to apply the draft's own\n"
    )


def test_a_summary_out_in_the_data_dir_is_refused_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, str], tmp_path: Path
) -> None:
    """--summary-out naming the session's own transcript (a completion gone one name too
    far) wrote the summary over it: the conversation was lost, the session unreadable."""
    data, sid = saved
    sessions = data / "sessions"
    link = tmp_path / "notes.md"
    link.symlink_to(sessions / f"{sid}.jsonl")
    before = {p.name: p.read_bytes() for p in sessions.iterdir()}
    for target in (sessions / f"{sid}.jsonl", sessions / f"{sid}.draft.json", link):
        argv = ["compact", sid, "--preview", "--summary-out", str(target)]
        code, out, err = run(capsys, *argv, "--data-dir", str(data))
        assert code == 2 and out == ""
        assert err.startswith(f"baton: cannot write the summary to {target}: it is in the data dir")
        assert {p.name: p.read_bytes() for p in sessions.iterdir()} == before


def test_a_binary_summary_file_is_refused_and_nothing_is_committed(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, str], tmp_path: Path
) -> None:
    """A summary file with a NUL byte (a binary file named by mistake; a UTF-16 file with
    no byte-order mark, which is UTF-8 with a NUL after each letter) was committed as the
    summary, NULs and all, where a file that is not UTF-8 is refused."""
    data, sid = saved
    code, out, _ = run(capsys, "compact", sid, "--preview", "--data-dir", str(data))
    draft = out.split("--apply-draft ")[1].split("`")[0]
    transcript = data / "sessions" / f"{sid}.jsonl"
    before = transcript.read_bytes()
    edited = tmp_path / "summary.txt"
    edited.write_bytes("The summary, as edited.\n".encode("utf-16-le"))
    argv = ["compact", sid, "--apply-draft", draft, "--summary-file", str(edited)]
    code, out, err = run(capsys, *argv, "--data-dir", str(data))
    assert code == 2 and out == ""
    assert err == (
        f"baton: cannot read the summary file {edited}: a binary file (a NUL byte), not a "
        "summary file\n"
    )
    assert transcript.read_bytes() == before


def test_every_draft_action_with_json_prints_json(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, str]
) -> None:
    """`--discard-draft ID --json` printed its plain line ("Discarded draft ... nothing
    changed"), which a script reading the output as JSON, as it reads the preview's and
    the apply's, failed on."""
    data, sid = saved
    for action in ("--apply-draft", "--discard-draft"):
        code, out, err = run(capsys, "compact", sid, "--preview", "--json", "--data-dir", str(data))
        assert code == 0, err
        draft_id = json.loads(out)["draftId"]
        argv = ["compact", sid, action, draft_id, "--json", "--data-dir", str(data)]
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        told = json.loads(out)
        if action == "--apply-draft":
            assert told["boundaryId"].startswith("cmp_")
        else:
            assert told == {"sessionId": sid, "draftId": draft_id, "discarded": True}
        assert not (data / "sessions" / f"{sid}.draft.json").exists()


def test_a_summary_out_fifo_no_process_reads_is_refused_before_the_preview(
    saved: tuple[Path, str], tmp_path: Path
) -> None:
    """--summary-out naming a FIFO that no process reads: the preview made and saved its
    draft, then waited for ever on the FIFO's open, saying nothing."""
    import os
    import subprocess
    import sys

    data, sid = saved
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    argv = ["compact", sid, "--preview", "--summary-out", str(fifo), "--data-dir", str(data)]
    done = subprocess.run(
        [sys.executable, "-m", "baton", *argv],
        capture_output=True,
        timeout=60,  # a guard: the open waited for a reader for ever
    )
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode() == (
        f"baton: cannot write the summary to {fifo}: it is a FIFO that no process reads\n"
    )
    assert not (data / "sessions" / f"{sid}.draft.json").exists()
