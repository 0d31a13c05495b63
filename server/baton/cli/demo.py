"""`baton demo`: start the real server and drive it the way an editor would, narrating."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
import textwrap
from pathlib import Path
from typing import Any, TextIO

from baton import protocol
from baton.cli.rpc_client import RpcError, ServerEnded, StdioClient
from baton.cli.usage_report import bar, shows_blocks
from baton.core import environment
from baton.core.errors import BatonError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SUMMARY_HEAD_LINES = 14
WIDTH = 88
PROGRESS_TOKEN = "baton-demo-compaction"
# how the server says a wait before the API is asked again (PROTOCOL.md, baton/session/send)
WAIT = re.compile(r": trying again in \d+ s \(attempt \d+ of \d+\)$")


class Narrator:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.step_no = 0
        self.ascii_only = not shows_blocks(getattr(out, "encoding", None))  # the meter's bar

    def step(self, title: str) -> None:
        self.step_no += 1
        self.out.write(f"\n== {self.step_no}. {title}\n")

    def say(self, text: str = "", indent: int = 3) -> None:
        for line in text.splitlines() or [""]:
            self.out.write(" " * indent + line + "\n")
        self.out.flush()


def meter(usage: dict[str, Any], ascii_only: bool = False) -> str:
    """The meter as a bar (of "#" with `ascii_only`), then in the server's own words (its
    headline): the share it says (past 100% when the context is, where `percentUsed`
    stops), auto-compact as it stands."""
    used, window = usage["usedTokens"], usage["contextWindow"]
    drawn = bar(used, window, 30, ascii_only=ascii_only)
    return f"[{drawn:<30}] {usage['text']['headline']} - state {usage['state']}"


def pick_pivot(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A user prompt about two thirds into the conversation: enough to summarize, and a
    good recent part to keep."""
    prompts = [
        (i, m)
        for i, m in enumerate(messages)
        if m["role"] == "user"
        and m["kind"] == "message"
        and any(b.get("type") == "text" for b in m["content"])
    ]
    target = len(messages) * 2 // 3
    return min(prompts, key=lambda pair: abs(pair[0] - target))[1]


def first_text(message: dict[str, Any], limit: int = 70) -> str:
    for block in message["content"]:
        if block.get("type") == "text":
            text = " ".join(block["text"].split())
            return text if len(text) <= limit else text[: limit - 1] + "…"
    return f"[{message['content'][0].get('type', '?')}]"


async def run_demo(out: TextIO) -> int:
    say = Narrator(out)
    with tempfile.TemporaryDirectory(prefix="baton-demo-") as scratch:
        root = Path(scratch)
        workspace = root / "workspace"
        shutil.copytree(EXAMPLES / "workspace", workspace)
        env = {**os.environ, "BATON_DATA_DIR": str(root / "data")}
        # read as the server reads it: white space alone is no key
        keyed = environment.api_key(os.environ.get("ANTHROPIC_API_KEY")) is not None
        client = StdioClient(env=env)
        say.step("Start the server: `baton serve` over stdio, as an editor would")
        await client.start()
        try:
            return await _walkthrough(client, say, workspace, keyed)
        finally:
            await client.close()


async def _walkthrough(client: StdioClient, say: Narrator, workspace: Path, keyed: bool) -> int:
    init = await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": workspace.as_uri(),
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": "workspace"}],
            "capabilities": {
                # an editor's: code actions as objects (a title, a kind, a command)
                "textDocument": {
                    "codeAction": {
                        "codeActionLiteralSupport": {
                            "codeActionKind": {"valueSet": ["", "source", "refactor.rewrite"]}
                        }
                    }
                },
                "workspace": {},
            },
            "initializationOptions": {},
        },
    )
    await client.notify("initialized", {})
    info = init.get("serverInfo") or {}
    say.say(f"initialized {info.get('name', 'baton')} {info.get('version', '')}".rstrip())
    say.say(
        "summarizer: "
        + ("the model (ANTHROPIC_API_KEY is set)" if keyed else "offline extractive (no API key)")
    )

    say.step("Open two files in the editor (didOpen) and focus one (baton/activeEditor)")
    for name in ("utils.py", "app.py"):
        path = workspace / name
        await client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": path.as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": path.read_text(encoding="utf-8"),
                }
            },
        )
        say.say(f"opened {name} ({path.stat().st_size:,} bytes)")
    await client.notify(protocol.ACTIVE_EDITOR, {"uri": (workspace / "app.py").as_uri()})

    say.step("Load the bundled example conversation (baton/session/import)")
    mark = client.mark()
    session = await client.request(
        protocol.SESSION_IMPORT,
        {"path": str(EXAMPLES / "session.jsonl"), "format": "claude-code"},
    )
    sid, uri = session["sessionId"], session["uri"]
    got = await client.request(protocol.SESSION_GET, {"sessionId": sid})
    messages = got["messages"]
    say.say(f"session {sid}: {len(messages)} messages, document {uri}")

    say.step("The context meter (baton/usage) and the published diagnostics")
    say.say(meter(got["usage"], say.ascii_only))
    diagnostics = await client.wait_for(
        "textDocument/publishDiagnostics", lambda p: p["uri"] == uri, after=mark
    )
    for diag in diagnostics["diagnostics"][:6]:
        line = diag["range"]["start"]["line"]
        say.say(f"line {line:>4}  {diag.get('code', ''):<20} {diag['message']}")
    if len(diagnostics["diagnostics"]) > 6:
        say.say(f"... and {len(diagnostics['diagnostics']) - 6} more")

    say.step("Right-click a message: the code actions it offers (textDocument/codeAction)")
    rendered = await client.request(protocol.SESSION_RENDER, {"sessionId": sid})
    ranges = {m["messageId"]: m["range"] for m in rendered["messages"]}
    pivot = pick_pivot(messages)
    position = messages.index(pivot) + 1
    say.say(f'message {position} of {len(messages)}: "{first_text(pivot)}"')
    actions = await client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": ranges[pivot["id"]],
            "context": {"diagnostics": []},
        },
    )
    for action in actions:
        say.say(f"- {action['title']:<28} [{action.get('kind', '')}]")
    up_to = next(a for a in actions if a["title"] == "Compact up to here")

    say.step('Run "Compact up to here" (workspace/executeCommand)')
    command = up_to["command"]
    mark = client.mark()
    client.on_notification = lambda method, params: _waits(say, method, params)
    try:
        result = await client.request(
            "workspace/executeCommand",
            {
                "command": command["command"],
                "arguments": command.get("arguments", []),
                "workDoneToken": PROGRESS_TOKEN,
            },
        )
    finally:
        client.on_notification = None
    _report_compaction(say, result)
    usage = await client.wait_for(
        protocol.USAGE_CHANGED, lambda p: p["sessionId"] == sid, after=mark
    )
    say.say("meter now: " + meter(usage["usage"], say.ascii_only))

    say.step("Undo it (baton.uncompact): the original messages come back, nothing was lost")
    mark = client.mark()
    await client.request(
        "workspace/executeCommand",
        {"command": protocol.CMD_UNCOMPACT, "arguments": [{"sessionId": sid}]},
    )
    after = await client.request(protocol.SESSION_GET, {"sessionId": sid})
    same = [m["id"] for m in after["messages"]] == [m["id"] for m in messages]
    say.say(f"{len(after['messages'])} messages in the view; identical to before: {same}")
    say.say("meter now: " + meter(after["usage"], say.ascii_only))
    say.out.write(
        "\nDone. The server was started and stopped by this demo; its data was temporary.\n"
    )
    return 0 if same else 1


def _waits(say: Narrator, method: str, params: Any) -> None:
    """A wait of the compaction's summary before the API is asked again, said as it begins
    ("Rate limited by the API: trying again in 30 s (attempt 2 of 3)"): the demo would
    otherwise sit silent for it."""
    if method != "$/progress" or not isinstance(params, dict):
        return
    value = params.get("value")
    if params.get("token") != PROGRESS_TOKEN or not isinstance(value, dict):
        return
    message = value.get("message")
    if value.get("kind") == "report" and isinstance(message, str) and WAIT.search(message):
        say.say(message)


def _report_compaction(say: Narrator, result: dict[str, Any]) -> None:
    say.say(
        f"{result['summarizer']} summarizer: {len(result['summarizedMessageIds'])} messages "
        f"summarized, {len(result['keptMessageIds'])} kept verbatim"
    )
    say.say(f"tokens: {result['preTokens']:,} before -> {result['postTokens']:,} after")
    if result.get("adjustedPivot"):
        say.say(f"pivot adjusted: {result['adjustedPivot']['why']}")
    retention = result.get("retention")
    if retention:
        figures = ", ".join(
            f"{name} {retention[name]['kept']}/{retention[name]['total']}"
            for name in ("prompts", "paths", "errors")
        )
        say.say(f"what the summary itself kept: {figures} (a fact ledger carries what it missed)")
    say.say("restored files:")
    for restored in result.get("restoredFiles", []):
        cut = ", cut" if restored["truncated"] else ""
        say.say(f"  {Path(restored['uri']).name:<16} {restored['tokens']:>6,} tokens{cut}")
    if not result.get("restoredFiles"):
        say.say("  (none)")
    say.say("summary head:")
    lines = (result.get("summary") or "").splitlines()[:SUMMARY_HEAD_LINES]
    for line in lines:
        say.say(textwrap.shorten(line, WIDTH, placeholder=" …") if line.strip() else "", 5)


def main(out: TextIO) -> int:
    """The demo's run; a request the server refused or never answered is one line."""
    try:
        return asyncio.run(run_demo(out))
    except RpcError as exc:
        hint = " (unset ANTHROPIC_API_KEY to run it offline)" if "API" in str(exc) else ""
        raise BatonError(f"the demo stopped: {exc}{hint}") from None
    except TimeoutError:
        raise BatonError("the demo stopped: the server did not answer in time") from None
    except ServerEnded as exc:
        raise BatonError(f"the demo stopped: {exc} before it answered") from None
