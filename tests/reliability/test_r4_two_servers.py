"""R4: two servers on one data directory, appends racing a compaction.

The first server to open a session writes it; the second gets a read-only view that
follows the writer, and every change it asks for answers `session_locked` and writes
nothing. While the writer compacts, appends pipelined behind the compaction land after
its view; nothing either server acknowledged is lost. When the writer goes (a clean exit,
or SIGKILL mid-compaction), the second server becomes the writer. Seeded (BATON_SEED).
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
from servers import Launcher, RpcError, Server, long_run, result_of, seed
from test_r1_sigkill import load

from baton.core.conversation.invariants import invariant_violations

ROUNDS, LONG_ROUNDS = 6, 60


def turn(rng: random.Random, tag: str) -> list[dict[str, Any]]:
    words = ["lock", "writer", "reader", "boundary", "append", "view", "race"]
    text = " ".join(rng.choice(words) for _ in range(rng.randint(10, 50)))
    return [
        {"id": f"u{tag}", "role": "user", "content": text},
        {"id": f"a{tag}", "role": "assistant", "content": text[::-1]},
    ]


def locked(server: Server, method: str, params: dict[str, Any]) -> None:
    with pytest.raises(RpcError) as caught:
        server.request(method, params)
    assert caught.value.code == "session_locked", caught.value.error


def test_a_second_server_reads_and_is_refused_while_appends_race_a_compaction(
    warm: Launcher, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random(seed() + 4)
    rounds = LONG_ROUNDS if long_run(request.config) else ROUNDS
    data_dir = tmp_path / "data"
    started = time.monotonic()
    appended = compactions = refusals = 0

    for round_number in range(rounds):
        writer = warm.spawn(data_dir)
        reader = warm.spawn(data_dir)
        sid = writer.request("baton/session/create", {"title": f"r4 {round_number}"})["sessionId"]
        path = data_dir / "sessions" / f"{sid}.jsonl"
        acked: set[str] = set()
        for n in range(rng.randint(4, 8)):
            acked |= set(
                writer.request(
                    "baton/session/append",
                    {"sessionId": sid, "messages": turn(rng, f"{round_number}x{n}")},
                )["messageIds"]
            )

        seen = reader.request("baton/session/get", {"sessionId": sid})
        assert seen["session"]["readOnly"] is True
        before = path.read_bytes()
        locked(reader, "baton/session/append", {"sessionId": sid, "messages": turn(rng, "no")})
        locked(reader, "baton/compact", {"sessionId": sid})
        assert path.read_bytes() == before  # the refused requests wrote nothing

        # the writer compacts with appends pipelined behind it; the reader asks meanwhile
        compact_id = writer.send("baton/compact", {"sessionId": sid})
        racing = [
            writer.send(
                "baton/session/append",
                {"sessionId": sid, "messages": turn(rng, f"{round_number}r{n}")},
            )
            for n in range(rng.randint(2, 5))
        ]
        view = reader.request("baton/session/get", {"sessionId": sid})
        ids = [m["id"] for m in view["messages"]]
        assert len(ids) == len(set(ids)) and view["session"]["readOnly"] is True
        locked(reader, "baton/uncompact", {"sessionId": sid})
        locked(reader, "baton/session/pin", {"sessionId": sid, "messageId": ids[0], "pinned": True})
        refusals += 4

        kill = rng.random() < 0.5
        if kill:  # SIGKILL while the compaction and the appends may still be running
            writer.wait_for_answers(len(writer.answers) + rng.randint(0, len(racing)))
            writer.kill()
        else:
            for request_id in [compact_id, *racing]:
                writer.wait(request_id)
        for request_id in racing:
            if request_id in writer.answers:
                acked |= set(result_of(writer.answers[request_id])["messageIds"])
        committed = compact_id in writer.answers
        if committed:
            boundary_id = result_of(writer.answers[compact_id])["boundaryId"]
            compactions += 1

        on_disk = load(path)
        assert acked <= set(on_disk.messages), "an acknowledged message was lost"
        assert invariant_violations(on_disk.view_messages()) == []
        assert not on_disk.damage.any
        if committed:
            assert boundary_id in on_disk.active
        # every acknowledged message is in the view or summarized by a compaction in force:
        # the appends that raced it follow its view, none vanished from the conversation
        summarized = {m for b in on_disk.active for m in on_disk.boundaries[b].summarized_ids}
        assert acked <= set(on_disk.view) | summarized
        # the reader's view follows the writer's file
        view = reader.request("baton/session/get", {"sessionId": sid})
        assert [m["id"] for m in view["messages"]] == on_disk.view

        writer.stop()  # (already gone when it was killed)
        # the writer let go: the reader becomes the writer
        result = reader.request(
            "baton/session/append", {"sessionId": sid, "messages": turn(rng, f"{round_number}z")}
        )
        acked |= set(result["messageIds"])
        assert (reader.request("baton/session/get", {"sessionId": sid}))["session"][
            "readOnly"
        ] is False
        reader.stop()
        final = load(path)
        assert acked <= set(final.messages)
        assert invariant_violations(final.view_messages()) == []
        appended += len(acked)

    elapsed = time.monotonic() - started
    print(
        f"\nR4: {rounds} rounds of two servers on one data dir; {appended} acknowledged "
        f"messages, {compactions} compactions raced by appends, {refusals} session_locked "
        f"refusals; {elapsed:.1f} s"
    )
    assert compactions > 0
