"""Compaction hooks: the user's own commands run before (PreCompact) and after (PostCompact) a
compaction, read from a user-level file only, never from the editor's settings.

The file is `hooks.json` in the user's config folder (`~/.config/baton/hooks.json` on Linux,
or the file BATON_HOOKS_FILE names). The editor's settings cannot say which scope a value
came from (VS Code merges a workspace's `.vscode/settings.json` over the user's), so a
cloned repository could set a command there; a file in the user's home cannot be set by a
repository. Its shape mirrors Claude Code's hooks:

    {"PreCompact":  [{"matcher": "auto", "command": "~/bin/check.sh", "timeout": 10}],
     "PostCompact": [{"command": ["notify-send", "compacted"]}]}

`matcher` is "manual", "auto" or absent (both); `command` a string (run by the shell) or an
argument list; `timeout` in seconds (default 30, at most 600). Each hook gets one JSON
object on stdin. A PreCompact hook that exits 2 (or prints {"decision": "block",
"reason": ...}) blocks the compaction with its reason (stderr); one that prints
{"instructions": "..."} adds them to the compaction's. A hook that fails, prints what is not
JSON or times out (it is killed) is reported as a warning and the compaction goes on. Of
what a hook prints, the first MB of stdout (its JSON) and 64 KB of stderr are kept; the
rest is read and dropped, so a hook that floods its output holds no more of the server's
memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import platformdirs

from baton.core.conversation.files import read_text_file
from baton.core.redaction import redact

log = logging.getLogger(__name__)

HOOKS_FILE_ENV = "BATON_HOOKS_FILE"
DEFAULT_TIMEOUT, MAX_TIMEOUT = 30.0, 600.0
BLOCK_EXIT = 2
OUTPUT_CHARS = 4_000  # of a hook's stderr or reason shown in a warning or error
HOOKS_BYTES = 1 << 20  # a hooks file past this is refused, as a settings file is
STDOUT_KEPT = 1_000_000  # bytes of a hook's stdout kept (its JSON); the rest is dropped
STDERR_KEPT = 64_000
READ_CHUNK = 65_536
Event = Literal["PreCompact", "PostCompact"]
EVENTS: tuple[Event, ...] = ("PreCompact", "PostCompact")


@dataclass(frozen=True)
class Hook:
    command: str | list[str]
    matcher: str | None = None
    timeout: float = DEFAULT_TIMEOUT

    def matches(self, trigger: str) -> bool:
        return self.matcher in (None, "", "*") or self.matcher == trigger

    def shown(self) -> str:
        return self.command if isinstance(self.command, str) else " ".join(self.command)


@dataclass(frozen=True)
class Hooks:
    """The hooks of each event, and what was wrong with the file (told as warnings)."""

    pre: list[Hook] = field(default_factory=list)
    post: list[Hook] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class HookRun:
    """What one hook did: its exit status, stdout, and a warning when it failed."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    warning: str | None = None
    stdout_cut: bool = False  # it printed more than STDOUT_KEPT


def hooks_file() -> Path:
    named = os.environ.get(HOOKS_FILE_ENV)
    if named:
        return Path(named).expanduser()
    return Path(platformdirs.user_config_dir("baton")) / "hooks.json"


def _unreadable(path: Path, why: str) -> Hooks:
    return Hooks(problems=[f"the hooks file {path} cannot be read: {why}; no hook runs"])


def load_hooks(path: Path | None = None) -> Hooks:
    """The hooks of the user's file (none when it does not exist). It is read as a settings
    file is (`read_text_file`: a regular file, a link followed, of at most HOOKS_BYTES,
    never waited on); one that cannot be read, or holds no JSON, is a problem: no hook runs."""
    path = path or hooks_file()
    if not os.path.lexists(path):
        return Hooks()
    try:
        text = read_text_file(path, "a hooks file", HOOKS_BYTES)
    except ValueError as exc:
        return _unreadable(path, str(exc))
    try:
        raw = json.loads(text)
    except ValueError as exc:
        return _unreadable(path, f"not JSON: {exc}")
    except RecursionError:
        return _unreadable(path, "not JSON: nested too deep")
    if not isinstance(raw, dict):
        return Hooks(problems=[f"the hooks file {path} must hold an object; no hook runs"])
    found: dict[str, list[Hook]] = {event: [] for event in EVENTS}
    problems: list[str] = []
    for event in EVENTS:
        entries = raw.get(event, [])
        if not isinstance(entries, list):
            problems.append(f"{path}: {event} must be a list; its hooks are left out")
            continue
        for index, entry in enumerate(entries, start=1):
            hook = _hook(entry)
            if hook is None:
                problems.append(
                    f"{path}: {event} hook {index} needs a command (a string or a list of "
                    "strings), an optional matcher and timeout; it is left out"
                )
            else:
                found[event].append(hook)
    return Hooks(found["PreCompact"], found["PostCompact"], problems)


def _hook(entry: Any) -> Hook | None:
    if not isinstance(entry, dict):
        return None
    command: str | list[str]
    raw = entry.get("command")
    if isinstance(raw, str) and raw.strip():
        command = raw
    elif isinstance(raw, list) and raw and all(isinstance(c, str) for c in raw):
        command = [str(c) for c in raw]
    else:
        return None
    matcher = entry.get("matcher")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if matcher is not None and not isinstance(matcher, str):
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return None
    return Hook(command, matcher, min(float(timeout), MAX_TIMEOUT))


async def run_hook(hook: Hook, payload: dict[str, Any]) -> HookRun:
    """Run one hook with `payload` on stdin, within its time limit (killed past it)."""
    data = json.dumps(payload).encode()
    try:
        if isinstance(hook.command, str):
            proc = await asyncio.create_subprocess_shell(
                os.path.expanduser(hook.command) if hook.command.startswith("~") else hook.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        else:
            proc = await asyncio.create_subprocess_exec(
                os.path.expanduser(hook.command[0]),
                *hook.command[1:],
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
    except OSError as exc:
        return HookRun(None, warning=f"the hook `{hook.shown()}` could not start: {exc}")
    try:
        out, out_cut, err = await asyncio.wait_for(_talk(proc, data), hook.timeout)
    except TimeoutError:
        _kill(proc)
        await proc.wait()
        return HookRun(
            None,
            warning=f"the hook `{hook.shown()}` took longer than {hook.timeout:g} s and was "
            "stopped; the compaction went on without it",
        )
    except asyncio.CancelledError:
        _kill(proc)
        raise
    stdout = out.decode("utf-8", "replace")
    stderr = redact(err.decode("utf-8", "replace")[:OUTPUT_CHARS]).strip()
    return HookRun(proc.returncode, stdout, stderr, stdout_cut=out_cut)


async def _talk(proc: asyncio.subprocess.Process, data: bytes) -> tuple[bytes, bool, bytes]:
    """`data` to the hook's stdin, and a bounded part of what it prints (`_kept`), until
    it exits: its stdout, whether that was cut, its stderr."""
    _, (out, out_cut), (err, _) = await asyncio.gather(
        _feed(proc, data), _kept(proc.stdout, STDOUT_KEPT), _kept(proc.stderr, STDERR_KEPT)
    )
    await proc.wait()
    return out, out_cut, err


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    if proc.stdin is None:
        return
    try:
        proc.stdin.write(data)
        await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # a hook that reads nothing of its input
    finally:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.close()


async def _kept(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, bool]:
    """The first `limit` bytes of `stream` read to its end (the rest dropped as it comes)
    and whether there was more."""
    kept, cut = bytearray(), False
    if stream is None:
        return b"", False
    while chunk := await stream.read(READ_CHUNK):
        room = limit - len(kept)
        if room > 0:
            kept += chunk[:room]
        cut = cut or len(chunk) > room
    return bytes(kept), cut


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def read_output(run: HookRun) -> tuple[dict[str, Any], str | None]:
    """A hook's stdout as the JSON object it may print ({} when it printed nothing), and
    why it was ignored when it printed something else (None when it was not)."""
    if run.stdout_cut:
        return {}, f"printed more than {STDOUT_KEPT:,} bytes; its output was ignored"
    text = run.stdout.strip()
    if not text:
        return {}, None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # no JSON, or nested past the parser's depth
        value = None
    if not isinstance(value, dict):
        return {}, "printed what is not a JSON object; its output was ignored"
    return value, None
