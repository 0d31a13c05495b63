"""Edited prompts in a Claude Code file: the branch the user left, beside the one they took.

Claude Code writes a conversation as a tree (each record names its `parentUuid`). Editing an
earlier prompt, or sending a new one after rewinding to it, writes the new prompt under the
same parent as the one it replaces, and goes on from there; the old turns stay in the file,
and `--resume` continues the newest branch. So a typed prompt under a parent that already
has one is an edit: the turns from the earlier prompt on leave the view as a Baton rewind
takes them out (kept in the transcript, brought back by undoing it).

Only typed prompts count. Parallel tool calls and hook records fork the chain too, but
under assistant records and tool results, which are never a choice the user made.
"""

from __future__ import annotations

from baton.core.conversation.boundary import Boundary
from baton.core.importers.claude_code_repairs import Record, record_uuid

EDIT_SUMMARIZER = "none"  # as a rewind made in Baton: nothing is summarized


class PromptBranches:
    """The newest typed prompt under each parent record seen: its message id, uuid and
    Claude Code session id."""

    def __init__(self) -> None:
        self._latest: dict[str | None, tuple[str, str | None, object]] = {}

    @staticmethod
    def parent(record: Record) -> tuple[bool, str | None]:
        """(whether the record names a parent at all, the parent's uuid or None for a root)."""
        parent = record.get("parentUuid", ...)
        if parent is ... or not (parent is None or isinstance(parent, str)):
            return False, None
        return True, parent

    def replaced(self, record: Record) -> tuple[str, str] | None:
        """The message id and uuid of the earlier prompt that typed prompt `record` replaces,
        or None when it is the first under its parent (or the same record written again)."""
        named, parent = self.parent(record)
        earlier = self._latest.get(parent) if named else None
        if earlier is None:
            return None
        uuid = record.get("uuid")
        if isinstance(uuid, str) and earlier[1] == uuid:
            return None  # a record written twice is no edit
        return earlier[0], str(earlier[1] or "without uuid")

    def another_conversation(self, record: Record) -> bool:
        """Whether typed prompt `record`, with no parent, begins another Claude Code session
        than the prompt it replaces: not that prompt edited but a conversation of its own
        (two sessions in one file), which Claude Code resumes as the later one."""
        named, parent = self.parent(record)
        earlier = self._latest.get(parent) if named and parent is None else None
        return earlier is not None and earlier[2] != record.get("sessionId")

    def add(self, record: Record, message_id: str) -> None:
        """Typed prompt `record` went into the view as message `message_id`."""
        named, parent = self.parent(record)
        if named:
            uuid = record.get("uuid")
            uuid = uuid if isinstance(uuid, str) else None
            self._latest[parent] = (message_id, uuid, record.get("sessionId"))


def edit_rewind(
    view: list[str], first: str, record: Record, earlier: str, at: str, found: str
) -> Boundary:
    """The rewind that takes `view` from message `first` on out, for prompt `record` edited
    from the prompt with uuid `earlier` (`found`: "edited prompt", or "another conversation"
    when `record` begins one)."""
    cut = view.index(first)
    kept = view[:cut]
    return Boundary(
        trigger="manual",
        direction="rewind",
        created_at=at,
        summarizer=EDIT_SUMMARIZER,
        summarized_ids=view[cut:],
        kept_ids=kept,
        view_before=list(view),
        view_after=kept,
        extra={"found": found, "prompt": record_uuid(record), "replaces": earlier},
    )
