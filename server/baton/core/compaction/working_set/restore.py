"""Context restored after a compaction: recent editor files and the project instructions file.

Without workspace folders nothing is restored: there is no way to tell a project file from
any other file on the machine, and restoring the wrong one could leak it to the model.
"""

from __future__ import annotations

import codecs
import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from baton.core.compaction.prompts import instruction_files, instructions_block
from baton.core.compaction.retention.facts import CountText, cut_to_tokens
from baton.core.compaction.working_set.credentials import credential_in
from baton.core.compaction.working_set.session_files import SessionFile
from baton.core.compaction.working_set.visible import (
    COPY_NOTE,
    CUT_NOTE,
    REFERENCE_NOTE,
    Visible,
    resolve_path,
)
from baton.core.conversation.boundary import RestoredFile, SkippedFile
from baton.core.conversation.messages import (
    PROJECT_INSTRUCTIONS,
    RESTORED_FILE,
    Attachment,
    AttachmentLabel,
    Message,
    text_message,
)
from baton.core.settings import RestoreSettings
from baton.core.usage.estimator import MESSAGE_OVERHEAD
from baton.core.workspace.editor_files import EditorFiles, TrackedFile, path_problem, path_to_uri

LARGE_FILE_BYTES = 1_000_000
REFERENCE_FACTOR = 10  # a file this many times over its budget is only referenced
BYTES_PER_TOKEN = 4  # a typical source file: about four bytes per token
READ_BYTES_PER_TOKEN = 8  # reading twice that is always enough to fill the budget
SNIFF_BYTES = 8192
MIN_USEFUL_TOKENS = 64


@dataclass
class Restored:
    """What a restore put back (attachment messages with their figures) and what it left
    out that the client should hear of: a URI that names no usable path, a file whose
    name says it holds secrets, a file whose text holds a credential."""

    files: list[tuple[Message, RestoredFile]] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


@dataclass
class _Content:
    text: str | None  # None: restore as a reference
    size: int
    partial: bool  # the text is only the head of the file


def excluded(path: Path, folder: Path, patterns: Sequence[str]) -> bool:
    """Whether a pattern matches the path relative to its folder or the file name; case is
    ignored (`.ENV` is as secret as `.env`, and some file systems ignore case anyway)."""
    try:
        relative = path.relative_to(folder).as_posix().lower()
    except ValueError:
        relative = path.as_posix().lower()
    name = path.name.lower()
    for pattern in (p.lower() for p in patterns):
        shapes = [pattern, pattern[3:]] if pattern.startswith("**/") else [pattern]
        for shape in shapes:
            if fnmatch.fnmatchcase(relative, shape) or fnmatch.fnmatchcase(name, shape):
                return True
    return False


def decode_utf8(data: bytes, partial: bool) -> str | None:
    if b"\x00" in data:
        return None
    try:
        # A head read may end inside a multi-byte character; only that tail may be incomplete.
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=not partial)
    except UnicodeDecodeError:
        return None


def _read(path: Path, live_text: str | None, per_file: int, room: int) -> _Content | None:
    """The file's text (its head when large), a reference, or None (binary, gone, unreadable).
    Too big means over 1 MB or ten times the per-file budget; at most what `room` tokens
    can use is read."""
    too_big = min(LARGE_FILE_BYTES, per_file * BYTES_PER_TOKEN * REFERENCE_FACTOR)
    if live_text is not None:
        if "\x00" in live_text:
            return None
        size = len(live_text)
        if size > too_big:
            return _Content(None, size, True)
        return _Content(live_text, size, False)
    try:
        if not path.is_file():
            return None
        size = path.stat().st_size
        with path.open("rb") as handle:
            if size > too_big:
                # Only sniff the head: a binary file is skipped, not referenced.
                return (
                    _Content(None, size, True)
                    if decode_utf8(handle.read(SNIFF_BYTES), True) is not None
                    else None
                )
            # never more than a file this size can hold, however large the budget
            limit = min(room * READ_BYTES_PER_TOKEN, too_big) + SNIFF_BYTES
            data = handle.read(limit + 1)
    except OSError:
        return None
    partial = len(data) > limit
    text = decode_utf8(data[:limit] if partial else data, partial)
    return None if text is None else _Content(text, size, partial)


def _writable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _human(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1_000:
        return f"{size / 1_000:.1f} kB"
    return f"{size} bytes"


def _fence(text: str) -> str:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


fence = _fence  # the fence around an attachment's text, for every attachment


def _attachment(
    heading: str, source: str, content: _Content, room: int, count: CountText
) -> tuple[str, bool] | None:
    """The attachment text within `room` tokens and whether it was cut; None if nothing fits."""
    reference = (
        f"{heading}\n{REFERENCE_NOTE}the file is {_human(content.size)}, too large to "
        "restore here. Read it with a tool if it is needed."
    )
    if content.text is None:
        return (reference, True) if count(reference) <= room else None
    fence = _fence(content.text)
    head = f"{heading}\n{COPY_NOTE}{source}"
    whole = f"{head}.\n{fence}\n{content.text}\n{fence}"
    if not content.partial and count(whole) <= room:
        return whole, False
    overhead = count(f"{head} (cut at {room:,} tokens).\n{fence}\n\n{fence}") + 4
    if room - overhead < MIN_USEFUL_TOKENS:
        return (reference, True) if count(reference) <= room else None
    cut = cut_to_tokens(content.text, room - overhead, count)
    note = f" {CUT_NOTE}{count(cut):,} tokens)"
    return f"{head}{note}.\n{fence}\n{cut}\n{fence}", True


def _restore_one(
    label: AttachmentLabel,
    path: Path,
    tracked: TrackedFile | None,
    per_file: int,
    room: int,
    count: CountText,
) -> tuple[Message, RestoredFile] | str | None:
    """The attachment and its figures; a reason (str) when the file must be left out and
    the client told; None when there is simply nothing to restore."""
    live = tracked.text if tracked is not None and tracked.is_open else None
    content = _read(path, live, per_file, room)
    if content is None:
        return None
    if content.text is not None and not _writable(content.text):
        return "its text is not valid UTF-8 (it holds a lone surrogate)"
    kind = credential_in(content.text) if content.text is not None else None
    if kind is not None:
        return f"its text looks like {kind}; files holding credentials are never restored"
    source = "the editor (unsaved changes included)" if live is not None else "disk"
    attachment = Attachment(path=str(path), label=label)
    made = _attachment(attachment.heading(), source, content, room, count)
    if made is None:
        return None
    text, truncated = made
    tokens = count(text)
    message = text_message("user", text, "attachment", tokens=tokens, attachment=attachment)
    uri = tracked.uri if tracked is not None else path_to_uri(path)
    return message, RestoredFile(uri=uri, tokens=tokens, truncated=truncated)


def restore_files(
    files: EditorFiles,
    *,
    kept: list[Message],
    settings: RestoreSettings,
    workspace_folders: list[Path],
    count_text: CountText,
    touched: Sequence[SessionFile] = (),
    system_prompt: str | None = None,
) -> Restored:
    """Attachment messages for the project instructions file, then the most recently touched
    files, the editor's and those the session's own work `touched`, within the restore
    budgets; files the kept messages show are skipped."""
    folders = [f for f in (resolve_path(Path(w)) for w in workspace_folders) if f is not None]
    out = Restored()
    if not folders:
        return out
    visible = Visible(kept, folders)
    left = settings.total_tokens
    done: set[Path] = set()

    def skip(path: Path, tracked: TrackedFile | None, reason: str) -> bool:
        uri = tracked.uri if tracked is not None else path_to_uri(path)
        # the note goes into the transcript: a URI that is not UTF-8 is written escaped
        uri = uri.encode("utf-8", "backslashreplace").decode("utf-8")
        out.skipped.append(SkippedFile(uri=uri, reason=reason))
        return False

    def take(label: AttachmentLabel, path: Path, tracked: TrackedFile | None) -> bool:
        nonlocal left
        problem = path_problem(path)
        if problem is not None:
            return skip(path, tracked, problem)
        resolved = resolve_path(path)
        if resolved is None or resolved in done or visible.shows(path, resolved):
            return False
        problem = path_problem(resolved)  # a link into .git under another name
        if problem is not None:
            return skip(path, tracked, problem)
        folder = next((f for f in folders if resolved.is_relative_to(f)), None)
        if folder is None:
            return False
        unresolved_folder = next(
            (Path(w) for w in workspace_folders if path.is_relative_to(w)), folder
        )
        if label == RESTORED_FILE and (
            excluded(resolved, folder, settings.exclude)
            or excluded(path, unresolved_folder, settings.exclude)
        ):
            return skip(path, tracked, "it matches restore.exclude")
        per_file = settings.max_tokens_per_file
        room = min(per_file, left - MESSAGE_OVERHEAD)  # the message's framing counts in all
        if room <= 0:
            return False
        made = _restore_one(label, path, tracked, per_file, room, count_text)
        if isinstance(made, str):
            return skip(path, tracked, made)
        if made is None or visible.shows_copy(path, resolved, made[0].text()):
            return False
        done.add(resolved)
        out.files.append(made)
        left -= made[1].tokens + MESSAGE_OVERHEAD
        return True

    carried = f"{system_prompt or ''}\n\n"  # each block the default system prompt holds ends so
    for path in instruction_files(workspace_folders):
        if left > 0 and f"{instructions_block(path)}\n\n" not in carried:
            take(PROJECT_INSTRUCTIONS, path, None)  # (one the system prompt carries: not twice)
    taken = 0
    for path, tracked in _newest_first(files, touched):
        if taken >= settings.max_files or left <= 0:
            break
        path = path if path_problem(path) else Path(os.path.abspath(path))
        if take(RESTORED_FILE, path, tracked):
            taken += 1
    return out


def _newest_first(
    files: EditorFiles, touched: Sequence[SessionFile]
) -> list[tuple[Path, TrackedFile | None]]:
    """The editor's recent files and the session's, by when each was last touched (an
    editor file keeps its open text)."""
    timed: list[tuple[float, Path, TrackedFile | None]]
    timed = [(tracked.touched_at, tracked.path, tracked) for tracked in files.recent()]
    timed += [(f.at, f.path, None) for f in touched]
    timed.sort(key=lambda entry: entry[0], reverse=True)
    out: dict[str, tuple[Path, TrackedFile | None]] = {}
    for _, path, tracked in timed:  # a file both touched: once, at its latest, the editor's
        key = os.path.abspath(path)
        if key not in out:
            out[key] = (path, tracked or files.get(path_to_uri(path)))
    return list(out.values())
