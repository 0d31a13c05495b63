"""Measurements in this process: reading a transcript with `json.loads` (P3's baseline), the
library load, compaction `all` with the extractive summarizer (P4), and counting against
raw tiktoken encodes of the same strings."""

from __future__ import annotations

import base64
import json
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from baton.core.compaction.engine import CompactContext, compact
from baton.core.compaction.result import CompactRequest
from baton.core.compaction.summary.summarizers import ExtractiveSummarizer
from baton.core.conversation.messages import Message
from baton.core.conversation.store import SessionStore
from baton.core.settings import KeepWindowSettings, Settings
from baton.core.usage.cl100k import CL100K_PATTERN, CL100K_SPECIAL, find_bpe_file
from baton.core.usage.estimator import Encoder, Estimator


def json_lines(path: Path) -> float:
    """The least any reader does: read the file and `json.loads` each line."""
    start = time.perf_counter()
    events = [json.loads(line) for line in path.read_bytes().splitlines() if line]
    elapsed = time.perf_counter() - start
    assert events
    return elapsed


def library_load(data_dir: Path, session_id: str, encoder: Encoder) -> float:
    """`SessionStore.get` of a session no one opened yet (replay of its transcript)."""
    store = SessionStore(data_dir, Estimator(encoder=encoder).count_message)
    start = time.perf_counter()
    session = store.get(session_id)
    elapsed = time.perf_counter() - start
    assert session.view
    store.close()
    return elapsed


async def compactions(
    source: Path, session_id: str, work: Path, encoder: Encoder, reps: int, *, small: bool = False
) -> dict[str, Any]:
    """Compaction `all`, extractive, of a freshly loaded copy each rep (the load timed
    apart, as this row's baseline);
    a fresh estimator each time, as a server that just opened the session has. Default
    settings, except that a small session (a quick run) keeps a smaller recent window, so
    that there is something to compact."""
    settings = Settings()
    if small:
        settings = Settings(keep_window=KeepWindowSettings(min_tokens=2_000, min_text_messages=3))
    times: list[float] = []
    load_times: list[float] = []
    result = None
    for n in range(reps):
        data_dir = work / f"compact-{n}"
        shutil.copytree(source, data_dir)
        estimator = Estimator(encoder=encoder)
        store = SessionStore(data_dir, estimator.count_message)
        start = time.perf_counter()
        session = store.get(session_id)
        load_times.append(time.perf_counter() - start)
        ctx = CompactContext(settings, estimator, ExtractiveSummarizer(estimator.count_text))
        start = time.perf_counter()
        result = await compact(session, CompactRequest(direction="all"), ctx)
        times.append(time.perf_counter() - start)
        store.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    assert result is not None
    return {
        "compact_s": times,
        "load_s": load_times,
        "pre_tokens": result.pre_tokens,
        "post_tokens": result.post_tokens,
    }


def block_strings(blocks: Iterable[Any]) -> Iterable[str]:
    """The strings Baton's counter encodes for these blocks (text, tool inputs as compact
    JSON, results, thinking), for the raw baseline to encode too."""
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
        get = block.get if isinstance(block, dict) else lambda name, b=block: getattr(b, name, None)
        if kind == "text":
            yield get("text") or ""
        elif kind == "thinking":
            yield get("thinking") or ""
        elif kind == "tool_use":
            yield get("name") or ""
            yield json.dumps(get("input") or {}, ensure_ascii=False, separators=(",", ":"))
        elif kind == "tool_result":
            content = get("content")
            if isinstance(content, str):
                yield content
            elif isinstance(content, list):
                yield from block_strings(content)


class Tiktoken(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


def tiktoken_encoding() -> Tiktoken:
    """tiktoken's own `Encoding` of cl100k_base, from the BPE file Baton reads (parsed here,
    so tiktoken's loader writes no cache copy): the raw side of the counting row."""
    import tiktoken

    lines = find_bpe_file().read_bytes().splitlines()
    ranks = {base64.b64decode(token): int(rank) for token, rank in (x.split() for x in lines if x)}
    encoding: Tiktoken = tiktoken.Encoding(
        "cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=CL100K_SPECIAL
    )
    return encoding


def raw_counter(raw: Tiktoken) -> Callable[[Message], int]:
    """A message's tokens by raw encodes of its strings (and Baton's 4 for framing): what
    builds the counting row's sessions without warming anything of Baton's."""

    def count(message: Message) -> int:
        strings = block_strings(message.content)
        return 4 + sum(len(raw.encode_ordinary(s)) for s in strings if s)

    return count


def counting(
    sessions_for: Callable[[int], list[Message]], raw: Tiktoken, encoder: Encoder, reps: int
) -> dict[str, Any]:
    """Baton's counter (a fresh `Estimator` on Baton's `encoder`) against tiktoken's own
    `encode_ordinary` (the plain-text encode, no special-token scan) of the same strings,
    on text neither has seen: each rep counts a session generated for it alone, so no
    cache of Baton's, however wide, holds any of it."""
    baton_s: list[float] = []
    raw_s: list[float] = []
    baton_tokens = raw_tokens = 0
    messages: list[Message] = []
    strings: list[str] = []
    for rep in range(reps):
        messages = sessions_for(rep)
        strings = [s for m in messages for s in block_strings(m.content) if s]
        start = time.perf_counter()
        raw_tokens = sum(len(raw.encode_ordinary(s)) for s in strings)
        raw_s.append(time.perf_counter() - start)
        estimator = Estimator(encoder=encoder)
        start = time.perf_counter()
        baton_tokens = sum(estimator.count_message(m) for m in messages)
        baton_s.append(time.perf_counter() - start)
    return {
        "baton_s": baton_s,
        "raw_s": raw_s,
        "baton_tokens": baton_tokens,
        "raw_tokens": raw_tokens,
        "messages": len(messages),
        "strings": len(strings),
    }
