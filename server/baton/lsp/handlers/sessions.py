"""Session requests: create, list, get, delete, append, send, render, import, pin, usage."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton import protocol as p
from baton.lsp.errors import guarded
from baton.lsp.handlers.common import dump, parse, session_info, work_done_token
from baton.lsp.progress import work_done

if TYPE_CHECKING:
    from baton.lsp.server import BatonServer

Json = dict[str, Any]


def register(ls: BatonServer) -> None:
    service = ls.service

    @ls.feature(p.SESSION_CREATE)
    @guarded
    async def create(params: Any) -> Json:
        args = parse(p.CreateParams, params)
        return dump(session_info(service.create(args.title, args.system_prompt, args.model)))

    @ls.feature(p.SESSION_LIST)
    @guarded
    async def list_sessions(params: Any) -> Json:
        parse(p.NoParams, params)
        return dump(p.SessionList(sessions=[session_info(s) for s in service.list_sessions()]))

    @ls.feature(p.SESSION_GET)
    @guarded
    async def get(params: Any) -> Json:
        args = parse(p.SessionParams, params)
        data = service.render_data(args.session_id)
        ls.documents.first_look(args.session_id, data.session.damage.any)
        return dump(
            p.SessionView(
                session=session_info(data.session), messages=data.messages, usage=data.usage
            )
        )

    @ls.feature(p.SESSION_DELETE)
    @guarded
    async def delete(params: Any) -> Json:
        service.delete(parse(p.SessionParams, params).session_id)
        return {}

    @ls.feature(p.SESSION_APPEND)
    @guarded
    async def append(params: Any) -> Json:
        args = parse(p.AppendParams, params)
        done = service.append(args.session_id, args.messages)
        return dump(
            p.AppendResult(message_ids=done.message_ids, usage=done.usage, repairs=done.repairs)
        )

    @ls.feature(p.SESSION_SEND)
    @guarded
    async def send(params: Any) -> Json:
        args = parse(p.SendParams, params)
        service.session(args.session_id)  # unknown ids and a missing key fail before any
        service.models.client(service.settings)  # progress shows
        ls.documents.streaming.add(args.session_id)
        try:
            async with work_done(ls, "Baton: reply", work_done_token(params)) as reporter:
                reply = await service.send(args.session_id, args.content, args.tools, reporter)
        finally:
            ls.documents.streaming.discard(args.session_id)
        return dump(p.SendResult(message=reply.message, usage=reply.usage))

    @ls.feature(p.SESSION_RENDER)
    @guarded
    async def render(params: Any) -> Json:
        args = parse(p.SessionParams, params)
        rendered, data, version = ls.documents.render(args.session_id)
        ls.documents.first_look(args.session_id, data.session.damage.any)
        return dump(
            p.RenderResult(
                uri=p.session_uri(args.session_id),
                text=rendered.text,
                version=version,
                messages=rendered.ranges(),
            )
        )

    @ls.feature(p.SESSION_IMPORT)
    @guarded
    async def import_session(params: Any) -> Json:
        args = parse(p.ImportParams, params)
        return dump(session_info(service.import_file(args.path, args.title)))

    @ls.feature(p.SESSION_PIN)
    @guarded
    async def pin(params: Any) -> Json:
        args = parse(p.PinParams, params)
        return dump(service.pin(args.session_id, args.message_id, args.pinned))

    @ls.feature(p.USAGE)
    @guarded
    async def usage(params: Any) -> Json:
        return dump(service.usage(parse(p.SessionParams, params).session_id))
