"""What the handlers share: the call they get, params parsing, the one-argument rule."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import PureWindowsPath
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from baton.core.conversation.listing import Summary
from baton.core.conversation.session import Session
from baton.core.conversation.wire_model import WireModel
from baton.core.errors import InvalidParams
from baton.lsp.dispatch.errors import field_problems
from baton.protocol import DamageInfo, SessionInfo, SessionSource, session_uri

if TYPE_CHECKING:
    from baton.core.service.service import BatonService
    from baton.lsp.server import BatonServer

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Call:
    """One call of a handler: the server, and the progress token the client sent, if any."""

    ls: BatonServer
    token: Any = None  # the client's workDoneToken (an int or a string), or None

    @property
    def service(self) -> BatonService:
        return self.ls.service


Handler = Callable[[Call, Any], Awaitable[WireModel]]
"""A request or command handler: (call, the validated params model) -> the result model."""
NotificationHandler = Callable[[Call, Any], None]


def parse(model: type[M], params: Any) -> M:
    """Params as `model`; absent params mean `{}`, and anything but an object is invalid.

    An empty array counts as `{}` too: Lua clients (Neovim's among them) encode an empty
    table as `[]`."""
    if params is None or params == []:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams(f"params must be an object, got {type(params).__name__}")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        problems = field_problems(exc, params)
        raise InvalidParams("invalid params: " + "; ".join(problems), problems=problems) from None


def one_argument(model: type[M], args: tuple[Any, ...]) -> M:
    """Commands take exactly one argument object."""
    if len(args) != 1:
        raise InvalidParams(f"this command takes one argument object, got {len(args)}")
    return parse(model, args[0])


def session_info(session: Session | Summary, context_tokens: int | None = None) -> SessionInfo:
    """A session on the wire; `context_tokens` is its last known size (None: unknown)."""
    return SessionInfo(
        session_id=session.session_id,
        title=session.title,
        model=session.model,
        created_at=session.created_at,
        updated_at=session.updated_at,
        uri=session_uri(session.session_id),
        compactions=session.compactions,
        read_only=session.read_only,
        damaged=damage_info(session),
        context_tokens=context_tokens,
        source=source_of(session),
    )


def source_of(session: Session | Summary) -> SessionSource | None:
    """A session imported from a Claude Code file, or compacted by the CLI from a file."""
    if isinstance(session, Summary):
        compacted = (session.header or {}).get("compactedFrom")
    else:
        compacted = session.compacted_from
    if session.imported_from:
        return SessionSource(
            kind="claude-code", file=file_name(session.imported_from), path=session.imported_from
        )
    if isinstance(compacted, str) and compacted:
        return SessionSource(kind="compacted", file=file_name(compacted), path=compacted)
    return None


def file_name(path: str) -> str:
    """The last part of `path`, whichever separator it was written with."""
    return PureWindowsPath(path).name or path


def damage_info(session: Session | Summary) -> DamageInfo | None:
    damage = session.damage
    if not damage.any:
        return None
    return DamageInfo(
        lines=damage.lines,
        lost_messages=len(damage.lost_messages),
        repaired_messages=len(damage.repaired_messages),
        header_missing=damage.header_missing,
        problems=damage.describe(),
    )


def work_done_token(params: Any) -> Any:
    """A client-initiated progress token, when the request carries one."""
    return params.get("workDoneToken") if isinstance(params, dict) else None
