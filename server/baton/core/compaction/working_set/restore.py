"""Context restored after a compaction: recent editor files and the project instructions file.

Without workspace folders nothing is restored: there is no way to tell a project file from
any other file on the machine, and restoring the wrong one could leak it to the model.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from baton.core.compaction.prompts import instruction_files, instructions_block
from baton.core.compaction.retention.facts import CountText
from baton.core.compaction.working_set.credentials import credential_in
from baton.core.compaction.working_set.file_text import (
    attachment_text,
    read_content,
    writable,
)
from baton.core.compaction.working_set.session_files import SessionFile
from baton.core.compaction.working_set.visible import Visible, resolve_path
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


@dataclass
class Restored:
    """What a restore put back (attachment messages with their figures) and what it left
    out that the client should hear of (`skipped`): a URI that names no usable path, a file
    whose name says it holds secrets, a file whose text holds a credential; and the other
    candidates that did not come back, with the reason (`left_out`: the file limit, the
    budget, binary or unreadable, outside the workspace), for the dropped report."""

    files: list[tuple[Message, RestoredFile]] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    left_out: list[SkippedFile] = field(default_factory=list)


UNREADABLE = "it is binary, gone or unreadable"
OUTSIDE = "it is outside the workspace folders"


@dataclass(frozen=True)
class _Left:
    """A file left out for a reason the dropped report gives (not a `skippedFiles` one)."""

    reason: str


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


def _restore_one(
    label: AttachmentLabel,
    path: Path,
    tracked: TrackedFile | None,
    per_file: int,
    room: int,
    count: CountText,
) -> tuple[Message, RestoredFile] | str | _Left | None:
    """The attachment and its figures; a reason (str) when the file must be left out and
    the client told; `_Left` when it cannot be restored; None when nothing of it fits."""
    live = tracked.text if tracked is not None and tracked.is_open else None
    content = read_content(path, live, per_file, room)
    if content is None:
        return _Left(UNREADABLE)
    if content.text is not None and not writable(content.text):
        return "its text is not valid UTF-8 (it holds a lone surrogate)"
    kind = credential_in(content.text) if content.text is not None else None
    if kind is not None:
        return f"its text looks like {kind}; files holding credentials are never restored"
    source = "the editor (unsaved changes included)" if live is not None else "disk"
    attachment = Attachment(path=str(path), label=label)
    made = attachment_text(attachment.heading(), source, content, room, count)
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
    budget = f"the restore's budget was used up (restore.totalTokens {settings.total_tokens:,})"

    def skip(path: Path, tracked: TrackedFile | None, reason: str, told: bool = True) -> bool:
        uri = tracked.uri if tracked is not None else path_to_uri(path)
        # the note goes into the transcript: a URI that is not UTF-8 is written escaped
        uri = uri.encode("utf-8", "backslashreplace").decode("utf-8")
        (out.skipped if told else out.left_out).append(SkippedFile(uri=uri, reason=reason))
        return False

    def take(
        label: AttachmentLabel, path: Path, tracked: TrackedFile | None, limit: str | None = None
    ) -> bool:
        """Restore the file; or, past a `limit`, only say why a file that would have been
        tried was not."""
        nonlocal left
        problem = path_problem(path)
        if problem is not None:
            return skip(path, tracked, problem)
        resolved = resolve_path(path)
        if resolved is None:
            return skip(path, tracked, UNREADABLE, told=False)
        if resolved in done or visible.shows(path, resolved):
            return False
        problem = path_problem(resolved)  # a link into .git under another name
        if problem is not None:
            return skip(path, tracked, problem)
        folder = next((f for f in folders if resolved.is_relative_to(f)), None)
        if folder is None:
            return skip(path, tracked, OUTSIDE, told=False)
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
        if limit is not None or room <= 0:
            return skip(path, tracked, limit or budget, told=False)
        made = _restore_one(label, path, tracked, per_file, room, count_text)
        if isinstance(made, str):
            return skip(path, tracked, made)
        if isinstance(made, _Left):
            return skip(path, tracked, made.reason, told=False)
        if made is None:
            return skip(path, tracked, budget, told=False)
        if visible.shows_copy(path, resolved, made[0].text()):
            return False
        done.add(resolved)
        out.files.append(made)
        left -= made[1].tokens + MESSAGE_OVERHEAD
        return True

    carried = f"{system_prompt or ''}\n\n"  # each block the default system prompt holds ends so
    for path in instruction_files(workspace_folders):
        if f"{instructions_block(path)}\n\n" not in carried:
            take(PROJECT_INSTRUCTIONS, path, None)  # (one the system prompt carries: not twice)
    taken = 0
    limit = f"the restore's file limit was reached (restore.maxFiles {settings.max_files})"
    for path, tracked in _newest_first(files, touched):
        path = path if path_problem(path) else Path(os.path.abspath(path))
        if taken >= settings.max_files:
            take(RESTORED_FILE, path, tracked, limit)  # every candidate is told of
        elif take(RESTORED_FILE, path, tracked, None if left > 0 else budget):
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
