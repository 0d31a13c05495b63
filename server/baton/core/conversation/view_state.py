"""What a session keeps about its view as it grows, so an append costs what it adds:
fingerprints of each prefix, running token tallies (each turn's framing counted once, as
the request sends it: `turn_framing.py`), the images and documents it holds and their
bytes, the API rules' state, the anchor."""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from baton.core.conversation.invariants import ApiRules, ToolPairs
from baton.core.conversation.media_blocks import holds_media
from baton.core.conversation.request_bytes import NO_MEDIA, Media
from baton.core.conversation.turn_framing import MESSAGE_OVERHEAD, TurnFraming

if TYPE_CHECKING:
    from baton.core.conversation.messages import ApiUsage, Message

Anchor = tuple[int, "ApiUsage"] | None
MARK_BYTES = 16  # a fingerprint: blake2b's digest of the view's ids so far


class ViewState:
    """Built from a view once (after a load, a compaction, an undo) and then kept current
    by `add` for every message that joins the view at its end.

    Built with `framed` False (a replay's views), which turn each message opens is worked
    out only when something reads the tallies, or once `framed()` is called: a view a
    later compaction of the file replaces is never framed (the replay frames the views it
    keeps before the session is read). Nothing else waits: the marks, the counts and the
    messages stored without one are taken in as each message is added."""

    def __init__(self, messages: Iterable[Message] = (), *, framed: bool = True) -> None:
        self._running = hashlib.blake2b(digest_size=16)
        # the fingerprint of the view before each message, packed (`mark(i)`): 16 bytes a
        # message rather than a string object (~80 bytes) each
        self.marks = bytearray()
        # tally[i]: stored token counts of the view's first i (machine ints, not int objects)
        self.tally: array[int] = array("q", [0])
        # joined[i]: how many of the view's first i open no turn of the request (their
        # stored counts hold framing it does not send); `by_kind` is without it already
        self.joined: array[int] = array("q", [0])
        self.framing = TurnFraming()
        self._by_kind: dict[str, int] = {"message": 0, "summary": 0, "attachment": 0}
        # the messages added whose framing waits (`framed`); None: each framed as added
        self._unframed: list[Message] | None = None if framed else []
        self.uncounted: list[int] = []  # indices of messages stored without a token count
        # the bytes of the view's first `bytes_seen` messages in a request: measured only
        # once its media near the API's limit (`ViewTokens.request_bytes`)
        self.messages_bytes = 0
        self.bytes_seen = 0
        self.rules: ApiRules | None = None  # built on first need (the first append)
        self.pairs: ToolPairs | None = None  # built on first need (the first diagnostics)
        # indices of the messages holding images or documents, found on first need (a view
        # nothing measures, a replay's, costs nothing) and kept up to date; the images and
        # documents of the first `media_summed` of them and their bytes of base64, what
        # takes a request towards the API's 32 MB whatever its tokens (`request_bytes.py`),
        # added up as they are read (`ViewTokens.media_in_view`)
        self.media_at: list[int] | None = None
        self.media: Media = NO_MEDIA
        self.media_summed = 0
        self.anchor_known = False
        self.anchor: Anchor = None
        for message in messages:
            self.add(message)

    def mark(self, index: int) -> bytes:
        """The fingerprint of the view before message `index`."""
        return bytes(self.marks[index * MARK_BYTES : (index + 1) * MARK_BYTES])

    def add(self, message: Message) -> bytes:
        """Take in the message that joins the view at its end; returns its mark."""
        mark = self._running.digest()
        # surrogatepass: an id read from a hand-edited file may hold a lone surrogate
        self._running.update(message.id.encode("utf-8", "surrogatepass") + b"\0")
        index = len(self.marks) // MARK_BYTES
        tokens = message.tokens  # read once: a model's field is slower to read than a name
        if not tokens:
            self.uncounted.append(index)
        if self.media_at is not None and holds_media(message):
            self.media_at.append(index)
        self.marks += mark
        self.tally.append(self.tally[-1] + tokens)
        self._by_kind[message.kind] += tokens  # less its framing, if unsent (`_frame`)
        if self._unframed is None:
            self._frame(message)
        else:
            self._unframed.append(message)
        if self.rules is not None:
            self.rules.add(message)
        if self.pairs is not None:
            self.pairs.add(message)
        if self.anchor_known and message.anchors_usage:
            self.anchor_known = False  # the newest record may anchor now
        return mark

    def _frame(self, message: Message) -> None:
        """Take in whether `message`, the next one of the view, opens a turn."""
        opens = self.framing.opens(message)
        self.joined.append(self.joined[-1] + (not opens))
        if not opens:
            self._by_kind[message.kind] -= MESSAGE_OVERHEAD

    def _frame_waiting(self) -> None:
        waiting = self._unframed
        if waiting:
            self._unframed = []
            for message in waiting:
                self._frame(message)

    def framed(self) -> ViewState:
        """This state with every message framed, and each framed as it is added from now
        on (what a replay does with the states it keeps: no read of them frames later)."""
        self._frame_waiting()
        self._unframed = None
        return self

    @property
    def by_kind(self) -> dict[str, int]:
        """The view's stored counts per message kind, less the framing a request does not
        send."""
        self._frame_waiting()
        return self._by_kind

    def api_rules(self, view: Callable[[], list[Message]]) -> ApiRules:
        if self.rules is None:
            self.rules = ApiRules().extend(view()).packed()
        return self.rules

    def tool_pairs(self, view: Callable[[], list[Message]]) -> ToolPairs:
        if self.pairs is None:
            self.pairs = ToolPairs().extend(view()).packed()
        return self.pairs

    def media_indices(self, view: Callable[[], list[Message]]) -> list[int]:
        """The indices of the view's messages that hold images or documents."""
        if self.media_at is None:
            self.media_at = [i for i, message in enumerate(view()) if holds_media(message)]
        return self.media_at

    def tokens(self, start: int, stop: int, count: Callable[[int], int]) -> int:
        """Raw tokens of view[start:stop] as a request for the view up to `stop` sends them
        (the framing of a message that opens no turn left out); `count(i)` counts a message
        stored without a count."""
        self._frame_waiting()
        total = self.tally[stop] - self.tally[start]
        total -= MESSAGE_OVERHEAD * (self.joined[stop] - self.joined[start])
        return total + sum(count(i) for i in self.uncounted if start <= i < stop)
