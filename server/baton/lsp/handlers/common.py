"""Small helpers the handlers share: params, session payloads, the one-argument rule."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from baton.core.errors import InvalidParams
from baton.core.messages import WireModel
from baton.core.session import Session
from baton.protocol import DamageInfo, SessionInfo, session_uri

M = TypeVar("M", bound=BaseModel)


def dump(model: WireModel) -> dict[str, Any]:
    """A wire payload: `WireModel.wire()`, the one serializer and its null policy."""
    return model.wire()


def parse(model: type[M], params: Any) -> M:
    """Params as `model`; absent params mean `{}`, and anything but an object is invalid.

    An empty array counts as `{}` too: Lua clients (Neovim's among them) encode an empty
    table as `[]`."""
    if params is None or params == []:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams(f"params must be an object, got {type(params).__name__}")
    return model.model_validate(params)


def one_argument(model: type[M], args: tuple[Any, ...]) -> M:
    """Commands take exactly one argument object."""
    if len(args) != 1:
        raise InvalidParams(f"this command takes one argument object, got {len(args)}")
    return parse(model, args[0])


def session_info(session: Session) -> SessionInfo:
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
    )


def damage_info(session: Session) -> DamageInfo | None:
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
