"""The command line's show, compact --save, repeated imports, clean pipes and warnings."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from baton.cli.main import EXAMPLE_SESSION, main
from baton.cli.message_table import short_ids
from baton.core.conversation.store import SessionStore
from baton_testkit.claude_code_gen import generate


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "baton-data"
    monkeypatch.setenv("BATON_DATA_DIR", str(target))
    return target


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def shown(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    code, out, err = run(capsys, "show", *argv, "--json")
    assert code == 0, err
    rows: list[dict[str, object]] = json.loads(out)["messages"]
    return rows


# ---- show ------------------------------------------------------------------------------------


def test_show_lists_the_view_with_short_ids_roles_kinds_tokens_and_first_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = shown(capsys, str(EXAMPLE_SESSION))
    code, out, _ = run(capsys, "show", str(EXAMPLE_SESSION))
    assert code == 0
    lines = out.splitlines()
    assert f"{len(rows)} messages in the view" in lines[0]
    assert lines[1].split() == ["#", "id", "role", "kind", "tokens", "first", "words"]
    table = lines[2 : 2 + len(rows)]
    for line, row in zip(table, rows, strict=True):
        index, short, role, kind, tokens, *_ = line.split()
        assert (int(index), short, role, kind) == (
            row["index"],
            row["shortId"],
            row["role"],
            row["kind"],
        )
        assert int(tokens.replace(",", "")) == row["tokens"]
        assert str(row["id"]).startswith(short)
    assert rows[0]["preview"] == table[0].split(None, 5)[5]
    assert str(rows[0]["preview"]).startswith("The monthly report crashes")
    assert any(str(r["preview"]).startswith("[result error:") for r in rows)
    assert [r["index"] for r in rows] == list(range(len(rows)))


def test_messages_is_the_same_as_show(capsys: pytest.CaptureFixture[str]) -> None:
    _, by_show, _ = run(capsys, "show", str(EXAMPLE_SESSION))
    _, by_messages, _ = run(capsys, "messages", str(EXAMPLE_SESSION))
    assert by_show == by_messages


def test_short_ids_grow_until_they_are_unique() -> None:
    ids = ["msg_0123456789ab", "msg_01234567ffff", "cc_aaaaaaaabbbb", "2f749bc9-825e", "2f749bc9-9"]
    shorts = short_ids(ids)
    assert shorts["cc_aaaaaaaabbbb"] == "cc_aaaaaaaa"
    assert shorts["msg_0123456789ab"] == "msg_012345678"
    assert shorts["msg_01234567ffff"] == "msg_01234567f"
    assert shorts["2f749bc9-825e"] == "2f749bc9-8"
    for full, short in shorts.items():
        assert [i for i in ids if i.startswith(short)] == [full]


def test_an_id_show_prints_is_accepted_by_compact(capsys: pytest.CaptureFixture[str]) -> None:
    rows = shown(capsys, str(EXAMPLE_SESSION))
    pivot = rows[10]
    assert len(str(pivot["shortId"])) < len(str(pivot["id"]))
    code, out, err = run(
        capsys, "compact", str(EXAMPLE_SESSION), "--up-to", str(pivot["shortId"]), "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["direction"] == "up_to"
    adjusted = result.get("adjustedPivot")
    if adjusted is None:
        assert result["summarizedMessageIds"][-1] == pivot["id"]
    else:
        assert adjusted["requested"] == pivot["id"]


def test_an_unknown_or_ambiguous_id_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    rows = shown(capsys, str(EXAMPLE_SESSION))
    firsts = [str(r["id"])[0] for r in rows]
    shared = next(c for c in firsts if firsts.count(c) > 1)  # 58 hex-led ids: one repeats
    for given, needle in (("zzzz", "no message id in the view starts with"),
                          (shared, "is the start of")):  # fmt: skip
        code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), "--up-to", given)
        assert code == 2 and out == ""
        assert err.startswith("baton: ") and needle in err and err.count("\n") == 1


# ---- compact works on a copy; --save keeps it ------------------------------------------------


def test_compact_says_it_works_on_a_copy(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compact", str(EXAMPLE_SESSION), "--dry-run")
    assert code == 0
    assert "a temporary copy, the file is unchanged" in out.splitlines()[0]
    parser_help = subprocess.run(
        [sys.executable, "-m", "baton", "compact", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "temporary copy" in parser_help and "never changed" in parser_help


def test_compact_save_keeps_the_result_as_a_session_in_the_data_dir(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "chosen-data"
    before = EXAMPLE_SESSION.read_bytes()
    code, out, err = run(
        capsys, "compact", str(EXAMPLE_SESSION), "--save", "--data-dir", str(elsewhere)
    )
    assert code == 0, err
    saved = out.splitlines()[-1]
    assert saved.startswith("Saved       as Baton session s_") and str(elsewhere) in saved
    session_id = saved.split("session ")[1].split()[0]
    store = SessionStore(elsewhere, lambda m: 0)
    try:
        session = store.get(session_id)
        assert session.compactions == 1
        assert session.view_messages()[0].kind == "summary"
        assert session.title.endswith("(compacted)")
    finally:
        store.close()
    assert EXAMPLE_SESSION.read_bytes() == before


def test_compact_save_into_a_data_dir_whose_name_is_not_utf8(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The summary names the saved copy, under the data dir: it failed at the commit."""
    data = tmp_path / os.fsdecode(b"data-\xe9")
    code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), "--save", "--data-dir", str(data))
    assert code == 0, err
    assert "Saved       as Baton session s_" in out
    assert len(list((data / "sessions").glob("*.jsonl"))) == 1


def test_compact_save_in_json_names_the_session(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), "--save", "--json")
    assert code == 0, err
    saved = json.loads(out)["savedSessionId"]
    assert (data_dir / "sessions" / f"{saved}.jsonl").is_file()


def test_compact_save_of_a_dry_run_is_refused_and_saves_nothing(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), "--save", "--dry-run")
    assert code == 2 and out == "" and "dry run" in err
    assert not (data_dir / "sessions").exists()


def read_only_under(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write under `folder` fails as on a read-only file system (the rest of the
    disk, where a command keeps its scratch copies, stays writable)."""
    real_open, real_mkdir, real_access, real_statvfs = os.open, os.mkdir, os.access, os.statvfs

    def under(path: object) -> bool:
        return Path(os.fsdecode(path)).absolute().is_relative_to(folder)  # type: ignore[arg-type]

    def refuse(path: object) -> OSError:
        return OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(path))  # type: ignore[arg-type]

    def open_(path: object, flags: int, mode: int = 0o777, **kw: object) -> int:
        if under(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise refuse(path)
        return real_open(path, flags, mode, **kw)  # type: ignore[arg-type]

    def mkdir(path: object, mode: int = 0o777, **kw: object) -> None:
        if under(path):
            raise refuse(path)
        real_mkdir(path, mode, **kw)  # type: ignore[arg-type]

    def access(path: object, mode: int, **kw: object) -> bool:
        if under(path) and mode & os.W_OK:
            return False
        return real_access(path, mode, **kw)  # type: ignore[arg-type]

    class ReadOnly:
        def __init__(self, path: object) -> None:
            flag = real_statvfs(path).f_flag  # type: ignore[arg-type]
            self.f_flag = flag | os.ST_RDONLY if under(path) else flag

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(os, "statvfs", ReadOnly)


@pytest.mark.parametrize("where", ["a file", "under a file", "read-only"])
def test_a_data_dir_that_cannot_be_written_is_named_before_any_work(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    where: str,
) -> None:
    """import and compact --save failed only when they wrote, after the work: compact
    printed its whole progress and then 'could not create a session in ...', import named
    a temporary file of its own ('Not a directory: .../.s_....importing')."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder\n")
    data = {"a file": blocker, "under a file": blocker / "data", "read-only": tmp_path / "ro"}
    data_dir = data[where]
    if where == "read-only":
        data_dir.mkdir()
        read_only_under(data_dir, monkeypatch)
        why = f"{data_dir} cannot be written (Read-only file system)"
    else:
        why = f"{blocker} is not a directory"
    for argv in (["import"], ["compact", "--save"], ["compact", "--save", "--json"]):
        code, out, err = run(capsys, *argv, str(EXAMPLE_SESSION), "--data-dir", str(data_dir))
        assert code == 2 and out == "", argv
        assert err == f"baton: cannot keep sessions in the data dir {data_dir}: {why}\n", argv
    assert blocker.read_text() == "a file, not a folder\n"
    assert where != "read-only" or not any(data_dir.iterdir())


def test_a_draft_of_a_session_in_a_read_only_data_dir_is_refused_before_any_work(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, data_dir: Path
) -> None:
    code, out, err = run(capsys, "import", str(EXAMPLE_SESSION))
    assert code == 0, err
    (transcript,) = (data_dir / "sessions").iterdir()
    before = transcript.read_bytes()
    read_only_under(data_dir, monkeypatch)
    why = f"{data_dir / 'sessions'} cannot be written (Read-only file system)"
    for argv in (["--preview"], ["--apply-draft", "d_1"], ["--discard-draft", "d_1"]):
        code, out, err = run(capsys, "compact", transcript.stem, *argv)
        assert code == 2 and out == "", argv
        assert err == f"baton: cannot keep sessions in the data dir {data_dir}: {why}\n", argv
    assert [p.name for p in (data_dir / "sessions").iterdir()] == [transcript.name]
    assert transcript.read_bytes() == before


def test_an_argument_that_is_not_utf8_is_refused_before_any_work(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    """`--instructions $'keep \\xff this'`: the compaction ran, printed its progress and
    failed at its commit ('the record holds text that cannot be written as UTF-8 (a lone
    surrogate) at [0].boundary.instructions'); --title said '... at a string'."""
    odd = "keep \udcff this"  # the byte 0xff of an argument, as Python holds it
    for argv in (
        ["compact", str(EXAMPLE_SESSION), "--instructions", odd],
        ["compact", str(EXAMPLE_SESSION), "--save", "--instructions", odd],
        ["compact", "s_1", "--preview", "--instructions", odd],
    ):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "", argv
        assert err == "baton: --instructions is not UTF-8 text (the byte 0xff at character 6)\n"
    code, out, err = run(capsys, "import", str(EXAMPLE_SESSION), "--title", odd)
    assert code == 2 and out == ""
    assert err == "baton: --title is not UTF-8 text (the byte 0xff at character 6)\n"
    assert not data_dir.exists()
    # --model named an "unknown model 'keep \\udcff this'" and printed its usage on a guess
    code, out, err = run(capsys, "usage", str(EXAMPLE_SESSION), "--model", odd)
    assert code == 2 and out == ""
    assert err == "baton: --model is not UTF-8 text (the byte 0xff at character 6)\n"


# ---- import ----------------------------------------------------------------------------------


def test_importing_a_file_again_says_so_and_again_makes_a_second_copy(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    code, first, _ = run(capsys, "import", str(EXAMPLE_SESSION))
    assert code == 0
    session_id = first.split(" as session ")[1].split()[0]
    # a compacted copy kept with --save is not an import of the file
    assert run(capsys, "compact", str(EXAMPLE_SESSION), "--save")[0] == 0

    code, repeat, _ = run(capsys, "import", str(EXAMPLE_SESSION))
    assert code == 0
    assert repeat.startswith(f"Already imported {EXAMPLE_SESSION} as session {session_id} (")
    assert "--again" in repeat
    assert len(list((data_dir / "sessions").iterdir())) == 2  # the import and the saved copy

    code, again, _ = run(capsys, "import", str(EXAMPLE_SESSION), "--again")
    assert code == 0
    second = again.split(" as session ")[1].split()[0]
    assert second != session_id and f"imported before as {session_id}" in again
    assert len(list((data_dir / "sessions").iterdir())) == 3


def test_a_blank_data_dir_makes_no_folder_of_blanks_where_the_command_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BATON_DATA_DIR="  " kept the import in a folder named "  " under the current
    directory, where no later command run elsewhere finds it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "platform"))
    monkeypatch.setenv("BATON_DATA_DIR", "  ")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    code, _, err = run(capsys, "import", str(EXAMPLE_SESSION))
    assert code == 0, err
    assert list(here.iterdir()) == []
    assert len(list((tmp_path / "platform" / "baton" / "sessions").glob("s_*.jsonl"))) == 1


def test_importing_a_file_that_grew_since_says_it_changed(
    capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path
) -> None:
    """Claude Code went on writing the session after the import: 'nothing changed' would
    tell the user the earlier import is the file as it is now."""
    records = generate(5, era="newest", turns=8, repairs=False).records
    source = tmp_path / "growing.jsonl"
    half = [json.dumps(r) + "\n" for r in records[: len(records) // 2]]
    source.write_text("".join(half), encoding="utf-8")
    assert run(capsys, "import", str(source))[0] == 0
    before = source.stat().st_size
    with source.open("a", encoding="utf-8") as more:
        more.writelines(json.dumps(r) + "\n" for r in records[len(records) // 2 :])

    code, out, _ = run(capsys, "import", str(source))

    assert code == 0 and out.startswith(f"Already imported {source} as session ")
    assert "nothing changed" not in out
    assert f"the file changed since ({before:,} bytes then, {source.stat().st_size:,} now)" in out
    assert len(list((data_dir / "sessions").iterdir())) == 1
    assert run(capsys, "import", str(source), "--again")[0] == 0  # the file as it is now
    assert "; nothing changed" in run(capsys, "import", str(source))[1]


def test_importing_a_baton_transcript_says_what_it_is_and_how_to_use_it(
    capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path
) -> None:
    """A session's own transcript given to `baton import` was 'holds no Claude Code
    conversation records', which named neither what the file is nor what to do."""
    assert run(capsys, "import", str(EXAMPLE_SESSION))[0] == 0
    (transcript,) = (data_dir / "sessions").glob("*.jsonl")
    sid = transcript.stem
    code, out, err = run(capsys, "import", str(transcript))
    assert code == 2 and out == ""
    assert err == (
        f"baton: {transcript} is the transcript of Baton session {sid} in {data_dir} "
        "already: nothing to import\n"
    )
    kept = tmp_path / "kept.jsonl"  # a copy kept elsewhere
    kept.write_bytes(transcript.read_bytes())
    code, out, err = run(capsys, "import", str(kept))
    assert code == 2 and out == ""
    assert err == (
        f"baton: {kept} is a Baton transcript of session {sid}, which {data_dir} holds "
        "already: nothing to import; `baton show`, `usage` and `compact` read it as it is\n"
    )
    other = tmp_path / "other-data"
    code, out, err = run(capsys, "import", str(kept), "--data-dir", str(other))
    assert code == 2 and out == ""
    assert err == (
        f"baton: {kept} is a Baton transcript (session {sid}), not a Claude Code session "
        "file: nothing to import; `baton show`, `usage` and `compact` read it as it is, "
        f"and copied into {other / 'sessions'} as {sid}.jsonl it is a session there\n"
    )
    assert [p.name for p in (data_dir / "sessions").iterdir()] == [transcript.name]
    assert not other.exists()


@pytest.mark.parametrize("header", ["torn", "gone"])
def test_a_baton_transcript_whose_header_is_damaged_is_read_as_one(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    data_dir: Path,
    tmp_path: Path,
    header: str,
) -> None:
    """Its first line torn or lost, every command took it for a Claude Code file: 'holds
    no Claude Code conversation records', where the server shows such a file read-only."""
    assert run(capsys, "import", str(EXAMPLE_SESSION))[0] == 0
    (transcript,) = (data_dir / "sessions").glob("*.jsonl")
    rest = transcript.read_bytes().split(b"\n", 1)[1]
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes((b'{"type": "sess\n' if header == "torn" else b"") + rest)
    code, out, err = run(capsys, "show", str(damaged), "--json")
    assert code == 0, err
    assert len(json.loads(out)["messages"]) == 58
    told = [r.getMessage() for r in caplog.records]
    torn = ["damaged.jsonl: skipped unreadable line 1"] if header == "torn" else []
    assert told == [*torn, "damaged.jsonl: the transcript has no valid header line; read as it is"]
    code, out, err = run(capsys, "import", str(damaged))
    assert code == 2 and out == ""
    assert err == (
        f"baton: {damaged} is a Baton transcript whose first line is no valid header, not a "
        "Claude Code session file: nothing to import; `baton show`, `usage` and `compact` "
        "read it as it is\n"
    )
    assert len(list((data_dir / "sessions").iterdir())) == 1


def test_a_link_to_a_baton_transcript_is_read_as_a_link_to_any_session_file(
    capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path
) -> None:
    """usage, show and payload followed a link to a Claude Code file but refused one to a
    Baton transcript: '... is a symbolic link; Baton reads only regular files and never
    follows a link', the data dir's rule for its own files, not for a file a user names."""
    assert run(capsys, "import", str(EXAMPLE_SESSION))[0] == 0
    (transcript,) = (data_dir / "sessions").glob("*.jsonl")
    link = tmp_path / "link.jsonl"
    link.symlink_to(transcript)
    before = transcript.read_bytes()
    for command in ("usage", "show", "payload"):
        code, out, err = run(capsys, command, str(link), "--json")
        assert code == 0, err
        json.loads(out)
    assert transcript.read_bytes() == before


def test_an_imported_session_keeps_the_files_times(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    code, out, _ = run(capsys, "import", str(EXAMPLE_SESSION))
    assert code == 0
    session_id = out.split(" as session ")[1].split()[0]
    records = [json.loads(line) for line in EXAMPLE_SESSION.read_text().splitlines()]
    first = next(r for r in records if "timestamp" in r)
    store = SessionStore(data_dir, lambda m: 0)
    try:
        session = store.get(session_id)
        assert session.created_at == first["timestamp"]
        assert session.updated_at >= session.created_at
    finally:
        store.close()


# ---- usage -----------------------------------------------------------------------------------


def test_usage_of_a_directory_says_it_is_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for command in ("usage", "show", "import", "compact"):
        code, out, err = run(capsys, command, str(tmp_path))
        assert code == 2 and out == ""
        assert err == f"baton: {tmp_path} is a directory, not a session file\n"


def test_an_unknown_model_warns_and_names_the_window_it_assumed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "usage", "--model", "gpt-nonesuch", "--json")
    assert code == 0
    assert err == (
        "baton: warning: unknown model 'gpt-nonesuch': assuming a 200,000-token window\n"
    )
    assert json.loads(out)["contextWindow"] == 200_000
    code, _, err = run(capsys, "usage", "--model", "claude-sonnet-4-5")
    assert code == 0 and err == ""


def test_a_workspace_that_is_no_folder_is_named_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A file given as --workspace was 'no such workspace folder', as if it did not exist."""
    for given, expected in (
        (EXAMPLE_SESSION, f"the workspace {EXAMPLE_SESSION} is a file, not a folder"),
        (tmp_path / "none", f"no such workspace folder: {tmp_path / 'none'}"),
    ):
        code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), "--workspace", str(given))
        assert code == 2 and out == "" and err == f"baton: {expected}\n"


@pytest.mark.parametrize(
    ("model", "why"),
    [
        ("", "a model is named, not empty"),
        ("claude-x\nhi", "one line without control"),
        ("claude-" + "x" * 300, "a model name is at most 200 characters"),
    ],
)
def test_a_model_name_no_model_has_is_refused(
    capsys: pytest.CaptureFixture[str], model: str, why: str
) -> None:
    """An empty one was ignored without a word, one of two lines counted with a warning
    that it is unknown; the settings refuse both (model_name_problem)."""
    code, out, err = run(capsys, "usage", "--model", model, "--json")
    assert code == 2 and out == ""
    assert err.startswith("baton: --model: ") and why in err and err.count("\n") == 1


def test_a_baton_transcript_s_unreadable_records_are_told(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    data_dir: Path,
    tmp_path: Path,
) -> None:
    """A message record that is JSON but no message (its content a number) is skipped:
    `baton usage` and `show` said nothing of it, and reported a session short of it."""
    code, _, err = run(capsys, "import", str(EXAMPLE_SESSION))
    assert code == 0, err
    (transcript,) = (data_dir / "sessions").glob("*.jsonl")
    lines = transcript.read_text(encoding="utf-8").splitlines()
    damaged = []
    for line in lines:
        event = json.loads(line)
        if event.get("type") == "message" and len(damaged) < 3:
            event["message"]["content"] = 5
            damaged.append(event["message"]["id"])
        lines[lines.index(line)] = json.dumps(event)
    copy = tmp_path / "damaged.jsonl"
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for command in ("usage", "show"):
        caplog.clear()
        code, _, err = run(capsys, command, str(copy))
        assert code == 0, err
        told = [r.getMessage() for r in caplog.records if "unreadable message" in r.getMessage()]
        assert len(told) == 3 and all(line.startswith("damaged.jsonl: ") for line in told)
        assert "content" in told[0] and len(told[0]) < 200, told[0]


def test_a_file_whose_name_is_not_utf8_is_read_imported_and_saved(
    capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path
) -> None:
    """A name byte that is no UTF-8 is a lone surrogate in Python's str: the importer wrote
    it into importedFrom, and no transcript line can hold one."""
    odd = tmp_path / os.fsdecode(b"caf\xe9.jsonl")  # a Latin-1 name
    odd.write_bytes(EXAMPLE_SESSION.read_bytes())
    for argv in (["usage"], ["show"], ["compact", "--save"], ["import"]):
        code, _, err = run(capsys, *argv, str(odd))
        assert code == 0, err
    code, out, err = run(capsys, "import", str(odd))
    assert code == 0 and out.startswith("Already imported"), err
    for transcript in (data_dir / "sessions").glob("*.jsonl"):
        assert "caf\\\\xe9.jsonl" in transcript.read_text(encoding="utf-8").splitlines()[0]
    (imported,) = [
        p
        for p in (data_dir / "sessions").glob("*.jsonl")
        if "compacted" not in p.read_text(encoding="utf-8").splitlines()[0]
    ]
    baton_odd = tmp_path / os.fsdecode(b"na\xefve.jsonl")  # a Baton transcript so named
    baton_odd.write_bytes(imported.read_bytes())
    code, _, err = run(capsys, "compact", str(baton_odd))  # its summary names the file
    assert code == 0, err
    done = subprocess.run(  # a UTF-8 locale's output refuses the surrogate: no traceback
        [sys.executable, "-m", "baton", "usage", str(odd)],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert b"caf\\udce9.jsonl (Claude Code session file)" in done.stdout


# ---- output into a closed pipe ---------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["usage"],
        ["usage", "--json"],
        ["show"],
        ["messages", "--json"],
        ["compact", str(EXAMPLE_SESSION)],
        ["import", str(EXAMPLE_SESSION)],
        ["demo"],
        ["--help"],
        ["compact", "--help"],
    ],
)
def test_output_into_a_pipe_nobody_reads_ends_quietly(argv: list[str], tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` after it has read what it wanted
    try:
        done = subprocess.run(
            [sys.executable, "-m", "baton", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert "Broken pipe" not in done.stderr and "Exception ignored" not in done.stderr


@pytest.mark.parametrize("argv", [["show"], ["usage", "--json"], ["--version"]])
def test_a_closed_output_is_one_line_on_stderr_and_exit_code_2(
    argv: list[str], tmp_path: Path
) -> None:
    """`baton show >&-`: Python starts with no sys.stdout at all; nothing can be written."""
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" -m baton "$@" >&-', sys.executable, *argv],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env={**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("baton: ") and done.stderr.count("\n") == 1, done.stderr
    assert "output" in done.stderr


def test_a_demo_whose_api_cannot_be_reached_stops_with_one_line(tmp_path: Path) -> None:
    """A key set, the API unreachable: the compaction's request fails in the server."""
    env = {**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")}
    env.update(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    done = subprocess.run(
        [sys.executable, "-m", "baton", "demo"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("baton: the demo stopped: ") and done.stderr.count("\n") == 1


# ---- the README ------------------------------------------------------------------------------


def test_the_readme_lists_every_flag_of_every_subcommand() -> None:
    import argparse

    from baton.cli.main import build_parser

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Command line", 1)[1].split("\n## ", 1)[0]
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, sub in commands.choices.items():
        if f"baton {name}" not in section:
            missing.append(name)
        for action in sub._actions:
            missing.extend(
                f"{name} {flag}"
                for flag in action.option_strings
                if flag not in ("-h", "--help") and f"{flag}" not in section
            )
    assert missing == []


# ---- bad input: one line, exit 2 ------------------------------------------------------------


@pytest.mark.parametrize(
    ("tools", "needle"),
    [
        ("notjson", "--tools is not JSON"),
        ('{"a": 1}', "a JSON list of tool definitions"),
        ('"x"', "a JSON list of tool definitions"),
        ("null", "a JSON list of tool definitions"),
        ("[1]", "a JSON list of tool definitions"),
        ("[" * 100_000, "--tools is not JSON"),
        # a lone surrogate, by a JSON escape or a byte of the argument that is not UTF-8:
        # it ended in a UnicodeEncodeError traceback as the request was fingerprinted
        ('[{"name": "\\ud800"}]', "cannot be written as UTF-8 (a lone surrogate) at [0].name"),
        ('[{"name": "caf\udce9"}]', "cannot be written as UTF-8 (a lone surrogate) at [0].name"),
    ],
)
def test_payload_tools_must_be_a_json_list_of_definitions(
    capsys: pytest.CaptureFixture[str], tools: str, needle: str
) -> None:
    code, out, err = run(capsys, "payload", str(EXAMPLE_SESSION), "--tools", tools)
    assert code == 2 and out == ""
    assert err.startswith("baton: ") and needle in err and err.count("\n") == 1


@pytest.mark.parametrize("command", ["usage", "show", "payload", "compact"])
def test_a_first_line_nested_past_the_parser_is_no_session_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"a":' * 50_000 + "1" + "}" * 50_000 + "\n")
    code, _, err = run(capsys, command, str(deep))
    assert code == 2 and "Traceback" not in err
    assert "is not a Claude Code session file" in err and err.count("\n") == 1


def test_an_empty_id_and_a_range_the_wrong_way_round_are_clear_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ids = [str(r["shortId"]) for r in shown(capsys, str(EXAMPLE_SESSION))]
    wrong_way = ["--range", ids[8], ids[3]]
    for argv, needle in ((["--up-to", ""], "an empty message id"),
                         (["--from", ""], "an empty message id"),
                         (wrong_way, "--range: END_ID comes before ID")):  # fmt: skip
        code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), *argv)
        assert code == 2 and out == "" and needle in err, argv


def test_what_is_not_a_regular_file_is_named_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "usage", "/dev/null")
    assert code == 2 and "/dev/null is not a regular file" in err


def test_a_compacted_copy_names_where_the_full_history_is(
    capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path
) -> None:
    """Not the scratch copy deleted when the command ends: the file given, or the saved
    session's transcript; so the same file compacts to the same figures every time."""
    figures = set()
    for _ in range(3):
        code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), "--json")
        assert code == 0, err
        figures.add(json.loads(out)["postTokens"])
    assert len(figures) == 1  # a random scratch path counted in the summary moved it

    code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), "--save", "--json")
    assert code == 0, err
    saved = data_dir / "sessions" / f"{json.loads(out)['savedSessionId']}.jsonl"
    boundary = json.loads(saved.read_text().splitlines()[-1])["boundary"]
    [summary] = [m for m in boundary["newMessages"] if m["kind"] == "summary"]
    text = " ".join(summary["content"][0]["text"].split())
    assert f"transcript file {saved} " in text and "baton-compact-" not in text


def test_compact_of_a_baton_transcript_names_the_file_given(
    capsys: pytest.CaptureFixture[str], data_dir: Path, tmp_path: Path
) -> None:
    code, out, err = run(capsys, "compact", str(EXAMPLE_SESSION), "--save", "--json")
    saved = data_dir / "sessions" / f"{json.loads(out)['savedSessionId']}.jsonl"
    lines = saved.read_text().splitlines()
    damaged = tmp_path / "g.jsonl"
    damaged.write_text("\n".join([*lines[:5], "garbage", *lines[5:]]) + "\n")
    warned = subprocess.run(
        [sys.executable, "-m", "baton", "compact", str(damaged)],
        capture_output=True,
        text=True,
        timeout=120,
    ).stderr
    assert "baton: g.jsonl: skipped unreadable line 6" in warned and "copy.jsonl" not in warned
    headless = tmp_path / "h.jsonl"
    headless.write_text('{"type":"session","format":1}\n')
    code, out, err = run(capsys, "compact", str(headless))
    assert code == 2 and "another Baton process" not in err and "no valid header" in err


def test_the_table_stays_aligned_past_six_digits_of_tokens() -> None:
    from baton.cli.message_table import table

    rows = [
        {"index": n, "shortId": f"id{n}", "role": "user", "kind": "message", "tokens": tokens,
         "preview": "words", "pinned": False}
        for n, tokens in enumerate((625_004, 5, 12_345_678))
    ]  # fmt: skip
    lines = table(rows)
    assert (
        len({line.index("first words" if n == 0 else "words") for n, line in enumerate(lines)}) == 1
    )
