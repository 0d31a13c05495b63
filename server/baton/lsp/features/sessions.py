"""Session requests: create, list, get, delete, append, send, render, import, rename, pin,
model (and the models to choose from), usage, rewind, and what a compaction replaced.

The workspace tools (their display, the attachments a send carries) are imported by the
handlers that use them: a server that only opens, counts and compacts sessions never
loads them (bench P5, the peak RSS with a large session open)."""

from __future__ import annotations

from baton import protocol as p
from baton.core.compaction.working_set.plan_todos import latest_todos
from baton.core.conversation.listing import Summary
from baton.core.conversation.replaced import replaced_messages
from baton.core.conversation.session import Session
from baton.core.memory import collector_paused
from baton.core.service import heavy
from baton.core.usage.draft import plain
from baton.lsp.dispatch.progress import work_done
from baton.lsp.features.common import Call, Handler, session_info
from baton.lsp.features.tool_host import LspToolHost
from baton.lsp.session_document.off_loop import made_paused


def info(call: Call, session: Session | Summary) -> p.SessionInfo:
    """The session on the wire with its last known size (the list's index keeps it)."""
    return session_info(session, call.service.context_size(session))


async def create(call: Call, args: p.CreateParams) -> p.SessionInfo:
    service = call.service
    return info(
        call, service.create(args.title, args.system_prompt, args.model, args.client_context)
    )


async def list_sessions(call: Call, args: p.NoParams) -> p.SessionList:
    # a list of 10,000 sessions makes some 50,000 objects, none in a cycle, all dropped
    # once it is answered: the cyclic collector, which their number set off again and
    # again, walked them and the whole heap each time (a full walk ~0.1 s, one or two a
    # list); it is kept out until the answer is made (and out of its encoding, `encoded`)
    with collector_paused():
        return p.SessionList(sessions=[info(call, s) for s in await call.service.list_sessions()])


async def get(call: Call, args: p.PageParams) -> p.SessionView:
    from baton.core.tools.display import with_tool_calls

    def work() -> p.SessionView:
        data = call.service.render_data(args.session_id)
        start, stop = args.bounds(len(data.messages))
        # each call's line, status and diff: a page's own, its results looked up in the
        # whole view (a call's may come after the page)
        page = data.messages[start:stop] if args.paged else data.messages
        shown = with_tool_calls(page, among=data.messages)
        view = p.SessionView(
            session=info(call, data.session),
            messages=shown,
            usage=data.usage,
            offset=start if args.paged else None,
            total_messages=len(data.messages) if args.paged else None,
            todos=_todos(data.session),
        )
        return view

    call.service.data_dir.look()  # what became of the sessions folder since, told first
    view = await call.service.in_lane(args.session_id, work)  # off the event loop
    call.service.looked(args.session_id)  # another process's change it found is told
    call.ls.documents.first_look(args.session_id)
    return view


def _todos(session: Session) -> list[p.TodoEntry] | None:
    """The session's latest task list (from the messages it still stands on, as a
    compaction restores it: a rewind's abandoned turns left out), or None when the model
    never wrote one."""
    found = latest_todos(session.held_messages())
    if found is None:
        return None
    return [
        p.TodoEntry(content=t.content, status=t.status, active_form=t.active_form) for t in found
    ]


async def replaced(call: Call, args: p.ReplacedParams) -> p.ReplacedMessages:
    """A page of the messages one compaction replaced, read in the session's lane."""
    from baton.core.tools.display import with_tool_calls

    def work() -> p.ReplacedMessages:
        session = call.service.session(args.session_id)
        found = replaced_messages(session, args.boundary_id)
        start, stop = args.bounds(len(found))
        return p.ReplacedMessages(
            boundary_id=args.boundary_id,
            messages=with_tool_calls(session.with_counts(found[start:stop]), among=found),
            offset=start,
            total_messages=len(found),
        )

    return await call.service.in_lane(args.session_id, work)


async def delete(call: Call, args: p.SessionParams) -> p.Empty:
    call.service.delete(args.session_id)
    return p.Empty()


async def append(call: Call, args: p.AppendParams) -> p.AppendResult:
    # a large batch is built and counted in a worker thread first (heavy.py)
    messages = await heavy.counted_messages(call.service.session(args.session_id), args.messages)
    await call.service.repaired(args.session_id)  # a large repair: off the event loop
    done = call.service.append(args.session_id, messages, args.client_context)
    return p.AppendResult(message_ids=done.message_ids, usage=done.usage, repairs=done.repairs)


async def send(call: Call, args: p.SendParams) -> p.SendResult:
    from baton.core.tools.attachments import EditorAttachment

    service = call.service
    service.replies.check_can_send(args.session_id)  # an unknown id or no key fails before progress
    await service.repaired(args.session_id)  # a large repair: off the event loop
    async with work_done(call.ls, "Baton: reply", call.token) as reporter:
        host = LspToolHost(call.ls)
        attachments = [
            EditorAttachment(a.kind, a.path, a.text, a.range, a.language_id)
            for a in args.attachments or []
        ]
        reply = await service.replies.send(
            args.session_id,
            args.content,
            args.tools,
            reporter,
            host,
            attachments,
            on_wait=lambda text: reporter.report(text, force=True),  # shown at once
        )
    aside = reply.set_aside
    if aside is None:
        return p.SendResult(message=reply.message, usage=reply.usage)
    reason = "refusal" if aside.summarized_ids[0] == reply.message.id else "retry"
    set_aside = p.SetAside(boundary_id=aside.id, message_ids=aside.summarized_ids, reason=reason)
    return p.SendResult(message=reply.message, usage=reply.usage, set_aside=set_aside)


async def render(call: Call, args: p.PageParams) -> p.RenderResult:
    def made() -> tuple[p.RenderResult, int]:
        rendered, _, version = call.ls.documents.render(args.session_id)
        pieces = len(rendered.pieces)
        uri = p.session_uri(args.session_id)
        if not args.paged:
            whole = p.RenderResult(
                uri=uri, text=rendered.text, version=version, messages=rendered.ranges()
            )
            return whole, pieces
        start, stop = args.bounds(pieces)
        text, start_line = rendered.page(start, stop)
        result = p.RenderResult(
            uri=uri,
            text=text,
            version=version,
            messages=rendered.ranges(start, stop),
            offset=start,
            total_messages=pieces,
            start_line=start_line,
        )
        return result, pieces

    # off the event loop; the answer's ranges made with the collector out, as the rendering
    result = await call.service.in_lane(args.session_id, lambda: made_paused(made))
    call.ls.documents.first_look(args.session_id)
    return result


async def import_session(call: Call, args: p.ImportParams) -> p.ImportedSession:
    async with work_done(call.ls, "Baton: import", call.token) as reporter:
        imported = await call.service.import_file(args.path, args.title, reporter)
    notes = imported.notes
    if len(notes) > IMPORT_NOTES:  # a file of many repairs: `baton import` prints them all
        more = len(notes) - IMPORT_NOTES + 1
        notes = [*notes[: IMPORT_NOTES - 1], f"{more} more notes (`baton import` lists them all)"]
    found = info(call, imported.session)
    return p.ImportedSession(**dict(found), notes=notes)


IMPORT_NOTES = 50  # notes an import's answer carries, at most


async def rename(call: Call, args: p.RenameParams) -> p.SessionInfo:
    return info(call, call.service.rename(args.session_id, args.title))


async def models(call: Call, args: p.ModelsParams) -> p.ModelCatalog:
    return await call.service.model_catalog(args.session_id)


async def pin(call: Call, args: p.PinParams) -> p.Message:
    return call.service.pin(args.session_id, args.message_id, args.pinned)


async def usage(call: Call, args: p.UsageParams) -> p.DraftUsage:
    if args.draft is not None:
        found = await call.service.draft_usage(args.session_id, args.draft)
    else:
        found = plain(call.service.usage(args.session_id))
    call.service.looked(args.session_id)  # a look, as a get is: the reload it found is told
    return found


async def set_model(call: Call, args: p.SetModelParams) -> p.ModelSwitch:
    session, usage, warning = call.service.set_model(args.session_id, args.model)
    return p.ModelSwitch(session=info(call, session), usage=usage, warning=warning)


async def rewind(call: Call, args: p.RewindParams) -> p.RewindResult:
    boundary, usage = call.service.compaction.rewind(args.session_id, args.message_id)
    return p.RewindResult(
        boundary_id=boundary.id, rewound_message_ids=boundary.summarized_ids, usage=usage
    )


REQUESTS: dict[str, Handler] = {
    p.SESSION_CREATE: create,
    p.SESSION_LIST: list_sessions,
    p.SESSION_GET: get,
    p.SESSION_DELETE: delete,
    p.SESSION_APPEND: append,
    p.SESSION_SEND: send,
    p.SESSION_RENDER: render,
    p.SESSION_IMPORT: import_session,
    p.SESSION_PIN: pin,
    p.SESSION_SET_MODEL: set_model,
    p.SESSION_REWIND: rewind,
    p.SESSION_RENAME: rename,
    p.MODELS: models,
    p.SESSION_REPLACED: replaced,
    p.USAGE: usage,
}
