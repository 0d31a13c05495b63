"""What a loaded session holds beside its own text, measured in a process of its own: a
session of 100,000 messages loaded into about 90 MB over its 25 MB of transcript, the goal
(issue 26 item 13) being three times the transcript and 80 MB for the whole server."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

# a child process that writes a session of TURNS tool rounds, loads it under tracemalloc and
# prints, per message, what the load holds beside the distinct strings the messages hold
CHILD = textwrap.dedent(
    """
    import gc, json, sys, tracemalloc
    from pathlib import Path
    from baton.core.conversation.store import SessionStore

    data, turns = Path(sys.argv[1]), int(sys.argv[2])
    (data / "sessions").mkdir(parents=True)
    sid = "s_00000000000000aa"
    lines = [{"type": "session", "format": 1, "sessionId": sid, "title": "long",
              "model": "claude-sonnet-4-5", "systemPrompt": None,
              "createdAt": "2026-01-01T00:00:00.000Z"}]
    def message(n, role, content, **fields):
        stamp = f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z"
        return {"type": "message", "message": {"id": f"msg_{n:016x}", "role": role,
                "kind": "message", "content": content, "createdAt": stamp, "tokens": 40,
                "pinned": False, **fields}}
    for t in range(turns):
        call = f"toolu_{t:020x}"
        lines.append(message(3 * t, "user", [{"type": "text", "text": f"look at file {t}"}]))
        lines.append(message(3 * t + 1, "assistant", [
            {"type": "thinking", "thinking": f"it is in file {t}", "signature": f"sig{t}"},
            {"type": "text", "text": f"reading file {t}"},
            {"type": "tool_use", "id": call, "name": "read_file", "input": {"path": f"f{t}.py"}},
        ], usage={"input_tokens": t, "output_tokens": 9, "cache_read_input_tokens": t + 1,
                  "cache_creation_input_tokens": 3}, model="claude-sonnet-4-5",
           stopReason="tool_use"))
        lines.append(message(3 * t + 2, "user", [
            {"type": "tool_result", "tool_use_id": call, "content": f"contents of file {t}"}]))
    path = data / "sessions" / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\\n" for line in lines))

    store = SessionStore(data, lambda m: 40)
    gc.collect()
    tracemalloc.start()
    session = store.get(sid)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    strings = {}
    def walk(value):
        if isinstance(value, str):
            strings[id(value)] = sys.getsizeof(value)
        elif isinstance(value, dict):
            for item in value.values(): walk(item)
        elif isinstance(value, list):
            for item in value: walk(item)
    for m in session.messages.values():
        walk(m.__dict__)
        for block in m.content: walk(block.__dict__)
    count = len(session.messages)
    assert count == 3 * turns and not session.load_problems, session.load_problems
    print(json.dumps({"messages": count, "beside": (held - sum(strings.values())) / count}))
    """
)


def test_a_loaded_message_holds_its_blocks_and_usage_in_dicts_sharing_their_keys(
    tmp_path: Path,
) -> None:
    """Each block's and usage's fields were a dict of its own keys (184 bytes, where a
    key-sharing one holds 88-104): over a tool round (a prompt, a reply of 3 blocks and a
    usage, a tool's result) a message held 1,084 bytes beside its strings, now 928."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "data"), "5000"],
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(done.stdout)
    assert figures["messages"] == 15_000
    assert figures["beside"] < 1_000, figures
