"""The SDK is imported off the event loop: with a key, a server's first use of the model
(the limits it asks for as a session opens, a send) imported the SDK on the loop, seconds
of imports during which no request was answered. Run in a fresh interpreter, where the
SDK is not imported yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from baton_testkit.fake_anthropic import FakeAnthropic

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys, threading
    from pathlib import Path

    imported_on = []

    class Spy:  # records the thread that first looks for the SDK
        def find_spec(self, name, path=None, target=None):
            if name == "anthropic" and not imported_on:
                imported_on.append(threading.current_thread().name)
            return None

    sys.meta_path.insert(0, Spy())

    from baton.core.usage.estimator import default_estimator
    from baton_testkit.services import service_on

    async def main() -> None:
        loop_thread = threading.current_thread().name
        estimator = default_estimator()
        estimator.wait_ready()
        service = service_on(Path(sys.argv[1]), estimator)
        try:
            sid = service.create("t", model="claude-sonnet-4-5").session_id
            service.usage(sid)  # asks for the model's limits in the background
            reply = await service.replies.send(sid, "hello")
            print(json.dumps({
                "loop": loop_thread,
                "imported_on": imported_on,
                "reply": reply.message.text(),
                "sdk": "anthropic" in sys.modules,
            }))
        finally:
            await service.close()

    asyncio.run(main())
    """
)


def test_the_sdk_is_imported_off_the_event_loop(tmp_path: Path) -> None:
    with FakeAnthropic() as fake:
        fake.reply("Hello back.")
        env = {**os.environ, "ANTHROPIC_BASE_URL": fake.base_url}
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(tmp_path / "data")],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["sdk"] and seen["reply"] == "Hello back."
    assert seen["imported_on"], "the SDK was imported before the spy could see it"
    assert seen["imported_on"][0] != seen["loop"]
