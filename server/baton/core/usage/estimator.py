"""Token estimation: offline cl100k_base (hash-checked), per-message cache, calibration."""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from baton.core.conversation.turn_framing import MESSAGE_OVERHEAD
from baton.core.errors import BatonError
from baton.core.usage.cl100k import (
    BPE_PACKAGE,
    BPE_RELATIVE,
    CL100K_PATTERN,
    CL100K_SHA256,
    CL100K_SPECIAL,
    Cl100k,
    Encoder,
    find_bpe_file,
    load_cl100k,
)
from baton.core.usage.message_tokens import MessageTokens
from baton.core.usage.usage_memo import UsageMemo

__all__ = [
    "BPE_PACKAGE",
    "BPE_RELATIVE",
    "CL100K_PATTERN",
    "CL100K_SHA256",
    "CL100K_SPECIAL",
    "MESSAGE_OVERHEAD",
    "Encoder",
    "Estimator",
    "chunks",
    "default_estimator",
    "find_bpe_file",
    "load_cl100k",
]

log = logging.getLogger(__name__)

# tiktoken's BPE grows faster than linearly on long runs without whitespace; chunking
# keeps a multi-megabyte tool result at a fraction of a second.
CHUNK_CHARS = 100_000
FACTOR_MIN, FACTOR_MAX = 0.5, 2.0
FACTOR_ALPHA = 0.3  # weight of each new observation in the moving average
# A count waits this long for a tokenizer still loading before it fails (loading takes
# well under a second; a wait this long means the disk or the machine is stuck).
LOAD_WAIT_SECONDS = 60.0


class TokenizerNotReady(BatonError):
    """The tokenizer is still loading after LOAD_WAIT_SECONDS."""


def chunks(text: str, size: int = CHUNK_CHARS) -> Iterable[str]:
    """Pieces of at most `size` chars, cut at a newline or space when one is near the end."""
    start = 0
    while len(text) - start > size:
        end = start + size
        low = start + size // 2
        # after a newline or before a space: where the tokenizer splits pieces anyway
        cut = text.rfind("\n", low, end) + 1 or text.rfind(" ", low, end)
        if cut <= start:
            cut = end
        yield text[start:cut]
        start = cut
    yield text[start:]


class Estimator(MessageTokens):
    """Counts tokens the way the model will see them, as closely as is cheap.

    With `background=True` the tokenizer loads on a thread of its own, started by
    `start_loading()` or by the first count, and every count waits until it is ready (or
    has failed, which means the characters / 4 fallback).
    """

    def __init__(
        self,
        bpe_path: Path | None = None,
        expected_hash: str = CL100K_SHA256,
        encoder: Encoder | None = None,
        *,
        background: bool = False,
    ) -> None:
        self.factor = 1.0
        self.observations = 0
        self.on_learned: Callable[[], None] | None = None  # told after each observation
        self._fallback_reason: str | None = None
        self._encoder: Encoder | None = None
        # text -> tokens, set once the tokenizer is ready (or known to be unavailable)
        self._count: Callable[[str], int] | None = None
        self._ready = threading.Event()
        super().__init__()  # the per-message caches
        # session -> the memo of its usage, for callers that hold none (weakly: it goes with
        # the session); the service passes each session's own, from its runtime
        self._memos: WeakKeyDictionary[Any, UsageMemo] = WeakKeyDictionary()
        self._source = (bpe_path, expected_hash)
        self._loader: threading.Thread | None = None
        self._loader_lock = threading.Lock()
        if encoder is not None:
            self._use(encoder)
        elif not background:
            self._load(bpe_path, expected_hash)

    def fresh(self) -> Estimator:
        """An estimator with a cache and a calibration of its own over this one's
        tokenizer (loaded first)."""
        self.wait_ready()
        return Estimator(*self._source, encoder=self._encoder)

    def start_loading(self) -> None:
        """Start the background load, once; later calls (and loaded estimators) do nothing."""
        with self._loader_lock:
            if self._loader is None and not self._ready.is_set():
                self._loader = threading.Thread(
                    target=self._load, args=self._source, name="cl100k", daemon=True
                )
                self._loader.start()

    def _load(self, bpe_path: Path | None, expected_hash: str) -> None:
        try:
            self._use(load_cl100k(bpe_path, expected_hash))
        except Exception as exc:  # any failure means the approximate fallback
            self._fallback_reason = f"tiktoken cl100k_base unavailable: {exc}"
            log.warning("%s; counting characters / 4 instead", self._fallback_reason)
            self._count = _approximate
        finally:
            if self._count is None:  # not even an exception: never leave a waiter hanging
                self._fallback_reason = "tiktoken cl100k_base unavailable: loading stopped"
                self._count = _approximate
            self._ready.set()

    def _use(self, encoder: Encoder) -> None:
        self._encoder = encoder
        if isinstance(encoder, Cl100k):
            self._count = encoder.count
        else:
            self._count = lambda text: len(encoder.encode(text, disallowed_special=()))
        self._ready.set()

    def wait_ready(self, timeout: float = LOAD_WAIT_SECONDS) -> Callable[[str], int]:
        """The text counter, once the tokenizer has loaded (or failed to)."""
        if not self._ready.is_set():
            self.start_loading()
        if not self._ready.wait(timeout):
            raise TokenizerNotReady(f"the tokenizer is still loading after {timeout:.0f} s")
        assert self._count is not None
        return self._count

    @property
    def exact(self) -> bool:
        self.wait_ready()
        return self._encoder is not None

    @property
    def fallback_reason(self) -> str | None:
        self.wait_ready()
        return self._fallback_reason

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        count = self._count or self.wait_ready()
        if len(text) <= CHUNK_CHARS or self._encoder is None:
            return count(text)
        return sum(map(count, chunks(text)))

    def count_capped(self, text: str, cap: int) -> int:
        """`count_text(text)` when that is at most `cap`, else a figure above `cap`, at most
        `count_text(text)`: with cl100k a long text is not counted whole for that
        (`Cl100k.count_capped`)."""
        if not isinstance(self._encoder, Cl100k):
            return self.count_text(text)
        if len(text) <= CHUNK_CHARS:
            return self._encoder.count_capped(text, cap)
        # a longer text counts as the sum of its chunks': the chunks are counted until
        # the sum passes the cap (a 20 MB paste is not counted whole to learn it does not fit)
        count, tokens = self._count or self.wait_ready(), 0
        for chunk in chunks(text):
            tokens += count(chunk)
            if tokens > cap:
                break
        return tokens

    def count_json(self, obj: object) -> int:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)
        if self._count is None:
            self.wait_ready()
        if self._encoder is None:
            return math.ceil(len(text) / 2)  # JSON is punctuation-dense
        return self.count_text(text)

    def usage_memo(self, session: object) -> UsageMemo:
        """The memo of `session`'s usage for a caller that holds none."""
        memo = self._memos.get(session)
        if memo is None:
            memo = self._memos[session] = UsageMemo()
        return memo

    def calibrated(self, raw: int, media: int = 0) -> int:
        """`raw` tokens as the API counts them: its text at the factor, and `media` (the
        part of `raw` its images and documents make, in the API's units already) as is."""
        return round((raw - media) * self.factor) + media

    def observe(self, estimated_raw: int, actual: int, media: int = 0) -> None:
        """Move the factor toward actual / estimate (an exponential moving average), both
        without `media` (the images' and documents' part of each, in the API's units):
        the factor is the text's."""
        text, actual_text = estimated_raw - media, actual - media
        if text <= 0 or actual_text <= 0:
            return
        ratio = _clamp(actual_text / text)
        self.factor = _clamp(self.factor + FACTOR_ALPHA * (ratio - self.factor))
        self.observations += 1
        if self.on_learned is not None:
            self.on_learned()


def _clamp(factor: float) -> float:
    return min(FACTOR_MAX, max(FACTOR_MIN, factor))


def _approximate(text: str) -> int:
    return math.ceil(len(text) / 4)


_default: Estimator | None = None
_default_lock = threading.Lock()


def default_estimator() -> Estimator:
    """The process-wide estimator; its tokenizer loads on a thread (see `start_loading`)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Estimator(background=True)
        return _default
