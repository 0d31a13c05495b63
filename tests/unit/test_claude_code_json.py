"""What a Claude Code line reads as: what `json.loads` makes of it (the same values, the
same lines refused), whichever parser reads it, and a lone surrogate in it refused by the
import wherever it is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers import claude_code_read
from baton.core.importers.claude_code import import_with_report
from baton.core.importers.claude_code_json import loads, refuse_constant, too_deep
from baton.core.importers.read_fingerprint import file_fingerprint

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=25,
)
# what a mutation may put into a line: JSON's own marks, escapes, numbers' parts, UTF-8's
# lead and continuation bytes, control characters
NOISE = st.sampled_from(
    [
        *(b"{", b"}", b"[", b"]", b'"', b",", b":", b"\\", b"\\u", b"d8", b"DC", b"e", b"E+"),
        *(b"-", b".", b"0", b"1e400", b"NaN", b"Infinity", b" ", b"\t", b"\n", b"\x00", b"\x1f"),
        *(b"\xc3", b"\xa9", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\xff", b"true", b"nul"),
    ]
)


def stdlib(line: bytes) -> tuple[str, Any]:
    """What `json.loads` makes of the line, with the import's own rules (NaN and Infinity
    refused, and nesting past `MAX_DEPTH`)."""
    try:
        value = json.loads(line, parse_constant=refuse_constant)
    except (ValueError, RecursionError):
        return "refused", None
    return ("refused", None) if too_deep(line, value) else ("value", value)


def read(line: bytes) -> tuple[str, Any]:
    try:
        return "value", loads(line)[0]
    except ValueError:
        return "refused", None


def same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Equal, and of the same types throughout (1 is not 1.0, -0.0 is not 0.0)."""
    return a[0] == b[0] and repr(a[1]) == repr(b[1])


@pytest.mark.parametrize(
    "line",
    [
        *(b'{"a":NaN}', b'{"a":Infinity}', b'{"a":[-Infinity]}', b'{"a":1e400,"b":-1e400}'),
        *(b'{"a":1,"b":2,"a":3}', b'{"a":-0.0,"b":-0,"c":1E5,"d":4.9e-324}', b'{"a":1} x'),
        *(b'{"a":' + b"9" * 4300 + b"}", b'{"a":' + b"9" * 4301 + b"}", b'{"a":"x\ty"}'),
        *(b'{"a":[' + b"[" * 150 + b"]" * 150 + b"]}", b'{"a":' + b"[" * 300 + b"]" * 300 + b"}"),
        *(b'\xef\xbb\xbf{"a":1}', b'{"a":"\xff"}', b'{"a":"\\ud800"}', b'{"a":"\xed\xa0\x80"}'),
        *(b'{"a":"\\ud83d\\ude00\\u00e9\\/"}', b'{"a":01}', b'{"a":1.}', b"[1,2,]", b"{}\x00"),
    ],
)
def test_a_line_json_reads_oddly_reads_as_it_does(line: bytes) -> None:
    assert same(read(line), stdlib(line))


@settings(max_examples=200, deadline=None)
@given(VALUES.map(lambda v: {"message": v}), st.booleans())
def test_a_line_reads_as_json_loads_reads_it(record: dict[str, Any], ascii_only: bool) -> None:
    line = json.dumps(record, ensure_ascii=ascii_only).encode("utf-8") + b"\n"
    assert same(read(line), stdlib(line))
    assert loads(line)[1] is False  # no lone surrogate to look for


@settings(max_examples=600, deadline=None)
@given(
    VALUES.map(lambda v: json.dumps({"message": v}).encode("utf-8")),
    st.lists(st.tuples(st.integers(min_value=0), NOISE, st.integers(0, 2)), max_size=3),
)
def test_a_damaged_line_is_refused_or_read_as_json_loads_does(
    line: bytes, changes: list[tuple[int, bytes, int]]
) -> None:
    for at, noise, cut in changes:
        at %= len(line) + 1
        line = line[:at] + noise + line[at + cut :]
    assert same(read(line), stdlib(line))


@pytest.mark.parametrize(
    "text",
    [b'"\\ud800"', b'"a\\uDFFF"', b'"\xed\xa0\x80"', b'"\\udc00\\ud800"', b'"\xed\xb2\x80b"'],
)
def test_a_lone_surrogate_escaped_or_as_its_bytes_is_refused_by_the_import(
    tmp_path: Path, plain_store: SessionStore, text: bytes
) -> None:
    prompt = b'{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}\n'
    reply = b'{"type":"assistant","uuid":"a1","message":{"role":"assistant","content":%s}}\n'
    path = tmp_path / "surrogate.jsonl"
    path.write_bytes(prompt + reply % text)

    with pytest.raises(InvalidParams, match=r"lone surrogate.* at record 2"):
        import_with_report(path, plain_store)


def test_a_surrogate_pair_escaped_is_one_character(
    tmp_path: Path, plain_store: SessionStore
) -> None:
    prompt = b'{"type":"user","uuid":"u1","message":{"role":"user","content":"\\ud83d\\ude00"}}\n'
    path = tmp_path / "pair.jsonl"
    path.write_bytes(prompt)

    session, report = import_with_report(path, plain_store)

    assert report.broken_lines == []
    assert session.view_messages()[0].text() == "\U0001f600"


@pytest.mark.parametrize("buffer", [64, 4096, claude_code_read.READ_BUFFER])
def test_lines_across_the_read_buffer_read_as_json_reads_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, buffer: int
) -> None:
    """Lines shorter and longer than the buffer the file is read through, and lines that
    cross its edges, each read whole; what was taken is the file, fingerprint and all."""
    monkeypatch.setattr(claude_code_read, "READ_BUFFER", buffer)
    records = [
        {"type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": "x" * size}}
        for n, size in enumerate([10, 50, 63, 64, 65, 200, 4095, 4096, 5000, 70_000, 3, 0])
    ]
    text = b"".join(json.dumps(r).encode() + b"\n" for r in records) + b"  \n"
    path = tmp_path / "lines.jsonl"
    path.write_bytes(text)
    reading = claude_code_read.Reading()

    read = [(record, at) for record, at in claude_code_read.records(path, reading)]

    assert [record for record, _ in read] == records
    assert [at for _, at in read] == [len(line) for line in accumulate_lines(text)][:-1]
    assert reading.broken == [] and reading.taken == len(text)
    assert reading.edges.fingerprint() == file_fingerprint(path, len(text))


def accumulate_lines(text: bytes) -> list[bytes]:
    """The file up to the end of each of its lines."""
    ends = [n + 1 for n, byte in enumerate(text) if byte == ord("\n")]
    return [text[:end] for end in ends]
