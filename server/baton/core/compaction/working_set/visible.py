"""The paths the messages a compaction keeps already show, so that a restore does not put
them back a second time; an earlier restore's copy among them shows a file only while it
still shows what the file holds now."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from baton.core.compaction.retention.facts import attachment_path, result_text, tool_paths
from baton.core.compaction.working_set.inline_reads import inline_reads
from baton.core.conversation.messages import (
    ATTACHED_FILE,
    CLEARED_RESULT,
    PROJECT_INSTRUCTIONS,
    RESTORED_FILE,
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)


def resolve_path(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL or a lone surrogate
        return None


class Visible:
    """Paths the kept messages already show: named by a tool call answered among them (not
    one whose result is an error, or was cleared by a microcompaction; a call still waiting,
    for the user's permission say, has shown nothing yet: denied, it never will) or an
    attachment of the whole file (`_whole`), a file's text a prompt carried under its
    path (`attached_in_text`), or Claude Code's older inline read of it (`inline_reads`).
    A path merely written out in a message shows nothing of what the file holds, nor does
    a selection, or a read of some of its lines (`read_whole`), more than those lines,
    nor a search or a listing that named it."""

    def __init__(self, kept: Sequence[Message], folders: Sequence[Path]) -> None:
        self.paths: set[str] = set()
        self.copies: dict[str, str] = {}  # a path -> the text of an earlier restore's copy
        self.twice: set[str] = set()  # paths with more than one such copy (see `shows_copy`)
        answered = {r.tool_use_id: r for m in kept for r in m.tool_results()}
        failed = {
            r.tool_use_id
            for m in kept
            for r in m.tool_results()
            if r.is_error or r.content == CLEARED_RESULT
        }
        for message in kept:
            attached = attachment_path(message)
            if attached and _restored_copy(message):  # may be stale: see `shows_copy`
                for name in self._names(attached, folders):
                    if name in self.copies:
                        self.twice.add(name)
                    self.copies[name] = message.text()
                continue
            if attached and _whole(message):  # a selection shows its lines, not the file
                self._add(attached, folders)
            for use in message.tool_uses():
                if use.id in failed or use.id not in answered:  # failed, cleared or waiting
                    continue
                if not read_whole(use, answered[use.id]):  # some lines: not the file
                    continue
                for path, operation in tool_paths(use):
                    if operation not in _NOT_SHOWING:
                        self._add(path, folders)
            if message.role == "user" and message.kind == "message":
                for block in message.content:
                    carried = attached_in_text(block)
                    if carried is not None:
                        self._add(carried, folders)
        for _, use, result in inline_reads(kept):  # Claude Code's older reads, as a prompt's text
            if read_whole(use, result):
                self._add(use.input["file_path"], folders)

    def _add(self, raw: str, folders: Sequence[Path]) -> None:
        self.paths.update(self._names(raw, folders))

    @staticmethod
    def _names(raw: str, folders: Sequence[Path]) -> set[str]:
        path = Path(raw).expanduser()
        candidates = [path] if path.is_absolute() else [folder / path for folder in folders]
        names: set[str] = set()
        for candidate in candidates:
            names.add(str(candidate))
            resolved = resolve_path(candidate)
            if resolved is not None:
                names.add(str(resolved))
        return names

    def shows(self, path: Path, resolved: Path) -> bool:
        return bool({str(path), str(resolved)} & self.paths)

    def shows_copy(self, path: Path, resolved: Path, made: str) -> bool:
        """Whether an earlier restore's kept copy shows what `made`, the copy a restore
        would make now, shows: the same text (from disk or the editor), or the head of it
        when both were cut. A file changed since is restored again, after the stale copy.
        Two copies kept (an undo brought an older one back beside a later one) show it
        twice: it is restored again, and the fresh copy takes the place of both."""
        if {str(path), str(resolved)} & self.twice:
            return False
        kept = self.copies.get(str(path)) or self.copies.get(str(resolved))
        if kept is None:
            return False
        if kept == made:
            return True
        old, new = kept.split("\n", 2), made.split("\n", 2)
        if _is_reference(old):  # the path only: the same while the file is still too large
            return _is_reference(new)
        if not _is_copy(old):  # another layout (an older Baton's): it shows the file, as before
            return True
        if not _is_copy(new):
            return False
        old_text, new_text = _fenced(old[2]), _fenced(new[2])
        if old_text == new_text:
            return True
        cut = CUT_NOTE in old[1] and CUT_NOTE in new[1]
        return cut and (old_text.startswith(new_text) or new_text.startswith(old_text))


COPY_NOTE = "Restored after a compaction from "  # a restored copy's second line opens so
CUT_NOTE = "(cut at "  # and carries this when the copy was cut
REFERENCE_NOTE = "Reference only: "  # a file too large to restore: its path only


def stale_copies(kept: Sequence[Message], fresh: Sequence[Message]) -> dict[str, list[str]]:
    """Each copy a restore makes now (`fresh`) -> the earlier restores' copies of its file
    among the `kept` messages: a file is restored again only when those no longer show it
    (`shows_copy`), so the fresh copy replaces them (and an undo puts them back)."""
    out: dict[str, list[str]] = {}
    for new in fresh:
        path = attachment_path(new)
        if path is None:
            continue
        here = {path, str(resolve_path(Path(path)))}
        stale = [
            m.id
            for m in kept
            if _restored_copy(m)
            and (old := attachment_path(m)) is not None
            and (old in here or str(resolve_path(Path(old))) in here)
        ]
        if stale:
            out[new.id] = stale
    return out


def in_place_of_stale(view: list[Message], replaced: dict[str, list[str]]) -> list[Message]:
    """`view` with each fresh copy in the place of the stale copies it replaces
    (`stale_copies`): where the first one was, so an undo puts them back where they were."""
    by_id = {m.id: m for m in view}
    first = {stale[0]: by_id[new] for new, stale in replaced.items() if new in by_id}
    moved = {first[mid].id for mid in first if mid in by_id}
    gone = {mid for new, stale in replaced.items() if new in moved for mid in stale}
    out: list[Message] = []
    for message in view:
        if message.id in gone:
            if message.id in first:
                out.append(first[message.id])
        elif message.id not in moved:
            out.append(message)
    return out


def _restored_copy(message: Message) -> bool:
    """Whether `message` is a copy a compaction restored (a file or the project
    instructions), not a file the user attached with a prompt."""
    attachment = message.attachment
    if attachment is None:
        return message.kind == "attachment"  # written before the field: named by its heading
    return attachment.kind is None and attachment.label in (RESTORED_FILE, PROJECT_INSTRUCTIONS)


def _whole(message: Message) -> bool:
    """Whether a prompt's attachment carries its whole file: not a selection, a range of
    lines (the editor's visible ones), or a file cut to the attachment limit."""
    attachment = message.attachment
    if attachment is None:
        return True
    if attachment.kind == "selection" or attachment.range is not None:
        return False
    return not message.text().rsplit("\n", 1)[-1].startswith("[cut at ")


# a search limited to a file (a grep's path, a glob) shows its hits, a listing names it
_NOT_SHOWING = ("searched", "listed")
# read_file's notes (the text editor's view is read_file too) that its answer left lines out
_PART_NOTES = re.compile(r"\[(cut: lines |lines \d+-\d+ of |\d+ line\(s\) longer than )")
CLAUDE_READ_LINES = 2000  # what Claude Code's Read shows of a file with no limit given
CLAUDE_LINE_CHARS = 2000  # what it shows of a longer line, silently cut there
_NUMBERED = re.compile(r"\s*\d+(\u2192|\t)")  # a line of Claude Code's Read: "    12→text"


def read_whole(use: ToolUseBlock, result: ToolResultBlock) -> bool:
    """Whether a call's answer showed the whole of the file it read: not when it read from
    a line (or a character of each) past the first, nor when its answer says it left
    lines out (read_file's range short of the end, or its bound cut it), nor a Claude
    Code `Read` that reached its limit (its own, 2,000 lines, when none is given) or
    showed a line as long as the 2,000 characters it cuts a longer one to, unmarked (a
    line of just that length is taken as cut: the file comes back, never goes missing).
    A call that reads no file is left as it was."""
    given: dict[str, Any] = use.input if isinstance(use.input, dict) else {}
    if use.name == "Read":  # Claude Code's: offset is where it starts, limit how many lines
        if _past_first(given.get("offset")):
            return False
        limit = given.get("limit")
        if not isinstance(limit, int) or isinstance(limit, bool):
            limit = CLAUDE_READ_LINES
        shown = [
            len(line) - numbered.end()
            for line in result_text(result).splitlines()
            if (numbered := _NUMBERED.match(line))
        ]
        return len(shown) < limit and all(chars < CLAUDE_LINE_CHARS for chars in shown)
    view = given.get("view_range")
    if use.name == "read_file":
        starts = [given.get("startLine"), given.get("startColumn")]
    elif use.name == "str_replace_based_edit_tool" and given.get("command") == "view":
        starts = [view[0] if isinstance(view, list) and view else None]
    else:
        return True
    if any(_past_first(start) for start in starts):
        return False
    notes = result_text(result).rsplit("\n", 2)[-2:]  # its notes come last, two at most
    return not any(_PART_NOTES.match(line) for line in notes)


def _past_first(value: object) -> bool:
    """Whether a 1-based start (a line, a column) is past the first."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 1


def _is_copy(lines: list[str]) -> bool:
    return len(lines) == 3 and lines[1].startswith(COPY_NOTE)


def _is_reference(lines: list[str]) -> bool:
    return len(lines) > 1 and lines[1].startswith(REFERENCE_NOTE)


def _fenced(body: str) -> str:
    """The text between a copy's opening and closing fence lines."""
    return body.split("\n", 1)[-1].rsplit("\n", 1)[0]


def attached_in_text(block: ContentBlock) -> str | None:
    """The file whose text a prompt's text block carries under its path, as an ACP
    prompt's attached file is written ("Attached file: PATH" then the text fenced); None
    for any other text, one naming a file too large to carry among them."""
    if not isinstance(block, TextBlock):
        return None
    head, _, rest = block.text.partition("\n")
    label = f"{ATTACHED_FILE}: "
    if not head.startswith(label) or not rest.startswith("```"):
        return None
    return head[len(label) :].strip() or None
