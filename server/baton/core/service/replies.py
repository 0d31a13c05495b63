"""The service's turns: whether a send can start, and the send itself, with each visible step
raised as a change and the reply's text streamed as it arrives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from baton.core.compaction.summary.summarizers import Progress
from baton.core.conversation.messages import ContentBlock
from baton.core.model_api.stream_failures import OnWait, WaitText
from baton.core.service import heavy
from baton.core.service.events import Events, Reason, ReplyText
from baton.core.service.results import Reply
from baton.core.service.runtime import Runtimes
from baton.core.turn.watch import TurnWatch

if TYPE_CHECKING:  # a turn's tools load with the first send that uses them
    from baton.core.service.service import BatonService
    from baton.core.tools.attachments import EditorAttachment
    from baton.core.tools.host import ToolHost


class Replies:
    """Front ends call it as `service.replies`; a send's changes go through the service's
    `changes`, its text out as `ReplyText` events."""

    def __init__(self, service: BatonService, runtimes: Runtimes, events: Events) -> None:
        self._service = service
        self._runtimes = runtimes
        self._events = events

    def check_can_send(self, session_id: str) -> None:
        """Fail now as `send` would before asking the model: an unknown session, one
        read-only here (said before the key: a key set for it would not make it writable),
        no key."""
        self._runtimes.of(session_id).session.refuse_if_read_only()
        self._service.models.require_key()

    def expect_tools(self, session_id: str, host: ToolHost) -> None:
        """A session whose last send offered no tools (none yet) counts those a send with
        `host` offers (the workspace tools, `tools.enabled`): its meter is then the size of
        the request its next send makes, which offers them. Once a send offered tools,
        those count (`Runtimes.adopt_tools`)."""
        runtime = self._runtimes.of(session_id)
        if runtime.tools:
            return
        server_tools = self._service.tool_setup.server_tools(runtime, host)
        offered = server_tools.definitions() if server_tools is not None else []
        runtime.tools_tokens = self._service.estimator.count_json(offered) if offered else 0

    async def send(
        self,
        session_id: str,
        content: str | list[ContentBlock] | None = None,
        tools: list[dict[str, Any]] | None = None,
        progress: Progress | None = None,
        host: ToolHost | None = None,
        attachments: Sequence[EditorAttachment] = (),
        on_wait: OnWait | None = None,
    ) -> Reply:
        """One turn; auto-compact runs inside it. Events follow each visible step: the
        prompt as soon as it is appended, any compaction as soon as it is committed (both
        before the model is asked), each reply as it is recorded (one that calls tools
        before its calls run, then their results). With a `host` and no `tools` of
        the send's own, the workspace tools are offered and run here (`tools.enabled`).
        `on_wait` is told each wait before the API is asked again (a rate limit, say), the
        reply's and the summary's of an auto-compaction the send runs first."""
        from baton.core.turn import chat

        service = self._service
        runtime = self._runtimes.of(session_id)
        runtime.session.refuse_if_read_only()  # before the key, as `check_can_send` says
        service.models.require_key()
        await service.models.client_ready()
        client = service.models.client(service.settings)
        attached = await service.tool_setup.attachments(attachments, host)
        # a prompt of megabytes (pasted) is counted off the loop: every session waits on it
        prompt = await heavy.counted_prompt(runtime.session, content)

        def step(reason: str) -> None:  # an auto-compaction told itself as it committed
            service.changes.caught_up(runtime, cast(Reason, reason))

        watch = TurnWatch(runtime.session, step)

        def delta(message_id: str, text: str) -> None:
            self._events.emit(ReplyText(session_id, message_id, text))

        def waits(text: str, fraction: float | None) -> None:  # of an auto-compaction's summary
            if isinstance(text, WaitText) and on_wait is not None:
                on_wait(text)

        server_tools = service.tool_setup.server_tools(runtime, host) if not tools else None
        offered = tools or (server_tools.definitions() if server_tools is not None else None)
        runtime.session.keep_sent_tools(list(offered or []))  # the transcript keeps them
        self._runtimes.adopt_tools(runtime)  # and counts them (again only when they change)
        context = chat.ChatContext(
            settings=service.settings,
            estimator=service.estimator,
            client=client,
            on_delta=delta,
            auto=service.upkeep.auto,
            compact_context=lambda: service.compaction.context(waits, session_id=session_id),
            progress=progress,
            on_step=watch.catch_up,
            server_tools=server_tools,
            on_wait=on_wait,
        )
        runtime.replying = True
        try:
            result = await chat.send(
                runtime.session, content=prompt, tools=tools, ctx=context, attachments=attached
            )
        finally:
            watch.catch_up()  # a failed or cancelled turn may still have kept the prompt
            runtime.replying = False
            service.changes.recalibrated()  # a prompt-too-long error's real size taught it
        service.upkeep.after_reply(self._runtimes.of(session_id))
        return Reply(result.message, service.usage(session_id), result.set_aside)
