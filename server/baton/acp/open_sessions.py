"""The sessions an ACP client holds open: each one's `Live` record, tool host and folder.

Every open session's cwd is a workspace folder of the service; a session that opens is
told its commands and its meter.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AgentMessageChunk,
    AvailableCommandsUpdate,
    SessionInfoUpdate,
    TextContentBlock,
)

from baton.acp import turns
from baton.acp.commands import available_commands
from baton.acp.compaction_report import CompactionReport
from baton.acp.errors import invalid
from baton.acp.folders import Folders
from baton.acp.meter import usage_update
from baton.acp.slash_commands import say
from baton.acp.tool_calls import CallReport
from baton.acp.tool_host import PERMISSION_WAIT, AcpToolHost
from baton.core import environment
from baton.core.conversation.files import kind_of
from baton.core.conversation.messages import new_id
from baton.core.conversation.session_header import DEFAULT_TITLE
from baton.core.workspace.editor_files import path_problem, path_to_uri

if TYPE_CHECKING:
    from baton.acp.agent import BatonAgent
    from baton.core.conversation.session import Session

log = logging.getLogger(__name__)

WAIT_ENV = "BATON_ACP_PERMISSION_WAIT"  # seconds a permission request waits (default 300)


def permission_wait() -> float:
    """How long a permission request waits for the user: `BATON_ACP_PERMISSION_WAIT`
    seconds, in (0, a day]."""
    return environment.seconds(WAIT_ENV, PERMISSION_WAIT)


@dataclass
class Live:
    """A session this client opened (new, load or resume) and has not closed."""

    session_id: str
    cwd: str
    host: AcpToolHost
    turn: Any = None  # the asyncio task of the running prompt turn, if any
    untitled: bool = False  # made here with no title: its first prompt names it
    # the title the running turn's prompt gives it once stored, and the messages before
    naming: tuple[str, frozenset[str]] | None = None
    thought: set[str] = field(default_factory=set)  # replies whose thinking the turn told
    # the text of the turn's replies streamed so far (message id -> pieces): a load while
    # one streams replays what it said, which is stored only once the reply ends
    streamed: dict[str, list[str]] = field(default_factory=dict)
    # the auto-compaction told in progress, until its end is told
    auto_compaction: CompactionReport | None = None
    compaction: CompactionReport | None = None  # a command's, while it runs
    # a load's replay under way: set by session/cancel to stop it; a prompt waits its end
    replay: Replay | None = None
    # the length of the view the client holds and its last message's id: what another
    # process added after it is told once this process reads the session again
    shown: tuple[int, str] = (0, "")


@dataclass
class Replay:
    """A load's replay of the view, given the loop back between slices of it."""

    stopped: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)


def kept_cwds(agent: BatonAgent) -> Folders:
    return Folders(agent.service.settings.resolved_data_dir())


def check_cwd(cwd: str) -> None:
    """`invalid_params` unless `cwd` can be a folder: an absolute path with no NUL byte (the
    tools would drop it and the session would have no folder, its system prompt naming it),
    outside a version control's own files (`.git`: the tools would read them), and a
    folder that exists (a load elsewhere would move the session there for good)."""
    if not Path(cwd).is_absolute():
        raise invalid(f"cwd must be an absolute path, got {cwd!r}")
    if "\x00" in cwd:
        raise invalid(f"cwd {cwd!r} names no folder: it holds a NUL byte")
    # a link to such a folder too: the tools work in the folder the link resolves to
    problem = path_problem(Path(cwd)) or path_problem(Path(os.path.realpath(cwd)))
    if problem is not None:
        raise invalid(f"cwd {cwd!r} cannot be a session's folder: {problem}")
    try:  # a folder (a link to one too): the session's tools work in it, its prompt names it
        mode = os.stat(cwd).st_mode
    except OSError as exc:
        raise invalid(f"cwd {cwd!r} names no folder: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        what = "a file" if stat.S_ISREG(mode) else kind_of(mode)
        raise invalid(f"cwd {cwd!r} names no folder: it is {what}")


def same_folder(one: str, other: str) -> bool:
    """Whether two cwds name one folder: spelled alike once normalised (`/w/app/`,
    `/w/./app`), or the same folder once links are followed."""
    if os.path.normpath(one) == os.path.normpath(other):
        return True
    try:
        return os.path.realpath(one) == os.path.realpath(other)
    except (OSError, ValueError):  # a loop of links, a NUL byte
        return False


def attach(agent: BatonAgent, session_id: str, cwd: str) -> Live:
    check_cwd(cwd)
    live = agent.live.get(session_id)
    running = live is not None and live.turn is not None and not live.turn.done()
    if running and live is not None and not same_folder(live.cwd, cwd):
        # its tools would go on in another project, by the paths found in this one
        raise invalid(
            f"a turn is running in session {session_id} in {live.cwd!r}: open it in "
            f"{cwd!r} once the turn ends (session/cancel ends it)"
        )
    if live is None:
        host = AcpToolHost(
            agent.conn,
            session_id,
            can_read=agent.can_read,
            can_write=agent.can_write,
            tell=lambda text: say(agent, session_id, text),
            wait=permission_wait(),
            flush=lambda: agent.out.drain(),
            report=CallReport(
                lambda update: agent.out.update(session_id, update),
                before=lambda use_id: turns.thoughts_before_call(agent, session_id, use_id),
            ),
        )
        live = agent.live[session_id] = Live(
            session_id, cwd, host, untitled=_untouched(agent, session_id)
        )
    live.cwd = cwd
    live.host.folders = [Path(cwd)]
    live.shown = last_shown(agent.service.session(session_id))  # a load replays up to it
    # the meter counts the tools its prompts offer before the first of them offers them
    agent.service.replies.expect_tools(session_id, live.host)
    # its tools and compactions work in its own folder only, not another open session's
    # project; a default system prompt made for another folder is made again for this one
    if agent.service.move(session_id, [Path(cwd)]):
        kept_cwds(agent).set(session_id, cwd)  # else its prompt still names the folder kept
    open_folders(agent)
    return live


def last_shown(session: Session) -> tuple[int, str]:
    """`Live.shown` once the client holds the session's view as it is."""
    view = session.view
    return len(view), view[-1] if view else ""


def _untouched(agent: BatonAgent, session_id: str) -> bool:
    """Whether the session was made with no title and never prompted (before a restart of
    the agent, or before the client closed it): its first prompt names it."""
    session = agent.service.session(session_id)
    return not session.messages and session.title == DEFAULT_TITLE


def open_folders(agent: BatonAgent, *extra: str) -> None:
    """The service's workspace folders: every open session's cwd (and `extra`)."""
    folders = {path_to_uri(v.cwd) for v in agent.live.values()} | {path_to_uri(c) for c in extra}
    agent.service.set_workspace_folders(sorted(folders))


def live_session(agent: BatonAgent, session_id: str) -> Live:
    live = agent.live.get(session_id)
    if live is None:
        agent.service.session(session_id)  # an unknown id: session_not_found
        raise invalid(f"session {session_id} is not open here: load or resume it first")
    return live


def greet(agent: BatonAgent, session_id: str, mcp_servers: Any = None) -> None:
    """The session's commands and meter, queued after the answer that names it, its title
    and time when a list told them from its header alone, and a word that the MCP servers
    the client gave are not used."""
    commands = AvailableCommandsUpdate(
        session_update="available_commands_update", available_commands=available_commands()
    )
    agent.out.later(session_id, commands)
    session = agent.service.session(session_id)
    told = agent.told_partly.pop(session_id, None)
    if told is not None and told != (session.title or None, session.updated_at or None):
        info = SessionInfoUpdate(
            session_update="session_info_update",
            title=session.title or None,
            updated_at=session.updated_at or None,
        )
        agent.out.later(session_id, info)
    agent.out.later(session_id, usage_update(agent.service.usage(session_id), session))
    note = unused_mcp(mcp_servers)
    if note is not None:
        log.warning("session %s: %s", session_id, note)
        text = TextContentBlock(type="text", text=note)
        chunk = AgentMessageChunk(
            session_update="agent_message_chunk", content=text, message_id=new_id()
        )
        agent.out.later(session_id, chunk)


MCP_NAMES = 10  # of the servers given, named in the note; the rest counted
MCP_NAME_CHARS = 60


def unused_mcp(servers: Any) -> str | None:
    """What to tell the user of the MCP servers a client gave with a session: Baton
    connects to none (its `mcpCapabilities` offer no transport), and a session that
    quietly went without them would leave the user counting on their tools."""
    if not servers:
        return None
    names = []
    for server in servers:
        name = " ".join(str(getattr(server, "name", "") or "").split())  # one line
        kind = getattr(server, "type", None) or "stdio"
        cut = name if len(name) <= MCP_NAME_CHARS else f"{name[: MCP_NAME_CHARS - 1]}…"
        names.append(f"{cut or 'unnamed'} ({kind})")
    shown = ", ".join(names[:MCP_NAMES])
    if len(names) > MCP_NAMES:
        shown += f" and {len(names) - MCP_NAMES} more"
    noun = "server" if len(names) == 1 else "servers"
    return (
        f"MCP {noun} not used: {shown}. Baton connects to no MCP server; this session's "
        "tools are its own workspace tools."
    )
