"""What the command line makes of input a user gets slightly wrong, and of a terminal it
did not expect: each is told in the words the user wrote, or drawn to fit."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from baton.cli.compact_report import ProgressDisplay
from baton.cli.main import EXAMPLE_SESSION, main


@pytest.mark.parametrize("prompt", ["", "  \n"])
def test_an_empty_prompt_is_told_as_the_option_given(
    capsys: pytest.CaptureFixture[str], prompt: str
) -> None:
    """It said "content must not be empty (omit it to continue the conversation)": the
    server's words for a field no user of the command line wrote."""
    assert main(["payload", str(EXAMPLE_SESSION), "--prompt", prompt]) == 2
    err = capsys.readouterr().err
    assert err.startswith("baton: --prompt is empty") and "content" not in err
    assert "leave --prompt out" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("title", "told"),
    [
        ("", "--title is empty: give the new session's title, or leave --title out"),
        ("a\nb", "--title: title must be one line without control characters"),
        ("x" * 201, "--title: title must be at most 200 characters"),
    ],
)
def test_a_title_no_session_can_take_is_told_as_the_option_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, title: str, told: str
) -> None:
    """An empty --title was passed over unsaid, the session taking the file's title; a bad
    one was told in the words of a rename ("title must be ..."), naming no option."""
    data_dir = tmp_path / "data"
    argv = ["import", str(EXAMPLE_SESSION), "--title", title, "--data-dir", str(data_dir)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"baton: {told}") and err.count("\n") == 1
    assert not data_dir.exists()


@pytest.mark.parametrize("command", ["usage", "show", "payload", "import", "compact"])
def test_a_link_to_no_file_is_told_as_a_link(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """A link whose target was moved, or a loop of links, was told "no such file: NAME",
    though `ls` lists NAME right there."""
    (tmp_path / "moved").symlink_to(tmp_path / "gone.jsonl")
    (tmp_path / "one").symlink_to(tmp_path / "other")
    (tmp_path / "other").symlink_to(tmp_path / "one")
    for link in ("moved", "one"):
        name = str(tmp_path / link)
        assert main([command, name]) == 2  # told before any data dir is looked at
        assert capsys.readouterr().err == (
            f"baton: {name} is a link that leads to no file (its target is missing, or it is "
            "a loop of links): name the session file itself\n"
        )


def usage_with(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, values: dict[str, object]
) -> tuple[str, str]:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(values), encoding="utf-8")
    assert main(["usage", str(EXAMPLE_SESSION), "--settings", str(settings)]) == 0
    return capsys.readouterr()


def test_a_key_with_the_editors_prefix_warns_naming_the_key_it_means(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A settings file copied from the editor's settings.json ("baton.contextWindow") was
    read as no settings at all, with not a word: the report named the file, and counted
    against the default window."""
    out, err = usage_with(capsys, tmp_path, {"baton.contextWindow": 100_000, "model": "x"})
    assert "Context window  200,000" in out  # not taken: the key is not one
    assert err.splitlines()[0] == (
        "baton: warning: --settings: unknown key 'baton.contextWindow', ignored "
        "(a settings file names it without 'baton.': 'contextWindow')"
    )


def test_a_baton_section_and_an_unknown_key_warn(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, err = usage_with(capsys, tmp_path, {"baton": {"contextWindow": 1}, "windw": 5})
    assert err.splitlines() == [
        "baton: warning: --settings: unknown key 'baton', ignored (a settings file holds "
        "the keys of the editor's 'baton' section themselves, at its top level)",
        "baton: warning: --settings: unknown key 'windw', ignored",
    ]


def test_the_acp_agent_warns_of_them_too(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"baton.model": "claude-opus-4-1"}), encoding="utf-8")
    argv = ["acp", "--settings", str(settings), "--data-dir", str(tmp_path / "data")]
    agent = subprocess.run(  # its input ends at once: it stops
        [sys.executable, "-m", "baton", *argv], input=b"", capture_output=True, timeout=60
    )
    assert agent.returncode == 0, agent.stderr
    assert agent.stderr.decode().splitlines() == [
        "baton: --settings: unknown key 'baton.model', ignored (a settings file names it "
        "without 'baton.': 'model')"
    ]


def test_known_keys_warn_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out, err = usage_with(capsys, tmp_path, {"contextWindow": 100_000, "autoCompact": {}})
    assert err == "" and "Context window  100,000" in out


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_narrow_terminal_the_bar_fits_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawn 78 characters wide on a 20-column terminal, each redraw wrapped, and its "\\r"
    cleared only its last row: every step left rows of the bar behind."""
    monkeypatch.setenv("COLUMNS", "20")
    stream = Terminal()
    display = ProgressDisplay(stream)
    display("Summarizing: primary request and intent", 0.5)
    display("Committing", 1.0)
    display.close()
    frames = stream.getvalue().split("\r\x1b[K")
    assert frames[0] == "" and frames[-1] == ""
    assert all(0 < len(frame) < 20 for frame in frames[1:-1]), frames


CLEAR = "\x1b[2J\x1b]0;pwned\x07"  # clear the screen, retitle the terminal window


def with_escapes(tmp_path: Path) -> Path:
    """The bundled example with escape sequences in its first prompt."""
    records = [json.loads(line) for line in EXAMPLE_SESSION.read_text().splitlines()]
    first = next(r for r in records if r.get("type") == "user")
    first["message"]["content"] = f"{CLEAR} {first['message']['content']}"
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_files_escape_sequences_are_shown_not_sent_to_the_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`baton show` printed a message's first words as the file holds them: a shared
    transcript cleared the screen and retitled the window of whoever looked at it, as did
    the summary `compact` and `compact --preview` print, and a transcript's title and
    model."""
    path = with_escapes(tmp_path)
    data = str(tmp_path / "data")
    assert main(["import", str(path), "--data-dir", data]) == 0
    (transcript,) = (tmp_path / "data" / "sessions").glob("*.jsonl")
    header, rest = transcript.read_text(encoding="utf-8").split("\n", 1)
    titled = {**json.loads(header), "title": f"Bug {CLEAR}", "model": f"claude-x{CLEAR}"}
    transcript.write_text(json.dumps(titled) + "\n" + rest, encoding="utf-8")
    capsys.readouterr()
    for argv in (
        ["show", str(path)],
        ["show", str(transcript)],
        ["usage", str(transcript)],
        ["payload", str(transcript)],
        ["compact", str(path)],
        ["compact", transcript.stem, "--preview", "--data-dir", data],
    ):
        assert main(argv) == 0, argv
        out, err = capsys.readouterr()
        assert "\x1b" not in out + err and "\x07" not in out + err, argv
        assert "\\x1b[2J" in out, argv


def test_a_file_names_escape_sequences_are_shown_not_sent_to_the_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`baton import` and `baton compact` printed the file and the data dir they were
    given as named: a file name with an escape sequence (a download's, a shared folder's)
    cleared the screen and retitled the window as it was told, where `show` and `usage`
    show it."""
    folder = tmp_path / f"data{CLEAR}"
    path = tmp_path / f"session{CLEAR}.jsonl"
    path.write_bytes(EXAMPLE_SESSION.read_bytes())
    data = str(folder)
    for argv in (
        ["import", str(path), "--data-dir", data],
        ["import", str(path), "--data-dir", data],  # imported before: said so
        ["compact", str(path)],
        ["compact", str(path), "--save", "--data-dir", data],
    ):
        assert main(argv) == 0, argv
        out, err = capsys.readouterr()
        assert "\x1b" not in out + err and "\x07" not in out + err, argv
        assert "\\x1b[2J" in out, argv


@pytest.mark.parametrize("title", [None, "  "])
def test_an_untitled_transcript_is_said_to_be_untitled(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, title: str | None
) -> None:
    """A Baton transcript whose header holds no title (written by hand, or by a tool that
    left it out) was shown with a blank where the title goes: show and payload opened
    their first line with " (" and ": ", usage said "Session" and nothing."""
    path = tmp_path / "s_0123456789abcdef.jsonl"
    header = {"type": "session", "format": 1, "sessionId": path.stem, "title": title}
    path.write_text(json.dumps(header) + "\n")
    firsts = {}
    for command in ("show", "payload", "usage"):
        assert main([command, str(path)]) == 0
        firsts[command] = capsys.readouterr().out.splitlines()[0]
    assert firsts["show"].startswith(f"(untitled) ({path}, Baton transcript): 0 messages")
    assert firsts["payload"].startswith("(untitled): the next request sends 0 turns")
    assert firsts["usage"] == "Session         (untitled)"
    assert main(["show", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == (title or "")  # as the file has it


@pytest.mark.parametrize(("title", "saved"), [(None, "New conversation"), ("x" * 200, "x" * 188)])
def test_a_saved_compaction_takes_a_title_a_session_can_have(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, title: str | None, saved: str
) -> None:
    """`compact --save` titled the copy "<title> (compacted)" whatever the title was: an
    untitled transcript's copy was " (compacted)", blank first, and a 200-character title's
    212 characters long, titles no create or rename gives a session."""
    from baton.core.conversation.messages import MessageInput
    from baton.core.conversation.session_names import checked_title
    from baton.core.conversation.store import SessionStore

    store = SessionStore(tmp_path / "made", lambda m: 0)
    session = store.create("placeholder")
    for n in range(30):
        role = "user" if n % 2 == 0 else "assistant"
        session.append([MessageInput(role=role, content=f"message {n} " + "word " * 60)])
    path, pivot = store.path_for(session.session_id), session.view_messages()[20].id
    store.close()
    records = path.read_text().splitlines()
    header = json.loads(records[0])
    header["title"] = title
    path.write_text("\n".join([json.dumps(header), *records[1:]]) + "\n")
    data = tmp_path / "data"
    argv = ["compact", str(path), "--up-to", pivot, "--save", "--data-dir", str(data)]
    assert main(argv) == 0, capsys.readouterr().err
    [copy] = (data / "sessions").glob("*.jsonl")
    told = json.loads(copy.read_text().split("\n", 1)[0])["title"]
    assert told == f"{saved} (compacted)" == checked_title(told)


@pytest.mark.parametrize("instructions", ["", " \n"])
def test_empty_instructions_are_told_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, instructions: str
) -> None:
    """`--instructions "$FOCUS"` with the variable unset compacted and saved the copy with
    no instructions and not a word, as if none had been meant (--prompt and --title are
    refused so)."""
    data = tmp_path / "data"
    argv = ["compact", str(EXAMPLE_SESSION), "--instructions", instructions, "--save"]
    assert main([*argv, "--data-dir", str(data)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("baton: --instructions is empty: give the instructions")
    assert err.count("\n") == 1 and not data.exists()


def test_an_index_of_show_given_as_an_id_is_told_not_taken_for_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`baton show` numbers its rows; `--up-to 44` (row #44) was taken as the start of the
    only id beginning with "44", row #7's, and the dry run (or the compaction) summarized
    up to row 7 with not a word. A number that is a row's index is now refused, naming
    the row's id and, when there is one, the id it also starts."""
    assert main(["show", str(EXAMPLE_SESSION), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["messages"]
    starts = [r for r in found if r["id"].startswith("44")]
    assert len(starts) == 1 and starts[0]["index"] != 44  # the example's ids are so
    argv = ["compact", str(EXAMPLE_SESSION), "--dry-run", "--up-to"]
    assert main([*argv, "44"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    row, other = found[44]["shortId"], starts[0]["shortId"]
    assert f"#44 of `baton show` is message {row}" in err
    assert f"'44' also starts message {other} (#{starts[0]['index']})" in err
    assert main([*argv, "12"]) == 2  # no id starts so: the row's id is named
    err = capsys.readouterr().err
    assert "no message id in the view starts with '12'" in err
    assert f"#12 of `baton show` is message {found[12]['shortId']}" in err
    assert main([*argv, starts[0]["shortId"]]) == 0  # the id as shown is taken
