"""Edited prompts in a Claude Code file: the branch the user left, beside the one they took.

Claude Code writes a conversation as a tree (each record names its `parentUuid`). Editing an
earlier prompt, or sending a new one after rewinding to it, writes the new prompt under the
same parent as the one it replaces, and goes on from there; the old turns stay in the file,
and `--resume` continues the newest branch. So a typed prompt under a parent that already
has one is an edit: the turns from the earlier prompt on leave the view as a Baton rewind
takes them out (kept in the transcript, brought back by undoing it).

Only typed prompts count. Parallel tool calls and hook records fork the chain too, but
under assistant records and tool results, which are never a choice the user made.

A fork whose other branch says something (a typed prompt, a reply, a compaction) after the
branch Claude Code resumes began there, or begins with something else than a typed prompt,
is no edit but two conversations written at once (`ParentChains`): the one Claude Code
resumes is the view, the other is kept out of it.
"""

from __future__ import annotations

from array import array

from baton.core.conversation.boundary import Boundary
from baton.core.importers.claude_code_repairs import Record, record_uuid, sent_as_user

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


class ParentChains:
    """Every conversation record's parent, by its place in the file, and which records are
    typed prompts, as the records go by: enough to find at the end the records of another
    conversation written beside the one Claude Code resumes (`beside`).

    Claude Code run twice on one session (resumed in two terminals) writes both
    conversations into its file at once, record by record, each prompt under the same
    record. Claude Code reads its file by uuid and resumes the chain from the last record
    back by parent; read in file order, the two would make one view, each turn of one
    followed by a turn of the other. Places and parents are kept as numbers (a few bytes a
    record, the uuids shared with the records' own)."""

    def __init__(self) -> None:
        self.place: dict[str, int] = {}
        self.uuids: list[str] = []
        self.parents = array("q")  # the parent's place; -1: none, or not read before it
        self.says = bytearray()  # 2: a typed prompt; 1: a reply or a compaction
        self.kept_head: dict[int, int] = {}  # a compaction's place -> its kept segment's head
        self.last = -1  # the place of the last user or assistant record

    def add(self, record: Record) -> None:
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or uuid in self.place or record.get("isSidechain"):
            return  # a record written again keeps its first place
        kind = record.get("type")
        parent = record.get("parentUuid")
        compacts = record.get("subtype") == "compact_boundary"
        if parent is None and compacts:
            parent = record.get("logicalParentUuid")  # the conversation goes on through it
        place = len(self.uuids)
        self.place[uuid] = place
        self.uuids.append(uuid)
        self.parents.append(self.place.get(parent, -1) if isinstance(parent, str) else -1)
        # only a user record is typed, only a system or attachment record sent as a user's
        if kind == "user":
            self.says.append(2 if _typed(record) else compacts)
        elif kind == "assistant":
            self.says.append(1)
        else:
            self.says.append(compacts or sent_as_user(record) is not None)
        head = _kept_head(record) if compacts else None
        if head is not None and head in self.place:
            self.kept_head[place] = self.place[head]
        if kind in ("user", "assistant"):
            self.last = place

    def beside(self) -> frozenset[str]:
        """The uuids of the records of each branch that forks from the chain Claude Code
        resumes and says something (a typed prompt, a reply, a compaction: not a parallel
        call's result or a hook's record alone) after the chain's own record there, in file
        order: written at the same time, whatever record it begins with (a terminal's
        /compact begins with its compact_boundary). A branch begun by a typed prompt and
        left before is a prompt edited in Claude Code (a rewind `edit_rewind` makes); one
        begun by another record has no edit to stand for it, and is left out too (a
        terminal's /compact done before the other terminal went on)."""
        on: dict[int, int] = {}  # a place on the chain -> its child's place on it (-1: none)
        at, child = self.last, -1
        while at >= 0 and at not in on:
            on[at], child, at = child, at, self.parents[at]
        branch = [-1] * len(self.uuids)  # the place of the record each record's fork began at
        said: dict[int, int] = {}  # that record -> the last place its fork says something
        for place, parent in enumerate(self.parents):
            if place not in on and parent in on and self.kept_head.get(place) not in on:
                branch[place] = place  # a compaction keeping messages of the chain is on it
            elif 0 <= parent < place and branch[parent] >= 0:
                branch[place] = branch[parent]
            if branch[place] >= 0 and self.says[place]:
                said[branch[place]] = place
        beside = {
            root
            for root, end in said.items()
            if (mine := on[self.parents[root]]) >= 0 and (end > mine or self.says[root] != 2)
        }
        return frozenset(u for p, u in enumerate(self.uuids) if branch[p] in beside)


def _typed(record: Record) -> bool:
    """A prompt the user wrote: a user record of text, not meta, not a summary."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
        return False
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return bool(content.strip())
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") != "tool_result":
            return True
    return False


def _kept_head(record: Record) -> str | None:
    """The first record a compaction kept (2.1's `preservedSegment`), which Claude Code
    relinks under its summary: the chain that goes on from the kept messages goes through
    the compaction."""
    meta = record.get("compactMetadata")
    segment = meta.get("preservedSegment") if isinstance(meta, dict) else None
    head = segment.get("headUuid") if isinstance(segment, dict) else None
    return head if isinstance(head, str) else None
