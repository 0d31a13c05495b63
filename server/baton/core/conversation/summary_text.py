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

from collections.abc import Mapping

from baton.core.conversation.boundary import Boundary


class Text:
    """The text of one message: each message it names, with that one's `Text` as it was
    when this one was worked out (None for a plain message). A message reached again
    while its own text is being worked out (a malformed file whose summaries name each
    other) gives the empty text, `OPEN`, there: read back, it covers nothing."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[tuple[str, Text | None], ...]) -> None:
        self.parts = parts


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


def _read(text: Text) -> frozenset[str]:
    """Every message `text` names, through the texts it holds."""
    out: set[str] = set()
    seen = {text}
    stack = [text]
    while stack:
        for part, below in stack.pop().parts:
            out.add(part)
            if below is not None and below not in seen:
                seen.add(below)
                stack.append(below)
    return frozenset(out)
