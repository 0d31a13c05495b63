"""R6: a server whose process may open few descriptors (`ulimit -n 48`) keeps working.

Each open session holds a descriptor (its lock); the store keeps at most `MAX_OPEN` of
them, and no more than a quarter of what the process may open, so the sessions a client
goes through never use up what the server itself needs: every create, append, get and
list is answered, none with "Too many open files". A server of its own (its limit set
before it starts); which sessions are read again, and in what order, is seeded.
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
from pathlib import Path

from servers import RpcError, Server, seed

import baton

FILES = 48  # the server's `ulimit -n`: fewer than MAX_OPEN sessions and what it needs itself
SESSIONS = 60


def limited_server(tmp_path: Path) -> tuple[Server, subprocess.Popen[bytes]]:
    """`baton serve` (this checkout's) under the limit, on pipes the `Server` owns."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FILES, FILES))

    log = tmp_path / "server.log"
    here = str(Path(baton.__file__).resolve().parents[1])
    paths = [here, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "BATON_DATA_DIR": str(tmp_path / "data")}
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.pop("ANTHROPIC_API_KEY", None)
    to_server, from_client = os.pipe()
    to_client, from_server = os.pipe()
    with log.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "baton", "serve"],
            stdin=to_server,
            stdout=from_server,
            stderr=err,
            env=env,
            preexec_fn=limit,
        )
    os.close(to_server)
    os.close(from_server)
    server = Server(process.pid, from_client, to_client, log)
    server.initialize(tmp_path)
    return server, process


def test_sessions_past_a_small_descriptor_limit_keep_being_answered(tmp_path: Path) -> None:
    rng = random.Random(seed() + 6)
    server, process = limited_server(tmp_path)
    try:
        made: dict[str, list[str]] = {}
        for n in range(SESSIONS):
            sid = server.request("baton/session/create", {"title": f"s{n}"})["sessionId"]
            turn = [{"role": "user", "content": f"p{n}"}, {"role": "assistant", "content": f"a{n}"}]
            made[sid] = server.request(
                "baton/session/append", {"sessionId": sid, "messages": turn}
            )["messageIds"]
        for sid in rng.sample(sorted(made), len(made)):  # each opened again, in any order
            got = server.request("baton/session/get", {"sessionId": sid})
            assert [m["id"] for m in got["messages"]] == made[sid]
        listed = server.request("baton/session/list", {})["sessions"]
        assert len(listed) == SESSIONS
        assert all(not s["readOnly"] and "damaged" not in s for s in listed)
        held = len(os.listdir(f"/proc/{server.pid}/fd"))
        assert held <= FILES // 2, held
        server.stop()
    except RpcError as failed:
        raise AssertionError(f"{failed.error}\n{server.log_tail()}") from None
    finally:
        if server.alive:
            server.kill()
        process.wait(timeout=60)
    assert "Too many open files" not in server.log.read_text()
