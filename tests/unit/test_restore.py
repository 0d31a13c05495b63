"""Restoring editor files and the project instructions after a compaction."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from editor_clock import Clock
from test_compaction_drafts import conversation

from baton.core.compaction.result import CompactRequest
from baton.core.compaction.retention.facts import approx_tokens, attachment_path
from baton.core.compaction.working_set import file_text
from baton.core.compaction.working_set.restore import restore_files
from baton.core.conversation.messages import (
    Attachment,
    LineRange,
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_message,
)
from baton.core.settings import RestoreSettings
from baton.core.tools.read_file import numbered
from baton.core.usage.estimator import Estimator
from baton.core.workspace.editor_files import EditorFiles, path_to_uri
from baton_testkit.services import service_with_open_file


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def focus_all(*paths: Path) -> EditorFiles:
    """Touch `paths` in order (the last one is the most recent)."""
    files = EditorFiles(clock=Clock())
    for path in paths:
        files.focused(path_to_uri(path))
    return files


def run(
    files: EditorFiles,
    ws: Path | None,
    *,
    kept: list[Message] | None = None,
    count: Any = approx_tokens,
    **budget: Any,
) -> list[tuple[Message, Any]]:
    return restore_files(
        files,
        kept=kept or [],
        settings=RestoreSettings(**budget),
        workspace_folders=[ws] if ws is not None else [],
        count_text=count,
    ).files


def restored_paths(result: list[tuple[Message, Any]]) -> list[str]:
    return [str(attachment_path(message)) for message, _ in result]


def test_attachment_names_the_file_and_fences_its_content(ws: Path) -> None:
    path = write(ws / "src" / "app.py", "print('hello')\n")
    [(message, restored)] = run(focus_all(path), ws)
    text = message.text()
    assert message.role == "user" and message.kind == "attachment"
    assert text.splitlines()[0] == f"Restored file: {path}"
    assert message.attachment == Attachment(path=str(path), label="Restored file")
    assert "```\nprint('hello')\n\n```" in text
    assert restored.uri == path_to_uri(path)
    assert restored.tokens == approx_tokens(text) == message.tokens
    assert not restored.truncated


def test_content_with_backtick_fences_gets_a_longer_fence(ws: Path) -> None:
    path = write(ws / "README.md", "```python\nx = 1\n```\n")
    [(message, _)] = run(focus_all(path), ws)
    assert "````\n```python" in message.text()


def test_most_recent_first_and_at_most_max_files(ws: Path) -> None:
    paths = [write(ws / f"f{i}.py", f"x{i} = {i}\n") for i in range(7)]
    result = run(focus_all(*paths), ws, max_files=5)
    assert restored_paths(result) == [str(p) for p in reversed(paths[2:])]


def test_each_file_is_cut_to_its_budget_and_marked(ws: Path, estimator: Estimator) -> None:
    path = write(ws / "big.py", "".join(f"value_{i} = compute({i})\n" for i in range(800)))
    [(message, restored)] = run(
        focus_all(path), ws, count=estimator.count_text, max_tokens_per_file=1_000
    )
    assert restored.truncated
    assert restored.tokens <= 1_000
    assert "(cut at " in message.text() and " tokens)" in message.text()
    assert "value_0 = compute(0)" in message.text()
    assert "value_799" not in message.text()


def test_a_file_ten_times_over_its_budget_is_only_referenced(ws: Path) -> None:
    path = write(ws / "data.csv", "a,b,c\n" * 8_000)  # 48 kB, about 12,000 tokens
    [(message, restored)] = run(focus_all(path), ws, max_tokens_per_file=1_000)
    assert restored.truncated
    assert "Reference only: the file is 48.0 kB" in message.text()
    [(message, _)] = run(focus_all(path), ws, max_tokens_per_file=2_000)
    assert "(cut at " in message.text()


def test_total_budget_is_shared_across_files(ws: Path, estimator: Estimator) -> None:
    paths = [write(ws / f"m{i}.py", f"item_{i} = 1\n" * 600) for i in range(4)]
    result = run(
        focus_all(*paths),
        ws,
        count=estimator.count_text,
        max_tokens_per_file=1_500,
        total_tokens=2_500,
    )
    assert sum(r.tokens for _, r in result) <= 2_500
    assert restored_paths(result)[0] == str(paths[-1])
    assert len(result) == 2  # the second is cut to what is left


def test_the_total_budget_holds_the_messages_as_the_meter_counts_them(
    ws: Path, estimator: Estimator
) -> None:
    # each restored message is counted with its framing (MESSAGE_OVERHEAD): the files alone
    # fitted the budget, their messages took 4 tokens each past it (1,006 of 1,000)
    write(ws / "CLAUDE.md", "Use tabs.\n")
    paths = [write(ws / f"m{i}.py", f"value_{i} = 1\n" * 400) for i in range(4)]
    result = run(
        focus_all(*paths),
        ws,
        count=estimator.count_text,
        max_tokens_per_file=500,
        total_tokens=1_000,
    )
    assert len(result) == 3  # the instructions and two files, the second cut
    assert sum(estimator.count_message(message) for message, _ in result) <= 1_000


def test_excluded_files_are_never_restored(ws: Path) -> None:
    secrets = [
        write(ws / ".env", "TOKEN=1"),
        write(ws / ".env.local", "TOKEN=2"),
        write(ws / "deploy" / "id_rsa", "KEY"),
        write(ws / "certs" / "x.pem", "PEM"),
        write(ws / "secrets" / "db.txt", "pw"),
        write(ws / "config" / "secrets" / "api.json", "{}"),
    ]
    normal = write(ws / "main.py", "pass\n")
    result = run(focus_all(normal, *secrets), ws, max_files=10)
    assert restored_paths(result) == [str(normal)]


def test_custom_exclude_globs_match_relative_paths_and_names(ws: Path) -> None:
    generated = write(ws / "build" / "out.js", "x")
    lock = write(ws / "pkg" / "yarn.lock", "x")
    kept = write(ws / "src" / "in.js", "x")
    result = run(focus_all(generated, lock, kept), ws, exclude=["build/**", "*.lock"])
    assert restored_paths(result) == [str(kept)]


def test_files_outside_the_workspace_are_skipped(tmp_path: Path, ws: Path) -> None:
    outside = write(tmp_path / "elsewhere" / "notes.py", "secret notes")
    link = ws / "linked.py"
    link.symlink_to(outside)
    inside = write(ws / "ok.py", "fine")
    result = run(focus_all(inside, outside, link), ws)
    assert restored_paths(result) == [str(inside)]


def test_without_workspace_folders_nothing_is_restored(ws: Path) -> None:
    path = write(ws / "a.py", "x")
    write(ws / "CLAUDE.md", "# rules")
    assert run(focus_all(path), None) == []


def test_binary_and_undecodable_files_are_skipped(ws: Path) -> None:
    binary = ws / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    latin = ws / "legacy.txt"
    latin.write_bytes("café".encode("latin-1"))
    text = write(ws / "ok.txt", "plain")
    assert restored_paths(run(focus_all(text, binary, latin), ws)) == [str(text)]


def test_deleted_and_unreadable_files_are_skipped(ws: Path) -> None:
    gone = write(ws / "gone.py", "x")
    folder = ws / "a_directory"
    folder.mkdir()
    text = write(ws / "ok.py", "x")
    files = focus_all(text, gone, folder)
    gone.unlink()
    assert restored_paths(run(files, ws)) == [str(text)]


def reads_spied(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes asked of each read of a file the restore opens, in order."""
    read_sizes: list[int] = []
    real_open = file_text.open_read

    def spying_open(path: Path) -> Any:
        handle = real_open(path)
        real_read = handle.read

        def read(size: int = -1) -> Any:
            read_sizes.append(size)
            return real_read(size)

        handle.read = read  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(file_text, "open_read", spying_open)
    return read_sizes


def test_a_huge_file_is_only_referenced_without_being_read(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = ws / "dump.sql"
    with huge.open("wb") as handle:
        handle.write(b"INSERT INTO t VALUES (1);\n" * 200_000)  # about 5 MB
    read_sizes = reads_spied(monkeypatch)
    [(message, restored)] = run(focus_all(huge), ws)
    assert restored.truncated
    assert "Reference only: the file is 5.2 MB" in message.text()
    assert "INSERT INTO" not in message.text()
    assert read_sizes and all(0 < size <= file_text.SNIFF_BYTES for size in read_sizes)


def test_a_large_file_is_read_only_as_far_as_its_budget_needs(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ws / "medium.log"
    path.write_text("line of log output\n" * 5_000, encoding="utf-8")  # 95 kB
    read_sizes = reads_spied(monkeypatch)
    [(_, restored)] = run(focus_all(path), ws, max_tokens_per_file=2_000)
    assert restored.truncated
    assert read_sizes and max(read_sizes) <= 2_000 * 8 + file_text.SNIFF_BYTES + 1


def test_open_documents_restore_their_unsaved_text(ws: Path) -> None:
    path = write(ws / "draft.py", "on disk\n")
    files = EditorFiles(clock=Clock())
    files.opened(path_to_uri(path), "unsaved editor text\n", 3)
    [(message, _)] = run(files, ws)
    assert "unsaved editor text" in message.text()
    assert "on disk" not in message.text()
    files.closed(path_to_uri(path))
    [(message, _)] = run(files, ws)
    assert "on disk" in message.text()


def test_files_already_visible_in_kept_messages_are_skipped(ws: Path) -> None:
    read_abs = write(ws / "read_abs.py", "a")
    read_rel = write(ws / "src" / "read_rel.py", "b")
    carried = write(ws / "carried.py", "c")
    attached = write(ws / "attached.py", "d")
    fresh = write(ws / "fresh.py", "e")
    kept = [
        Message(  # an ACP prompt: the user's words, then the file it attached
            role="user",
            content=[
                TextBlock(text="have a look at this"),
                TextBlock(text=f"Attached file: {carried}\n```\nc\n```"),
            ],
        ),
        Message(
            role="assistant",
            content=[
                ToolUseBlock(id="t1", name="Read", input={"file_path": str(read_abs)}),
                ToolUseBlock(id="t2", name="Read", input={"file_path": "src/read_rel.py"}),
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(tool_use_id="t1", content="a"),
                ToolResultBlock(tool_use_id="t2", content="b"),
            ],
        ),
        text_message("user", f"Restored file: {attached}\nd", kind="attachment"),
    ]
    files = focus_all(fresh, read_abs, read_rel, carried, attached)
    assert restored_paths(run(files, ws, kept=kept)) == [str(fresh)]


@pytest.mark.parametrize("change", ["unchanged", "saved", "edited unsaved", "grew huge"])
def test_an_earlier_restores_copy_kept_shows_the_file_only_while_it_is_the_same(
    ws: Path, change: str
) -> None:
    # a second compaction soon after the first keeps its restored copy: the file changed
    # since, and the model was left with the stale copy (it counted as already visible)
    path = write(ws / "app.py", "VERSION = 1\n" + "x = 1\n" * 300)
    files = focus_all(path)
    [(copy, _)] = run(files, ws, max_tokens_per_file=400)
    assert "(cut at" in copy.text()
    if change == "saved":
        write(path, "VERSION = 2\n")
    elif change == "edited unsaved":
        files.opened(path_to_uri(path), "VERSION = 3\n", 2)
    elif change == "grew huge":
        write(path, "y = 2\n" * 200_000)
    kept = [copy, text_message("user", "Carry on."), text_message("assistant", "On it.")]

    again = run(files, ws, kept=kept, max_tokens_per_file=300)  # cut shorter this time

    if change == "unchanged":
        assert again == []  # the kept copy shows it (cut at another length)
    else:
        [(fresh, _)] = again
        expected = {"saved": "VERSION = 2", "edited unsaved": "VERSION = 3"}.get(change)
        assert (expected or "Reference only") in fresh.text()
        assert run(files, ws, kept=[fresh], max_tokens_per_file=300) == []  # now the same


def test_a_kept_call_that_failed_on_a_file_does_not_show_it(ws: Path) -> None:
    # the model's Read failed ("File does not exist"), the user then wrote the file: the
    # failed call counted as showing it, so the compaction did not restore it
    path = write(ws / "new.py", "def created_later(): ...\n")
    other = write(ws / "read.py", "x = 1\n")
    kept = [
        Message(
            role="assistant",
            content=[
                ToolUseBlock(id="t1", name="Read", input={"file_path": str(path)}),
                ToolUseBlock(id="t2", name="Read", input={"file_path": str(other)}),
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(tool_use_id="t1", content="File does not exist.", is_error=True),
                ToolResultBlock(tool_use_id="t2", content="x = 1"),
            ],
        ),
    ]
    assert restored_paths(run(focus_all(other, path), ws, kept=kept)) == [str(path)]


def test_a_kept_call_still_waiting_for_its_result_does_not_show_its_file(ws: Path) -> None:
    # an edit asked about when the compaction ran: it had shown nothing, and denied it
    # never would, so the file its summarized read had shown must come back
    path = write(ws / "utils.py", "def parse_date(s): ...\n")
    change = {"file_path": str(path), "old_string": "date", "new_string": "day"}
    kept = [Message(role="assistant", content=[ToolUseBlock(id="t1", name="Edit", input=change)])]
    assert restored_paths(run(focus_all(path), ws, kept=kept)) == [str(path)]
    answered = [
        *kept,
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="ok")]),
    ]
    assert run(focus_all(path), ws, kept=answered) == []  # once applied, it shows the file


def test_a_path_written_out_in_a_kept_message_does_not_show_the_file(ws: Path) -> None:
    """A message that names a file by its full path holds none of its text: the file still
    comes back; one whose text a prompt carried under its path (as an ACP prompt's attached
    file is written) is shown, one named too large to carry is not."""
    said = write(ws / "said.py", "x = 1")
    carried = write(ws / "carried.py", "y = 2")
    large = write(ws / "large.py", "z = 3")
    kept = [
        text_message("user", f"Look at {said} and {large}."),
        text_message("assistant", f"I'll edit {said}."),
        text_message("user", f"Attached file: {carried}\n```\ny = 2\n```"),
        text_message("user", f"Attached file: {large} (not included: 9,000,000 bytes)"),
    ]
    result = restored_paths(run(focus_all(said, carried, large), ws, kept=kept))
    assert result == [str(large), str(said)]
    pasted = [text_message("assistant", f"Attached file: {said}\n```\nx = 1\n```")]
    assert restored_paths(run(focus_all(said), ws, kept=pasted)) == [str(said)]  # not a prompt


def test_a_path_named_only_by_a_kept_summary_is_still_restored(ws: Path) -> None:
    path = write(ws / "named.py", "body")
    kept = [text_message("user", f"## 3. Files\n- {path} (edited)", kind="summary")]
    assert restored_paths(run(focus_all(path), ws, kept=kept)) == [str(path)]


def test_the_instructions_file_is_restored_outside_the_file_count(ws: Path) -> None:
    claude = write(ws / "CLAUDE.md", "# Project rules\nUse tabs.\n")
    first = write(ws / "one.py", "1")
    second = write(ws / "two.py", "2")
    result = run(focus_all(first, second, claude), ws, max_files=1)
    texts = [message.text() for message, _ in result]
    assert texts[0].startswith(f"Project instructions: {claude}")
    labels = [(m.attachment.path, m.attachment.label) for m, _ in result if m.attachment]
    assert labels == [(str(claude), "Project instructions"), (str(second), "Restored file")]
    assert "Use tabs." in texts[0]
    assert restored_paths(result) == [str(claude), str(second)]  # CLAUDE.md not twice


def test_an_instructions_file_the_system_prompt_carries_is_not_restored_again(ws: Path) -> None:
    """Baton's default system prompt holds the project's instructions: restoring them too
    sent them twice with every request after a compaction. A session with a system prompt
    of its own gets them back."""
    from baton.core.turn.system_prompt import default_system_prompt

    claude = write(ws / "CLAUDE.md", "# Project rules\nUse tabs.\n")
    other = write(ws / "one.py", "1")
    carried = default_system_prompt("Code", [ws])
    assert "Use tabs." in carried
    result = restore_files(
        focus_all(other),
        kept=[],
        settings=RestoreSettings(),
        workspace_folders=[ws],
        count_text=approx_tokens,
        system_prompt=carried,
    )
    assert restored_paths(result.files) == [str(other)]
    assert result.skipped == []
    own = restore_files(
        focus_all(other),
        kept=[],
        settings=RestoreSettings(),
        workspace_folders=[ws],
        count_text=approx_tokens,
        system_prompt="You review pull requests.",
    )
    assert restored_paths(own.files) == [str(claude), str(other)]


@pytest.mark.parametrize("edit", ["added a rule", "dropped a rule"])
def test_an_instructions_file_edited_since_the_system_prompt_was_made_comes_back(
    ws: Path, edit: str
) -> None:
    # the system prompt is made once, at create; a rule added to CLAUDE.md since was never
    # restored, because the system prompt named the file (with its old text)
    from baton.core.turn.system_prompt import default_system_prompt

    claude = write(ws / "CLAUDE.md", "# Project rules\nUse tabs.\nRun make lint.\n")
    carried = default_system_prompt("Code", [ws], extra="Be brief.")
    now = {
        "added a rule": "Use tabs.\nNever touch the migrations.\n",
        "dropped a rule": "Use tabs.",
    }
    write(claude, f"# Project rules\n{now[edit]}")
    result = restore_files(
        focus_all(),
        kept=[],
        settings=RestoreSettings(),
        workspace_folders=[ws],
        count_text=approx_tokens,
        system_prompt=carried,
    )
    [(message, _)] = result.files
    assert message.text().startswith(f"Project instructions: {claude}")
    assert now[edit].strip() in message.text() and "make lint" not in message.text()


def test_baton_instructions_file_is_restored_and_counts_towards_the_total(ws: Path) -> None:
    write(ws / ".baton" / "instructions.md", "word " * 400)
    other = write(ws / "a.py", "x = 1\n" * 200)
    result = run(focus_all(other), ws, total_tokens=450, max_tokens_per_file=5_000)
    assert attachment_path(result[0][0]) == str(ws / ".baton" / "instructions.md")
    assert sum(r.tokens for _, r in result) <= 450


@pytest.mark.parametrize("budget", [{"max_files": 0}, {"total_tokens": 0}])
def test_zero_budgets_restore_no_editor_files(ws: Path, budget: dict[str, int]) -> None:
    path = write(ws / "a.py", "x")
    assert run(focus_all(path), ws, **budget) == []


def test_symlinked_workspace_folder_still_accepts_its_files(tmp_path: Path, ws: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(ws, alias)
    path = write(ws / "a.py", "x")
    assert restored_paths(run(focus_all(alias / "a.py"), alias)) == [str(alias / "a.py")]
    assert path.exists()


def outcome(files: EditorFiles, ws: Path, **budget: Any) -> Any:
    return restore_files(
        files,
        kept=[],
        settings=RestoreSettings(**budget),
        workspace_folders=[ws],
        count_text=approx_tokens,
    )


@pytest.mark.parametrize(
    "name", ["a%00b.py", "c\ud800d.py", "c\udc80d.py"], ids=["nul", "surrogate", "not-utf8"]
)
def test_a_uri_that_names_no_usable_path_is_skipped_reported_and_closed(
    ws: Path, name: str
) -> None:
    good = write(ws / "ok.py", "fine = 1\n")
    files = EditorFiles(clock=Clock())
    bad_uri = ws.as_uri() + "/" + name
    files.opened(bad_uri, "x = 1\n")
    files.focused(path_to_uri(good))

    result = outcome(files, ws, max_files=10)

    assert restored_paths(result.files) == [str(good)]
    written = bad_uri.encode("utf-8", "backslashreplace").decode()  # the note must be writable
    assert [s.uri for s in result.skipped] == [written]
    assert "no usable path" in result.skipped[0].reason
    files.closed(bad_uri)
    assert files.get(bad_uri) is None
    assert outcome(files, ws).skipped == []


@pytest.mark.parametrize(
    "relative",
    [
        ".netrc",
        ".aws/credentials",
        ".git-credentials",
        ".npmrc",
        "certs/client.p12",
        "certs/client.PFX",
        "tls/server.pem",
        "tls/server.key",
        ".ssh/id_rsa",
        "deploy/id_ed25519.pub",
        "deploy/ID_RSA",
        ".ENV",
        ".env.production",
        "config/Secrets/db.yml",
    ],
)
def test_credential_files_are_excluded_by_default_whatever_their_case(
    ws: Path, relative: str
) -> None:
    secret = write(ws / relative, "harmless looking text\n")
    normal = write(ws / "main.py", "pass\n")
    result = outcome(focus_all(normal, secret), ws, max_files=10)
    assert restored_paths(result.files) == [str(normal)]
    assert [s.uri for s in result.skipped] == [path_to_uri(secret)]
    assert "restore.exclude" in result.skipped[0].reason


AWS = "AKIA" + "ABCDEFGHIJKLMNOP"
SECRET_TEXTS = {
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n",
    "openssh": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n",
    "pkcs8": "key = '''-----BEGIN PRIVATE KEY-----\nMIIE'''\n",
    "aws": f"aws_access_key_id = {AWS}\n",
    "github": "token = 'ghp_" + "a1B2" * 9 + "'\n",
    "github-pat": "GITHUB_TOKEN=github_pat_" + "A1b2_" * 12 + "\n",
    "slack": "SLACK = 'xoxb-" + "1234567890-abcdefghij" + "'\n",
    "anthropic": "client = Anthropic(api_key='sk-ant-api03-" + "x" * 40 + "')\n",
    "openai": "OPENAI_API_KEY = 'sk-proj-" + "Ab1" * 15 + "'\n",
}


@pytest.mark.parametrize("kind", list(SECRET_TEXTS))
def test_a_file_whose_text_holds_a_credential_is_left_out_with_a_note(ws: Path, kind: str) -> None:
    text = SECRET_TEXTS[kind]
    leaky = write(ws / "settings.py", text)
    normal = write(ws / "main.py", "pass\n")
    files = focus_all(normal, leaky)
    files.opened(path_to_uri(ws / "unsaved.py"), text)  # an open document's live text too

    result = outcome(files, ws, max_files=10)

    assert restored_paths(result.files) == [str(normal)]
    assert sorted(s.uri for s in result.skipped) == sorted(
        [path_to_uri(leaky), path_to_uri(ws / "unsaved.py")]
    )
    for skipped in result.skipped:
        assert "credential" in skipped.reason
        assert text.strip()[:20] not in skipped.reason  # the note never repeats the secret


def test_ordinary_code_mentioning_keys_is_still_restored(ws: Path) -> None:
    code = write(
        ws / "auth.py",
        "API_KEY = os.environ['ANTHROPIC_API_KEY']  # sk-ant-... from the environment\n"
        "task-name = 'desk-organizer'\nBEGIN = '-----BEGIN PUBLIC KEY-----'\n",
    )
    result = outcome(focus_all(code), ws)
    assert restored_paths(result.files) == [str(code)]
    assert result.skipped == []


def test_a_budget_past_any_file_reads_no_more_than_the_file(ws: Path) -> None:
    """The read asks for what the file can hold, not what the budget could use (10^15
    tokens' worth of bytes was a MemoryError, 10^20 an OverflowError)."""
    path = write(ws / "small.py", "x = 1\n")
    content = file_text.read_content(path, None, per_file=10**9, room=10**20)
    assert content is not None and content.text == "x = 1\n" and not content.partial


def test_a_file_restored_again_replaces_its_stale_copy_and_undo_puts_it_back(
    tmp_path: Path,
) -> None:
    # the second compaction restored app.py again after the first one's copy, changed
    # since, and kept that stale copy too: the file's text twice, the older one first
    service, source = service_with_open_file(tmp_path)
    sid = conversation(service, turns=12)
    asyncio.run(service.compaction.compact(sid, CompactRequest("all")))
    session = service.session(sid)
    [stale] = [m for m in session.view_messages() if "VERSION = 1" in m.text()]
    service.append(sid, [MessageInput(role="user", content="Bump the version.")])
    service.append(sid, [MessageInput(role="assistant", content="Bumped.")])
    write(source, "VERSION = 2\n")
    before = list(session.view)

    draft = asyncio.run(service.drafts.preview(sid, CompactRequest("all")))
    second = asyncio.run(service.drafts.apply(sid, draft.draft_id))

    view = session.view_messages()
    copies = [m for m in view if m.kind == "attachment" and str(source) in m.text()]
    assert len(copies) == 1 and "VERSION = 2" in copies[0].text()
    # in the stale copy's place: before the turns that came after it
    assert view.index(copies[0]) < [m.text() for m in view].index("Bump the version.")
    assert stale.id not in session.view and stale.id not in second.kept_message_ids
    assert [f.uri for f in second.restored_files] == [source.as_uri()]
    assert service.usage(sid).used_tokens == second.post_tokens
    service.compaction.uncompact(sid)
    assert session.view == before  # the stale copy is back where it was


@pytest.mark.parametrize("part", ["selection", "visible range", "cut"])
def test_a_kept_attachment_of_part_of_a_file_does_not_show_the_whole_file(
    ws: Path, part: str
) -> None:
    """A prompt's selection (or the editor's visible range, or a file cut to the attachment
    limit) counted as showing the file: a compaction that summarized the read of the whole
    file kept the two selected lines and restored nothing, leaving the model the lines
    and no copy of the rest."""
    path = write(ws / "app.py", "".join(f"line {n}\n" for n in range(1, 40)))
    kind = "selection" if part == "selection" else "file"
    label = "Selection" if part == "selection" else "Attached file"
    lines = None if part == "cut" else LineRange(start_line=2, end_line=3)
    body = f"{label}: {path}" + (" (lines 2-3)" if lines else "")
    body += "\n```python\nline 2\nline 3\n```" + ("\n[cut at 100,000 characters]" * (part == "cut"))
    attachment = Attachment(path=str(path), label=label, kind=kind, range=lines)
    kept = [
        text_message("user", body, "attachment", attachment=attachment),
        text_message("user", "What does this do?"),
    ]
    assert restored_paths(run(focus_all(path), ws, kept=kept)) == [str(path)]
    whole = Attachment(path=str(path), label="Attached file", kind="file")
    shown = [
        text_message(
            "user", f"Attached file: {path}\n```\n...\n```", "attachment", attachment=whole
        )
    ]
    assert run(focus_all(path), ws, kept=shown) == []  # the whole file attached shows it


def lines_of(count: int) -> str:
    return "".join(f"line {n}\n" for n in range(1, count + 1))


def read_tool(text: str, start: int | None, end: int | None, column: int = 1) -> str:
    """What Baton's read_file (and the text editor's view, read_file too) answers."""
    return numbered(text, start, end, "app.py", column).text


def claude_read(first: int, last: int) -> str:
    """What Claude Code's Read answers for lines first..last."""
    return "".join(f"{n:6}\u2192line {n}\n" for n in range(first, last + 1))


def kept_read(path: Path, name: str, given: dict[str, Any], answer: str) -> list[Message]:
    key = "file_path" if name == "Read" else "path"
    use = ToolUseBlock(id="t1", name=name, input={key: str(path), **given})
    return [
        Message(role="assistant", content=[use]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content=answer)]),
    ]


LONG = lines_of(199)
WIDE = "line 1\n" + "x" * 5_000 + "\n"  # Claude Code's Read shows 2,000 of its characters
VIEW = "str_replace_based_edit_tool"


@pytest.mark.parametrize(
    ("text", "name", "given", "answer"),
    [
        (LONG, "read_file", {"startLine": 20, "endLine": 39}, read_tool(LONG, 20, 39)),
        (LONG, "read_file", {"endLine": 20}, read_tool(LONG, None, 20)),
        (LONG, "read_file", {"startLine": 180}, read_tool(LONG, 180, None)),
        (LONG, "read_file", {"startColumn": 3}, read_tool(LONG, None, None, 3)),
        (lines_of(2_500), "read_file", {}, read_tool(lines_of(2_500), None, None)),  # cut
        ("x" * 3_000 + "\n", "read_file", {}, read_tool("x" * 3_000 + "\n", None, None)),
        (LONG, VIEW, {"command": "view", "view_range": [20, 39]}, read_tool(LONG, 20, 39)),
        (LONG, VIEW, {"command": "view", "view_range": [20, -1]}, read_tool(LONG, 20, None)),
        (LONG, "Read", {"offset": 20, "limit": 20}, claude_read(20, 39)),
        (LONG, "Read", {"limit": 20}, claude_read(1, 20)),
        (lines_of(2_500), "Read", {}, claude_read(1, 2_000)),  # its own limit, 2,000 lines
        (WIDE, "Read", {}, f"     1\u2192line 1\n     2\u2192{'x' * 2_000}\n"),  # cut line
    ],
)
def test_a_kept_read_of_some_of_a_files_lines_does_not_show_the_whole_file(
    ws: Path, text: str, name: str, given: dict[str, Any], answer: str
) -> None:
    """A read of 20 lines of a large file counted as showing it: a compaction that summarized
    the read of the whole file but kept the 20 lines restored nothing, and the model was
    left with the 20 lines and no copy of the rest (so too a read cut at its bound)."""
    path = write(ws / "app.py", text)
    kept = kept_read(path, name, given, answer)
    assert restored_paths(run(focus_all(path), ws, kept=kept)) == [str(path)]


@pytest.mark.parametrize(
    ("name", "given", "answer"),
    [
        ("read_file", {}, read_tool(LONG, None, None)),
        ("read_file", {"startLine": 1, "endLine": 500}, read_tool(LONG, 1, 500)),
        (VIEW, {"command": "view", "view_range": [1, -1]}, read_tool(LONG, 1, None)),
        ("Read", {}, claude_read(1, 199)),
        ("Read", {"offset": 1, "limit": 2000}, claude_read(1, 199)),
    ],
)
def test_a_kept_read_whose_range_held_the_whole_file_shows_it(
    ws: Path, name: str, given: dict[str, Any], answer: str
) -> None:
    path = write(ws / "app.py", LONG)
    assert run(focus_all(path), ws, kept=kept_read(path, name, given, answer)) == []


@pytest.mark.parametrize(
    ("name", "given"),
    [
        ("search_text", {"pattern": "line 2", "path": "app.py"}),
        ("Grep", {"pattern": "line 2", "path": "{path}"}),
        ("Glob", {"pattern": "{path}"}),
    ],
)
def test_a_kept_search_of_a_file_does_not_show_the_whole_file(
    ws: Path, name: str, given: dict[str, str]
) -> None:
    """A search limited to app.py counted as showing it: a compaction that summarized the
    read of the file but kept the search restored nothing, and the model was left with the
    lines that matched (or, for a glob, the file's name) and no copy of the rest."""
    path = write(ws / "app.py", LONG)
    given = {key: value.format(path=path) for key, value in given.items()}
    use = ToolUseBlock(id="t1", name=name, input=given)
    kept = [
        Message(role="assistant", content=[use]),
        Message(
            role="user", content=[ToolResultBlock(tool_use_id="t1", content="app.py:2: line 2")]
        ),
    ]
    assert restored_paths(run(focus_all(path), ws, kept=kept)) == [str(path)]


def inline_read(path: Path, given: dict[str, Any], answer: str, form: str) -> list[Message]:
    """A read Claude Code wrote as a prompt's text (an @-mention, a file it brought back after
    its compaction), in the forms its versions wrote: two texts, the result a JSON string
    (1.0), each in the reminder a request wraps it in, or one text, the result below."""
    called = "Called the Read tool with the following input: " + json.dumps(
        {"file_path": str(path), **given}
    )
    if form == "joined":
        return [text_message("user", f"{called}\nResult of calling the Read tool:\n{answer}")]
    result = f"Result of calling the Read tool: {json.dumps(answer)}"
    if form == "reminder":
        called, result = (f"<system-reminder>\n{t}\n</system-reminder>" for t in (called, result))
    return [text_message("user", called), text_message("user", result)]


@pytest.mark.parametrize("form", ["json", "reminder", "joined"])
def test_a_kept_inline_read_of_claude_codes_older_sessions_shows_the_file(
    ws: Path, form: str
) -> None:
    """An imported session of Claude Code 1.0 holds a file read for the user as a prompt's
    text, not as a tool call: a compaction that kept it restored the file all the same,
    and the model had the whole file twice."""
    path = write(ws / "app.py", LONG)
    kept = inline_read(path, {}, claude_read(1, 199), form)
    assert run(focus_all(path), ws, kept=kept) == []


@pytest.mark.parametrize("form", ["json", "joined"])
def test_a_kept_inline_read_of_some_of_a_files_lines_does_not_show_it(ws: Path, form: str) -> None:
    path = write(ws / "app.py", LONG)
    kept = inline_read(path, {"offset": 20, "limit": 20}, claude_read(20, 39), form)
    assert restored_paths(run(focus_all(path), ws, kept=kept)) == [str(path)]


def test_a_kept_inline_read_that_failed_does_not_show_the_file(ws: Path) -> None:
    path = write(ws / "app.py", LONG)
    called, _ = inline_read(path, {}, "", "json")
    kept = [called, text_message("user", f"Read tool failed to read {path}")]
    assert restored_paths(run(focus_all(path), ws, kept=kept)) == [str(path)]
