"""What the text of each message a boundary introduced covers: a summary, what it
summarized; a copy or an attachment, what it stands for; each summary or copy among them
read the same way, whether or not its compaction is still in force.

A chain of compactions, each summary summarizing the one before, covers every message
the chain replaced: worked out as one set per summary, that is the square of the chain (a
long imported session: hundreds of summaries, tens of thousands of messages). Each
message's text is kept instead as what it names directly, each with the text of that one
as it was then (`Text`), shared by every summary above it; a set is built only for a
message asked about."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from baton.core.conversation.boundary import Boundary


class Text:
    """The text of one message: each message it names, with that one's `Text` as it was
    when this one was worked out (None for a plain message). A message reached again
    while its own text is being worked out (a malformed file whose summaries name each
    other) gives the empty text, `OPEN`, there: read back, it covers nothing."""

    __slots__ = ("_names", "_nested", "parts")

    def __init__(self, parts: tuple[tuple[str, Text | None], ...]) -> None:
        self.parts = parts
        self._names: tuple[str, ...] | None = None
        self._nested: tuple[tuple[str, Text], ...] | None = None

    def names(self) -> tuple[str, ...]:
        """The messages it names."""
        if self._names is None:
            self._names = tuple(part for part, _ in self.parts)
        return self._names

    def nested(self) -> tuple[tuple[str, Text], ...]:
        """The parts that have a text of their own (a boundary introduced them)."""
        if self._nested is None:
            self._nested = tuple((part, below) for part, below in self.parts if below is not None)
        return self._nested


OPEN = Text(())


class Texts:
    """Each message's `Text`, worked out the first time it is asked for (from its
    boundary, `owner`, as it is then), in the order asked: a malformed file's summaries
    that name each other cover what the first of them asked leaves them."""

    def __init__(self, owner: Mapping[str, Boundary]) -> None:
        self._owner = owner
        self._texts: dict[str, Text] = {}
        self._covered: dict[str, frozenset[str]] = {}

    def text(self, mid: str) -> Text | None:
        """The text of `mid` (None for a plain message, which covers itself)."""
        if mid not in self._owner:
            return None
        known = self._texts.get(mid)
        if known is not None:
            return known
        self._texts[mid] = OPEN
        frames: list[tuple[str, list[str], list[tuple[str, Text | None]]]] = [
            (mid, self._base(mid), [])
        ]
        while frames:  # each part's text before the next part: a walk, depth first
            at, base, parts = frames[-1]
            if len(parts) == len(base):
                frames.pop()
                self._texts[at] = done = Text(tuple(parts))
                if frames:
                    frames[-1][2].append((at, done))
                continue
            part = base[len(parts)]
            if part not in self._owner:
                parts.append((part, None))
            elif part in self._texts:
                parts.append((part, self._texts[part]))
            else:
                self._texts[part] = OPEN
                frames.append((part, self._base(part), []))
        return self._texts[mid]

    def fresh(self) -> Texts:
        """These texts (each worked out once, kept), with none of the sets of what they
        cover: an undo's check asks for those of a new summary at each undo it works out
        (each a long chain's tens of thousands of messages), none of them kept after it."""
        out = Texts(self._owner)
        out._texts = self._texts
        return out

    def covered(self, mid: str) -> frozenset[str]:
        """The messages the text of `mid` covers (itself, for a plain message)."""
        text = self.text(mid)
        if text is None:
            return frozenset((mid,))
        known = self._covered.get(mid)
        if known is None:
            known = self._covered[mid] = _read(text)
        return known

    def _base(self, mid: str) -> list[str]:
        boundary = self._owner[mid]
        base = boundary.summarized_ids if mid == boundary.summary_id else []
        return base or boundary.stands_for.get(mid, [])


def shared_texts(every: Iterable[Boundary]) -> Texts | None:
    """One `Texts` for every undo a check works out on a copy (`undo_ahead.py`), when each
    message's text is the same whichever of those undos reads it: each message introduced
    once; what each is read from (a summary's `summarized_ids`, else what it stands for)
    never rewritten by an undo (it names no message a boundary introduced, and none twice:
    an undo rewrites a list that names one it undoes, and drops a repeat); and no text
    that holds itself (a malformed file's, read in the order asked). None otherwise: each
    undo reads the texts afresh."""
    owner: dict[str, Boundary] = {}
    for boundary in every:
        for message in boundary.new_messages:
            if message.id in owner:
                return None
            owner[message.id] = boundary
    below: dict[str, list[str]] = {}
    for mid, boundary in owner.items():
        if mid == boundary.summary_id and boundary.summarized_ids:
            if boundary.direction == "rewind":  # an undo rewrites what a rewind took
                return None
            below[mid] = [one for one in boundary.summarized_ids if one in owner]
            continue
        base = boundary.stands_for.get(mid, [])
        if len(set(base)) != len(base) or not owner.keys().isdisjoint(base):
            return None
    return None if looped(below) else Texts(owner)


def looped(below: Mapping[str, Iterable[str]]) -> bool:
    """Whether a message reaches itself through `below` (the messages each one names)."""
    done: set[str] = set()
    for root in below:
        if root in done:
            continue
        path = {root}
        stack = [(root, iter(below[root]))]
        while stack:
            at, rest = stack[-1]
            for one in rest:
                if one in path:
                    return True
                if one in below and one not in done:
                    path.add(one)
                    stack.append((one, iter(below[one])))
                    break
            else:
                stack.pop()
                path.discard(at)
                done.add(at)
    return False


def _read(text: Text) -> frozenset[str]:
    """Every message `text` names, through the texts it holds (each text's names taken
    whole)."""
    out: set[str] = set()
    seen = {text}
    stack = [text]
    while stack:
        one = stack.pop()
        out.update(one.names())
        for _, below in one.nested():
            if below not in seen:
                seen.add(below)
                stack.append(below)
    return frozenset(out)
