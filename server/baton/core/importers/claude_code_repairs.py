"""The imported view of a Claude Code file as it grows, and the repairs that keep it valid."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from baton.core.conversation.boundary import Boundary
from baton.core.conversation.messages import (
    ContentBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    now_iso,
)
from baton.core.conversation.session import INTERRUPTED
from baton.core.conversation.store import SESSION_ID
from baton.core.importers.claude_code_models import message

if TYPE_CHECKING:
    from baton.core.importers.claude_code_report import ImportReport

MISSING_START = "[the beginning of this conversation is not in the imported file]"
BLOCK_ADAPTER: TypeAdapter[ContentBlock] = TypeAdapter(ContentBlock)
Record = dict[str, Any]


class ImportedView:
    """What an import has built so far (`entries`, and the model's `view` of them) and the
    API rules' state as the view grows, with the repairs that keep the view within those
    rules: a repeated call id, a result answering no open call, a call left unanswered, a
    conversation that starts with the assistant. Each repair goes into the report."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        # what is not written yet (`take` hands it on); `view` holds ids only, so that
        # messages once written are not kept
        self.entries: list[Message | Boundary | Record] = []
        self.taken = 0  # entries handed on before these
        self.view: list[str] = []
        self.ids: set[str] = set()
        self.last: Message | None = None  # the message a following record may extend
        self.last_api_id: str | None = None  # the file's API id of `last`
        # the API rules' state as the view grows (checking the whole view per record
        # would make the import quadratic)
        self.open_uses: dict[str, str] = {}  # the latest response's unanswered calls -> owner
        self.use_ids: set[str] = set()  # every tool_use id kept, across boundaries
        self.result_ids: set[str] = set()  # what the results of built messages answer
        self.api_ids: set[str] = set()
        self.turn_api_id: str | None = None  # API id of the latest response since a prompt
        # stray tool results, as text, waiting for the response's other calls to be answered
        # (a text message before those results would end the turn)
        self.notes: list[ContentBlock] = []
        self.notes_from: Record = {}
        self.notes_at = ""

    def _calls(self, record: Record, owner: str, blocks: list[ContentBlock]) -> list[ContentBlock]:
        """Opens the blocks' tool calls; a call reusing an earlier call's id becomes text."""
        out: list[ContentBlock] = []
        for block in blocks:
            if isinstance(block, ToolUseBlock):
                if block.id in self.use_ids:
                    call = json.dumps(block.input, ensure_ascii=False)
                    out.append(
                        TextBlock(text=f"[repeated tool call {block.id} {block.name}]: {call}")
                    )
                    self.report.repairs.append(
                        f"record {record_uuid(record)}: tool_use {block.id} repeats an earlier "
                        "call's id; kept as text"
                    )
                    continue
                self.use_ids.add(block.id)
                self.open_uses[block.id] = owner
            out.append(block)
        return out

    def _answers(
        self, record: Record, blocks: list[ContentBlock], notes: list[ContentBlock] | None
    ) -> list[ContentBlock]:
        """The blocks, with each tool_result that answers no open call turned into text,
        in place, or moved to `notes` when given."""
        out: list[ContentBlock] = []
        for block in blocks:
            if not isinstance(block, ToolResultBlock) or self.open_uses.pop(block.tool_use_id, ""):
                out.append(block)
                continue
            (out if notes is None else notes).extend(_as_text(block))
            self.report.repairs.append(
                f"record {record_uuid(record)}: tool_result {block.tool_use_id} answers no tool "
                "call of the preceding assistant turn; kept as text"
            )
        return out

    def _flush_notes(self) -> None:
        """The waiting notes as a user message (open calls, if any, are answered first)."""
        if not self.notes:
            return
        note = message(
            id=self._id(self.notes_from), role="user", content=self.notes, created_at=self.notes_at
        )
        self.notes = []
        self._answer_open(f"message {note.id}", note.created_at)
        self._append(note)

    def _answer_open(self, before: str, at: str) -> None:
        """Tool calls still open when a prompt or a new response comes get an error result
        (as Session.append does): their real results, if any, are not where the API wants them."""
        if not self.open_uses:
            return
        missing = list(self.open_uses)
        results: list[ContentBlock] = [
            ToolResultBlock(tool_use_id=u, content=INTERRUPTED, is_error=True) for u in missing
        ]
        repair = message(id=self._id({}), role="user", content=results, created_at=at)
        self.report.repairs.append(
            f"answered unanswered tool call(s) {', '.join(missing)} "
            f"with '{INTERRUPTED}' before {before}"
        )
        self._put(repair)
        self.open_uses.clear()

    def _append(self, message: Message) -> None:
        """A message built from records (counted in the report)."""
        self._put(message)
        self.result_ids.update(
            [b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)]
        )
        self.last, self.last_api_id = message, None
        self.report.messages += 1

    @property
    def tool_pairs(self) -> int:
        """Calls of built messages (not repairs) answered by a result of one."""
        return len(self.use_ids & self.result_ids)

    def take(self, *, final: bool = False) -> list[Message | Boundary | Record]:
        """The entries that can no longer change, in order, given away: all of them but
        the latest assistant message and what follows it (a later record of the same
        response may still extend it), unless `final`."""
        keep = len(self.entries)
        if not final and self.last is not None and self.last.role == "assistant":
            for n in range(len(self.entries) - 1, -1, -1):
                if self.entries[n] is self.last:
                    keep = n
                    break
        out, self.entries = self.entries[:keep], self.entries[keep:]
        self.taken += len(out)
        return out

    def _open(self, first: str, at: str) -> None:
        """The API wants a user message first: one saying the start is not in the file."""
        opening = message(
            id=self._id({}), role="user", content=[TextBlock(text=MISSING_START)], created_at=at
        )
        self.report.repairs.append(
            f"message {first}: the conversation starts with an assistant message; "
            "a user message saying its beginning is missing was put before it"
        )
        self._put(opening)

    def _put(self, message: Message) -> None:
        """Into the entries and the view, keeping the API rules' state current."""
        self.entries.append(message)
        self.view.append(message.id)
        if message.role == "assistant":
            self.turn_api_id = message.api_message_id
            if message.api_message_id is not None:
                self.api_ids.add(message.api_message_id)
        elif not message.is_tool_result_only:
            self.open_uses.clear()  # a prompt ends the turn
            self.turn_api_id = None

    def _id(self, record: Record) -> str:
        """The record's uuid when it is a safe, unused id; otherwise one derived from it."""
        uuid = record.get("uuid")
        if isinstance(uuid, str) and SESSION_ID.fullmatch(uuid) and uuid not in self.ids:
            self.ids.add(uuid)
            return uuid
        seed = f"{uuid}:{self.taken + len(self.entries)}".encode()
        candidate = "cc_" + hashlib.blake2b(seed, digest_size=8).hexdigest()
        while candidate in self.ids:
            candidate = "cc_" + hashlib.blake2b(candidate.encode(), digest_size=8).hexdigest()
        self.ids.add(candidate)
        return candidate


def _as_text(result: ToolResultBlock) -> list[ContentBlock]:
    """A tool result with no call to answer, as a text block (whole: nothing is lost);
    images and documents it carried stay blocks of their own."""
    head = f"[tool result for {result.tool_use_id} whose call is not in this conversation"
    head += ", an error]" if result.is_error else "]"
    content = result.content
    if isinstance(content, str):
        return [TextBlock(text=f"{head}: {content}" if content else head)]
    texts: list[str] = []
    media: list[ContentBlock] = []
    for item in content or []:
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            texts.append(item["text"])
            continue
        try:
            block = BLOCK_ADAPTER.validate_python(item)
        except ValidationError:
            block = None
        if block is not None and block.type in ("image", "document"):
            media.append(block)
        else:
            texts.append(json.dumps(item, ensure_ascii=False))
    text = "\n".join(texts)
    return [TextBlock(text=f"{head}: {text}" if text else head), *media]


def sent_as_user(record: Record) -> object | None:
    """The content Claude Code sends as a user message for a record of another kind: a
    slash command's input or output (2.x's `system/local_command`), or a prompt typed while
    it worked, read between two requests (2.1's `queued_command` attachment)."""
    kind = record.get("type")  # read once: most records are neither kind
    if kind == "system":
        return record.get("content") if record.get("subtype") == "local_command" else None
    attachment = record.get("attachment") if kind == "attachment" else None
    if not isinstance(attachment, dict):
        return None
    return attachment.get("prompt") if attachment.get("type") == "queued_command" else None


def in_uuids(record: Record, uuids: frozenset[str]) -> bool:
    """Whether the record's uuid is one of `uuids` (a damaged record's list or object is
    none of them)."""
    uuid = record.get("uuid")
    return isinstance(uuid, str) and uuid in uuids


def record_uuid(record: Record) -> str:
    return str(record.get("uuid") or "without uuid")


def record_time(record: Record) -> str:
    stamp = record.get("timestamp")
    return stamp if isinstance(stamp, str) and stamp else now_iso()
