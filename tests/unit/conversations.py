"""Builders for conversations in compaction tests: prompts, replies, streamed tool calls."""

from __future__ import annotations

from typing import Any

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    MessageInput,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from baton.core.conversation.session import Session
from baton.core.conversation.transcript import Transcript

PNG_1PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
    "AAAABJRU5ErkJggg=="
)

IMAGE: dict[str, Any] = {"type": "base64", "media_type": "image/png", "data": PNG_1PX}


def ten_per_block(message: Message) -> int:
    """A count to check by hand: ten tokens per content block."""
    return 10 * len(message.content)


def char_count(message: Message) -> int:
    """A cheap stand-in counter: these tests are about structure, not token figures."""
    return sum(len(block.model_dump_json()) for block in message.content) // 4 + 1


def say(mid: str, text: str = "hello") -> MessageInput:
    """A user prompt with the given id."""
    return MessageInput(id=mid, role="user", content=text)


class Convo:
    """Appends messages with readable, predictable ids (m1, m2, ...; api ids r1, r2, ...)."""

    def __init__(self, tokens: int = 100) -> None:
        self.messages: list[Message] = []
        self.tokens = tokens
        self._ids = 0
        self._apis = 0
        self._tools = 0

    def _add(self, role: str, content: list[ContentBlock], **fields: Any) -> Message:
        self._ids += 1
        fields.setdefault("tokens", self.tokens)
        message = Message(id=f"m{self._ids}", role=role, content=content, **fields)  # type: ignore[arg-type]
        self.messages.append(message)
        return message

    @property
    def ids(self) -> list[str]:
        return [m.id for m in self.messages]

    def user(self, text: str = "please do it", *, image: bool = False, **fields: Any) -> Message:
        content: list[ContentBlock] = [TextBlock(text=text)]
        if image:
            content.append(ImageBlock(source=dict(IMAGE)))
        return self._add("user", content, **fields)

    def reply(self, text: str = "done", *, thinking: str | None = None, **fields: Any) -> Message:
        self._apis += 1
        content: list[ContentBlock] = []
        if thinking is not None:
            content.append(ThinkingBlock(thinking=thinking, signature="sig"))
        content.append(TextBlock(text=text))
        fields.setdefault("api_message_id", f"r{self._apis}")
        return self._add("assistant", content, **fields)

    def tools(
        self,
        *names: str,
        interleaved: bool = True,
        errors: tuple[int, ...] = (),
        text: str | None = None,
        results: bool = True,
        inputs: list[dict[str, Any]] | None = None,
        output: str = "output",
        thinking: str | None = None,
        image_results: bool = False,
    ) -> list[Message]:
        """One streamed response calling `names` in parallel: a record per tool_use sharing
        one API id, with each result right after its call (`interleaved`) or all at the end."""
        self._apis += 1
        api = f"r{self._apis}"
        made: list[Message] = []
        pending: list[Message] = []
        if thinking is not None:
            block = ThinkingBlock(thinking=thinking, signature="sig")
            made.append(self._add("assistant", [block], api_message_id=api))
        if text is not None:
            made.append(self._add("assistant", [TextBlock(text=text)], api_message_id=api))
        for index, name in enumerate(names):
            self._tools += 1
            use_id = f"t{self._tools}"
            tool_input = (inputs or [{}] * len(names))[index]
            made.append(
                self._add(
                    "assistant",
                    [ToolUseBlock(id=use_id, name=name, input=tool_input)],
                    api_message_id=api,
                )
            )
            content: str | list[dict[str, Any]] = f"{name} {output} {use_id}"
            if image_results:
                content = [{"type": "text", "text": content}, {"type": "image", "source": IMAGE}]
            result = ToolResultBlock(
                tool_use_id=use_id, content=content, is_error=True if index in errors else None
            )
            if not results:
                continue
            if interleaved:
                made.append(self._add("user", [result]))
            else:
                pending.append(Message(id="", role="user", content=[result]))
        for waiting in pending:
            made.append(self._add("user", waiting.content))
        return made


def summary_boundary(session: Session, summarized: list[str], text: str = "summary") -> Boundary:
    """A boundary that puts one summary message in place of `summarized`, the rest kept."""
    summary = Message(role="user", kind="summary", content=[TextBlock(text=text)])
    kept = [mid for mid in session.view if mid not in summarized]
    return Boundary(
        summary_id=summary.id,
        new_messages=[summary],
        stands_for={summary.id: summarized},
        summarized_ids=summarized,
        kept_ids=kept,
        view_before=list(session.view),
        view_after=[summary.id, *kept],
    )


def reload(session: Session) -> Session:
    """The session as a fresh process would read it from disk."""
    transcript = Transcript.open(session.transcript.path, writable=False)
    try:
        return Session(transcript, session.count)
    finally:
        transcript.close()
