"""A summarized span's facts, extracted once and shared by the summary and the retention check."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

from baton.core.compaction.retention.blocks import is_prompt
from baton.core.compaction.retention.error_facts import ErrorFact, note_command, result_errors
from baton.core.compaction.retention.facts import (
    PathTouch,
    attachment_path,
    tool_paths,
    unique,
    unique_heads,
)
from baton.core.compaction.retention.ledger_text import PROMPT_PREFIX_CHARS
from baton.core.compaction.retention.standing import merged, read_standing, standing_instructions
from baton.core.compaction.retention.summary_facts import read_summary, summary_text
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock


@dataclass(frozen=True)
class SpanFacts:
    """What the span says that a compaction must keep: the user's prompts (in order), every
    path a tool call or a restored-file attachment touched (first-seen order, with its
    operations), and the errors its tool results show (duplicates dropped, order kept).
    An earlier summary in the span adds the prompts, paths and errors it quoted, where it
    stands: they are what the model could still see of the messages it stands for.

    `tool_paths` are the paths without the attachments' restores: the paths of the span as
    the summarizer reads it once `strip_media` has dropped the attachments."""

    prompts: list[str] = field(default_factory=list)
    paths: list[PathTouch] = field(default_factory=list)
    errors: list[ErrorFact] = field(default_factory=list)
    tool_paths: list[PathTouch] = field(default_factory=list)
    # the user's standing instructions (`standing`), the span's and those earlier summaries quoted
    instructions: list[str] = field(default_factory=list)
    # each prompt message and its text (`prompts` holds these very strings), by message id:
    # the summary reads the same prompts and takes them from here (a prompt of several
    # blocks is joined once, not once per reader: it may be a pasted log)
    prompt_texts: dict[str, tuple[Message, str]] = field(default_factory=dict)

    @classmethod
    def extract(cls, messages: Iterable[Message]) -> SpanFacts:
        """The facts of `messages`, in one pass."""
        touches: dict[str, PathTouch] = {}
        tool_touches: dict[str, PathTouch] = {}
        prompts: list[str] = []
        ruling: list[str] = []  # the prompts whose rules are not quoted already (`standing`)
        errors: dict[str, ErrorFact] = {}
        commands: dict[str, str] = {}  # call id -> the shell command it ran
        carried_instructions: list[str] = []
        prompt_texts: dict[str, tuple[Message, str]] = {}
        for message in messages:
            if message.kind == "attachment":
                restored = attachment_path(message)
                if restored is not None:
                    _note(touches, restored, "restored")
            elif is_prompt(message):
                text = message.text().strip()
                if text:
                    prompts.append(text)
                    ruling.append(text)
                    prompt_texts[message.id] = (message, text)
            elif (earlier := summary_text(message)) is not None:
                carried = read_summary(earlier)
                prompts.extend(carried.prompts)
                quoted = read_standing(earlier)
                carried_instructions.extend(quoted)
                if not quoted:  # else they are the rules its prompts left (some may be cut)
                    ruling.extend(carried.prompts)
                for touch in carried.paths:
                    for op in touch.ops:
                        _note(touches, touch.path, op)
                        _note(tool_touches, touch.path, op)
                for fact in carried.errors:
                    errors.setdefault(fact.line, fact)
            for block in message.content:  # exact types: see `blocks`
                if type(block) is ToolUseBlock:
                    for path, op in tool_paths(block):
                        _note(touches, path, op)
                        _note(tool_touches, path, op)
                    note_command(commands, block)
                elif type(block) is ToolResultBlock:
                    for fact in result_errors(block, commands.get(block.tool_use_id)):
                        errors.setdefault(fact.line, fact)
        return cls(
            prompts,
            list(touches.values()),
            list(errors.values()),
            list(tool_touches.values()),
            standing_instructions(ruling, merged(carried_instructions)),
            prompt_texts,
        )

    def prompt_text(self, message: Message) -> str:
        """`message.text().strip()`: as joined here when it is the message these facts read
        (a copy whose media the summary's input replaced reads otherwise)."""
        known = self.prompt_texts.get(message.id)
        return known[1] if known is not None and known[0] is message else message.text().strip()

    # Each kind's facts whose normalized form is new, with that form (`unique`): worked out
    # once, in the compaction's thread, where the retention check asks first; the commit,
    # on the server's loop, finds them made (a prompt may be a 20 MB paste). A prompt is
    # only ever looked for by its first PROMPT_PREFIX_CHARS characters: its form is held
    # that far (`unique_heads`).
    @functools.cached_property
    def unique_prompts(self) -> dict[str, str]:
        return unique_heads(self.prompts, PROMPT_PREFIX_CHARS)

    @functools.cached_property
    def unique_paths(self) -> dict[str, str]:
        return unique([touch.path for touch in self.paths])

    @functools.cached_property
    def unique_errors(self) -> dict[str, str]:
        return unique([fact.line for fact in self.errors])

    @functools.cached_property
    def unique_instructions(self) -> dict[str, str]:
        return unique(self.instructions)

    def without_attachments(self) -> SpanFacts:
        """These facts as they stand once attachments are dropped from the span."""
        return dataclasses.replace(self, paths=self.tool_paths)


def _note(touches: dict[str, PathTouch], path: str, op: str) -> None:
    touch = touches.setdefault(path, PathTouch(path))
    if op not in touch.ops:
        touch.ops.append(op)
