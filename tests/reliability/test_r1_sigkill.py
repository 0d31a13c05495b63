"""R1: SIGKILL of a real `baton serve` at random points while appends, compactions, undos
and pins are in flight. Whatever the server acknowledged survives, every session loads
whole, no boundary is half applied, and the view stays within the API rules.

Each iteration starts a server on the same data directory, reads back every session,
pipelines a burst of random requests at one of them, and kills the server once a random
number of them has been answered (so the kill lands while the next ones run). What the
server managed to answer before it died counts as acknowledged. Seeded (BATON_SEED);
dozens of iterations by default, hundreds with --long or BATON_LONG=1.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from servers import Launcher, RpcError, Server, long_run, result_of, seed

from baton.core.conversation.invariants import invariant_violations
from baton.core.conversation.messages import Message
from baton.core.conversation.session import Session
from baton.core.conversation.transcript import Transcript

ITERATIONS, LONG_ITERATIONS = 40, 400
MAX_VIEW = 60  # a session whose view grows past this is left as it is; a new one starts


def count(message: Message) -> int:
    return 1 + len(json.dumps([b.model_dump() for b in message.content])) // 4


@dataclass
class Known:
    """What the server acknowledged for one session, and pins it may have applied."""

    messages: set[str] = field(default_factory=set)
    boundaries: set[str] = field(default_factory=set)
    undone: set[str] = field(default_factory=set)
    pinned: dict[str, bool] = field(default_factory=dict)  # as last seen on disk
    pin_ops: list[tuple[str, bool, bool]] = field(default_factory=list)  # (id, value, acked)


@dataclass
class Figures:
    iterations: int = 0
    kills_in_flight: int = 0
    messages: int = 0
    compactions: int = 0
    undos: int = 0
    pins: int = 0
    refused: int = 0  # answered with an error (changes nothing): a stale pivot, a busy session


def load(path: Path) -> Session:
    return Session(Transcript.open(path, writable=False), count)


def check_session(path: Path, known: Known) -> Session:
    """Everything R1 promises about one transcript after a kill."""
    session = load(path)
    where = path.name
    assert not session.damage.any, f"{where}: {session.damage.describe()}"
    assert session.transcript.report.bad_lines == [], where
    assert all(mid in session.messages for mid in session.view), where
    assert invariant_violations(session.view_messages()) == [], where
    lost = known.messages - set(session.messages)
    assert not lost, f"{where}: acknowledged messages lost: {sorted(lost)}"
    assert known.boundaries <= set(session.boundaries), f"{where}: a compaction was lost"
    assert not known.undone & set(session.active), f"{where}: an undo was lost"
    view = set(session.view)
    for boundary_id in session.active:  # every boundary applied whole
        boundary = session.boundaries[boundary_id]
        assert all(m.id in session.messages for m in boundary.new_messages), where
        assert not view & set(boundary.summarized_ids), f"{where}: {boundary_id} half applied"
    for mid in {op[0] for op in known.pin_ops}:
        if mid not in session.messages:
            continue
        allowed = {known.pinned.get(mid, False)}
        for op_id, value, acked in known.pin_ops:
            if op_id != mid:
                continue
            if acked:
                allowed = {value}
            else:
                allowed.add(value)
        assert session.messages[mid].pinned in allowed, f"{where}: pin of {mid}"
    known.pinned = {mid: m.pinned for mid, m in session.messages.items() if m.pinned}
    known.pin_ops.clear()
    return session


class Burst:
    """Random requests at one session, pipelined; remembers what each one was."""

    def __init__(self, rng: random.Random, server: Server, sid: str, view: list[dict[str, Any]]):
        self.rng = rng
        self.server = server
        self.sid = sid
        self.view_ids = [m["id"] for m in view]
        self.sent: list[tuple[int, str, Any]] = []  # (request id, kind, what)

    def text(self, words: int) -> str:
        vocabulary = ["parser", "token", "file", "error", "retry", "cache", "build", "lock"]
        return " ".join(self.rng.choice(vocabulary) for _ in range(words))

    def append(self) -> None:
        tag = f"{self.rng.getrandbits(48):012x}"
        batch: list[dict[str, Any]] = [
            {"id": f"u{tag}", "role": "user", "content": self.text(self.rng.randint(5, 40))}
        ]
        if self.rng.random() < 0.4:
            use = f"toolu_{tag}"
            call = {"type": "tool_use", "id": use, "name": "Read", "input": {"path": f"{tag}.py"}}
            answer = {"type": "tool_result", "tool_use_id": use, "content": self.text(30)}
            batch += [
                {"id": f"c{tag}", "role": "assistant", "content": [call]},
                {"id": f"r{tag}", "role": "user", "content": [answer]},
            ]
        batch.append(
            {"id": f"a{tag}", "role": "assistant", "content": self.text(self.rng.randint(5, 60))}
        )
        params = {"sessionId": self.sid, "messages": batch}
        self.sent.append((self.server.send("baton/session/append", params), "append", None))

    def compact(self) -> None:
        ids = self.view_ids
        direction = self.rng.choice(["all", "all", "up_to", "from", "range"])
        if len(ids) < 4:
            direction = "all"
        params: dict[str, Any] = {"sessionId": self.sid, "direction": direction}
        if direction != "all":
            first = self.rng.randrange(1, len(ids) - 1)
            params["pivotMessageId"] = ids[first]
            if direction == "range":
                params["endMessageId"] = ids[self.rng.randrange(first, len(ids))]
        self.sent.append((self.server.send("baton/compact", params), "compact", None))

    def uncompact(self, active: list[str]) -> None:
        params: dict[str, Any] = {"sessionId": self.sid}
        if active and self.rng.random() < 0.6:
            params["boundaryId"] = self.rng.choice(active)
        self.sent.append((self.server.send("baton/uncompact", params), "uncompact", params))

    def pin(self) -> None:
        if not self.view_ids:
            return
        mid = self.rng.choice(self.view_ids)
        value = self.rng.random() < 0.6
        params = {"sessionId": self.sid, "messageId": mid, "pinned": value}
        self.sent.append((self.server.send("baton/session/pin", params), "pin", (mid, value)))


def run_burst(burst: Burst, active: list[str], size: int) -> None:
    """Appends and pins, one compaction at a random place (a second would only be refused
    while the first runs), and an undo now and then."""
    compact_at = burst.rng.randrange(size)
    for n in range(size):
        if n == compact_at:
            burst.compact()
        elif active and burst.rng.random() < 0.15:
            burst.uncompact(active)
        elif burst.rng.random() < 0.2:
            burst.pin()
        else:
            burst.append()


def record(burst: Burst, server: Server, known: Known, figures: Figures) -> None:
    """What the answers acknowledged (unanswered requests may or may not have applied)."""
    for request_id, kind, what in burst.sent:
        answer = server.answers.get(request_id)
        if answer is not None and "error" in answer:
            figures.refused += 1
            continue
        if kind == "pin":
            known.pin_ops.append((what[0], what[1], answer is not None))
        if answer is None:
            continue
        result = result_of(answer)
        if kind == "append":
            known.messages.update(result["messageIds"])
            figures.messages += len(result["messageIds"])
        elif kind == "compact":
            known.boundaries.add(result["boundaryId"])
            figures.compactions += 1
        elif kind == "uncompact":
            figures.undos += 1
            if "boundaryId" in what:
                known.undone.add(what["boundaryId"])
        elif kind == "pin":
            figures.pins += 1


def test_sigkill_at_random_points_loses_nothing_acknowledged(
    warm: Launcher, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random(seed())
    iterations = LONG_ITERATIONS if long_run(request.config) else ITERATIONS
    data_dir = tmp_path / "data"
    sessions_dir = data_dir / "sessions"
    known: dict[str, Known] = {}
    figures = Figures()
    current: str | None = None
    started = time.monotonic()

    for _ in range(iterations):
        server = warm.spawn(data_dir)
        try:
            # the new server sees every session whole, as a fresh load does
            listed = server.request("baton/session/list")["sessions"]
            assert {s["sessionId"] for s in listed} == set(known)
            assert all(s.get("damaged") is None for s in listed), listed
            if current is None:
                current = server.request("baton/session/create", {"title": "r1"})["sessionId"]
                known[current] = Known()
            view = server.request("baton/session/get", {"sessionId": current})
            on_disk = load(sessions_dir / f"{current}.jsonl")
            assert [m["id"] for m in view["messages"]] == on_disk.view
            before = len(server.answers)  # initialize, list, create, get
            burst = Burst(rng, server, current, view["messages"])
            active = [b for b in on_disk.active if b in known[current].boundaries]
            size = rng.randint(3, 10)
            run_burst(burst, active, size)
            # the kill lands once a random number of the burst is answered, while the rest
            # runs; now and then only once all of it is (so that compactions complete)
            answered = len(burst.sent)
            if rng.random() < 0.7:
                answered = rng.randint(0, len(burst.sent))
            server.wait_for_answers(before + answered)
            if answered < len(burst.sent):
                figures.kills_in_flight += 1
            server.kill()
        except RpcError as exc:
            pytest.fail(f"unexpected error {exc.error}; log:\n{server.log_tail()}")
        record(burst, server, known[current], figures)
        figures.iterations += 1
        for sid, expectation in known.items():
            session = check_session(sessions_dir / f"{sid}.jsonl", expectation)
            if sid == current and len(session.view) > MAX_VIEW:
                current = None

    elapsed = time.monotonic() - started
    print(
        f"\nR1: {figures.iterations} SIGKILLs ({figures.kills_in_flight} with requests in "
        f"flight) over {len(known)} sessions; acknowledged {figures.messages} messages, "
        f"{figures.compactions} compactions, {figures.undos} undos, {figures.pins} pins "
        f"({figures.refused} refused requests); {elapsed:.1f} s"
    )
    assert figures.messages > 0 and figures.compactions > 0 and figures.undos > 0
