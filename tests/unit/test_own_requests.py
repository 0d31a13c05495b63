"""Whether every request of a session is Baton's own (`baton acp`'s service) is the
service's to say, not the process's: two services in one process, one made so, each
count an imported Claude Code session as its own requests send it. Where every request is
Baton's own, an imported reply's usage anchors nothing (it counted Claude Code's system
prompt and tools) and imported thinking is left out, as Baton's request leaves it; where
an editor's client may have sent it, both count as that client sent them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from baton.core.conversation.thinking_sent import has_thinking
from baton.core.service.service import BatonService
from baton.core.settings import Settings
from baton.core.usage.overhead import foreign, own_anchor
from baton_testkit.claude_code_gen import generate


def imported(tmp_path: Path) -> tuple[str, Path]:
    """An older Claude Code file (thinking in its replies) imported with `baton import`."""
    source = generate(12, era="old", summary_first=False, repairs=False, media=False)
    path = source.write(tmp_path / "claude-code.jsonl")
    data = tmp_path / "data"
    command = [sys.executable, "-m", "baton", "import", str(path), "--data-dir", str(data)]
    said = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return said.split(" as session ")[1].split()[0], data


async def test_two_services_in_one_process_keep_their_own_say_of_whose_requests(
    tmp_path: Path,
) -> None:
    sid, data = imported(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    own = BatonService(Settings.model_validate({"dataDir": str(data)}), own_requests=True)
    editor = BatonService(Settings.model_validate({"dataDir": str(copy)}))
    try:
        mine, theirs = own.session(sid), editor.session(sid)
        assert mine.own_requests and not theirs.own_requests
        last = mine.last_usage
        assert last is not None and mine.imported_from is not None
        assert foreign(mine, last.message_id) and own_anchor(mine) is None
        assert not foreign(theirs, last.message_id) and own_anchor(theirs) is not None
        thought = [m.id for m in mine.view_messages() if has_thinking(m)]
        assert thought  # the imported replies thought
        assert set(thought) <= set(mine.thinking_left_out(continued=False))
        assert not set(thought) & set(theirs.thinking_left_out(continued=False))
        assert own.usage(sid).used_tokens < editor.usage(sid).used_tokens
    finally:
        await own.close()
        await editor.close()


async def test_an_imported_turns_thinking_counts_while_the_view_before_it_is_as_it_came(
    tmp_path: Path,
) -> None:
    """Where an editor's client may have sent it, an imported reply's thinking counts only
    while the view before it is the one it came after: undoing the file's own compaction
    puts the turns it summarized back before the later ones, whose thinking no request
    sends from then on (no fingerprint for Baton's, a prefix the file's client never had),
    while the turns put back stand where they came and count as before."""
    source = generate(7, era="recent", compactions=2, turns=16, repairs=False, media=False)
    path = source.write(tmp_path / "claude-code.jsonl")
    data = tmp_path / "data"
    command = [sys.executable, "-m", "baton", "import", str(path), "--data-dir", str(data)]
    said = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    sid = said.split(" as session ")[1].split()[0]
    editor = BatonService(Settings.model_validate({"dataDir": str(data)}))
    try:
        session = editor.session(sid)
        later = [m.id for m in session.view_messages() if has_thinking(m)]
        assert later and session.thinking_left_out(continued=False) == []
        await editor.compaction.undo(sid)
        session = editor.session(sid)
        thought = [m.id for m in session.view_messages() if has_thinking(m)]
        assert len(thought) > len(later)  # the summarized turns came back, thinking too
        assert session.thinking_left_out(continued=False) == later
    finally:
        await editor.close()
