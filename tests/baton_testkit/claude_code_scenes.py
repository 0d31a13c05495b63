"""The parts of a Claude Code session: turns, tool rounds, subagents, compactions, damage."""

from __future__ import annotations

import base64
from typing import Any

from baton_testkit.claude_code_builder import REJECTED, SYSTEM_PROMPT_AND_TOOLS, Builder, Record
from baton_testkit.claude_code_text import ONE_PAGE_PDF, ONE_PIXEL_PNG, PASTED_JPEG, TOOLS

SMALL_MODEL = "claude-haiku-4-5-20251001"


class SessionFile(Builder):
    """A session as Claude Code writes it, era by era (`old` 1.0.x, `recent` 2.0.x, `newest`
    2.1.x), with the truth kept current by the Builder's primitives."""

    media = True  # prompts with images and PDFs
    jpeg_as_png = False  # a prompt's image is a JPEG typed image/png (the import retypes it)
    away = False  # a recap (system/away_summary) after each turn of the newest era

    # ---- openings ------------------------------------------------------------------------

    def warmup(self) -> None:
        """Claude Code 2.x warms up its subagents: a sidechain prompt "Warmup" and a reply."""
        first = self.base("user", side=True, parent=None)
        first["message"] = {"role": "user", "content": "Warmup"}
        self.opaque(first, side=True)
        block = {"type": "text", "text": "I'm ready to help you search and explore the code."}
        reply = self.base("assistant", side=True, parent=first["uuid"])
        reply["message"] = {"id": self.new_api_id(), "role": "assistant", "model": SMALL_MODEL}
        reply["message"] |= {"content": [block], "stop_reason": "end_turn", "usage": self.zero()}
        self.opaque(reply, side=True)
        self.truth.shapes["sidechain-warmup"] += 1
        if self.era == "newest":
            hook = {"type": "hook_success", "hookName": "SessionStart:startup", "exitCode": 0}
            self.opaque(self.base("attachment", parent=None, attachment=hook))
            self.truth.shapes["attachment"] += 1

    def headless_start(self) -> None:
        """A file whose beginning is lost: it starts with the assistant."""
        api = self.new_response()
        self.part(api, {"type": "text", "text": self.text.reply()}, "end_turn")

    def summary_first(self) -> None:
        """Before compact_boundary, /compact started a new file with the summary first."""
        earlier = [self.text.prompt() for _ in range(self.rng.randint(2, 4))]
        summary = [{"type": "text", "text": self.text.summary(earlier)}]
        flag = {"isCompactSummary": True} if self.rng.random() < 0.7 else {}
        self.prompt(summary, parent=None, **flag)
        self.truth.summary_prompts = earlier
        self.prompt("<command-name>/compact</command-name>\n<command-args></command-args>")
        self.prompt("<local-command-stdout>Compacted.</local-command-stdout>")
        self.sid = self.uuid()  # the records after the summary carry the new session's id
        self.truth.shapes["summary-first"] += 1

    def recent_record(self, kind: str) -> None:
        if kind == "permission-mode":
            self.opaque({"type": kind, "permissionMode": "acceptEdits", "sessionId": self.sid})
        else:
            last = self.truth.prompts[-1] if self.truth.prompts else ""
            self.opaque({"type": kind, "lastPrompt": last[:200], "sessionId": self.sid})
        self.truth.shapes["recent-records"] += 1

    # ---- turns -----------------------------------------------------------------------------

    def turn(self, *, repairs: bool, last: bool) -> None:
        self.turn_no += 1
        if self.era == "newest":
            snapshot = {"messageId": self.uuid(), "trackedFileBackups": {}}
            snapshot["timestamp"] = self.tick()
            self.opaque({"type": "file-history-snapshot", **snapshot, "snapshot": snapshot})
        if self.era == "recent" and self.rng.random() < 0.3:
            queued = [{"type": "text", "text": self.text.words(4, 10)}]
            for operation in ("enqueue", "dequeue"):
                record = {"type": "queue-operation", "operation": operation, "content": queued}
                self.opaque({**record, "timestamp": self.tick(), "sessionId": self.sid})
            self.truth.shapes["recent-records"] += 1
        self.ask()
        if self.chance("synthetic", 0.04):
            return self.synthetic()
        for _ in range(self.rng.choice([0, 1, 1, 2, 3])):
            self.tool_round(repairs)
            if repairs and self.chance("repair-orphan", 0.15):
                self.result(self.new_call_id(), "output of a call that this file does not hold")
                self.truth.shapes["repair-orphan"] += 1
        if self.chance("interrupted", 0.08):
            return self.interrupted()
        if repairs and not last and self.chance("repair-unanswered", 0.1):
            api = self.new_response()  # the session ended before the call was answered
            self.part(api, self.call("Bash"), "tool_use")
            return None
        self.reply()
        if self.era == "newest":
            for subtype in ("stop_hook_summary", "turn_duration"):
                self.opaque(self.base("system", subtype=subtype, durationMs=1234, isMeta=False))
            self.truth.shapes["system-record"] += 1
            if self.away:
                self.away_summary()
        if repairs and self.chance("empty-content", 0.1):
            empty = {"id": self.new_api_id(), "role": "assistant", "content": []}
            self.opaque(self.base("assistant", message=empty))
            self.truth.empty += 1
            self.truth.shapes["empty-content"] += 1

    def ask(self) -> None:
        typed = self.text.prompt()
        content: Any
        if self.media and self.chance("image", 0.08):
            data = PASTED_JPEG if self.jpeg_as_png else ONE_PIXEL_PNG
            source = {"type": "base64", "media_type": "image/png", "data": data}
            content = [{"type": "image", "source": source}, {"type": "text", "text": typed}]
            self.truth.shapes["image"] += 1
            if self.jpeg_as_png:  # imported as image/jpeg, one repair told
                self.truth.shapes["image-mislabelled"] += 1
                self.truth.repairs += 1
        elif self.media and self.chance("pdf", 0.02):
            source = {"type": "base64", "media_type": "application/pdf", "data": ONE_PAGE_PDF}
            content = [{"type": "document", "source": source}, {"type": "text", "text": typed}]
            self.truth.shapes["pdf"] += 1
        elif self.era != "old" and self.rng.random() < 0.4:
            context = f"<ide_opened_file>The user opened the file {self.text.path()} in the IDE."
            content = [{"type": "text", "text": context + "</ide_opened_file>"}]
            content.append({"type": "text", "text": typed})
        else:
            content = typed if self.era != "recent" else [{"type": "text", "text": typed}]
        self.prompt(content, typed)

    def tool_round(self, repairs: bool) -> None:
        api = self.new_response()
        for block in self.preamble():
            self.part(api, block)
        count = self.rng.choice([1, 1, 1, 2, 3])
        if count == 1 and self.era != "old" and self.chance("sidechain-task", 0.1):
            calls = [self.call("Task")]
        elif count == 1 and repairs and self.call_ids and self.chance("repair-repeated-id", 0.1):
            calls = [self.call("Read", use_id=self.rng.choice(self.call_ids))]
        else:
            calls = [self.call(self.rng.choice(TOOLS)) for _ in range(count)]
        interleave = count > 1 and self.era == "newest" and self.rng.random() < 0.7
        if count > 1:
            self.truth.shapes["parallel-interleaved" if interleave else "parallel-grouped"] += 1
        made = []
        for n, call in enumerate(calls):
            made.append(self.part(api, call, "tool_use" if n == count - 1 else None))
            if interleave:
                self.answer(call, made[-1])
        if not interleave:
            for call, record in zip(calls, made, strict=True):
                self.answer(call, record)

    def preamble(self) -> list[Record]:
        blocks: list[Record] = []
        if self.era != "old" or self.rng.random() < 0.3:
            signature = base64.b64encode(self.rng.randbytes(48)).decode()
            thinking = {"type": "thinking", "thinking": self.text.reply(), "signature": signature}
            blocks.append(thinking)
            self.truth.shapes["thinking"] += 1
        if self.era == "newest" and self.chance("redacted-thinking", 0.05):
            data = base64.b64encode(self.rng.randbytes(96)).decode()
            blocks.append({"type": "redacted_thinking", "data": data})
            self.truth.shapes["redacted-thinking"] += 1
        if self.rng.random() < 0.6:
            blocks.append({"type": "text", "text": self.text.reply()})
        return blocks

    def answer(self, call: Record, by: Record) -> None:
        name, given = call["name"], call["input"]
        error = False
        content: Any
        if name == "Task":
            self.subagent(str(given.get("prompt", "")))
            content = [{"type": "text", "text": self.text.reply()}]
        elif name == "Read" and self.chance("image-result", 0.05):
            source = {"type": "base64", "media_type": "image/png", "data": ONE_PIXEL_PNG}
            content = [{"type": "image", "source": source}]
            self.truth.shapes["image-result"] += 1
        else:
            content, error = self.text.tool_output(name, given)
        extra: dict[str, Any] = {"toolUseResult": {"stdout": str(content)[:200], "stderr": ""}}
        if self.era == "newest":
            extra["sourceToolAssistantUUID"] = by["uuid"]
        self.result(call["id"], content, error, **extra)
        if self.era == "old" and self.chance("system-record", 0.2):
            hook = f"Running \x1b[1mPostToolUse:{name}\x1b[22m..."
            self.opaque(self.base("system", content=hook, level="info", toolUseID=call["id"]))
            self.truth.shapes["system-record"] += 1
        if self.era == "newest" and self.chance("attachment", 0.2):
            hook = {"type": "hook_success", "hookName": f"PostToolUse:{name}", "exitCode": 0}
            self.opaque(self.base("attachment", attachment=hook | {"toolUseID": call["id"]}))
            self.truth.shapes["attachment"] += 1

    def subagent(self, prompt: str) -> None:
        """A Task call's own conversation, written into the same file as a sidechain."""
        first = self.base("user", side=True, parent=None)
        first["message"] = {"role": "user", "content": prompt}
        self.opaque(first, side=True)
        api, use_id = self.new_api_id(), self.new_call_id()
        call = {"type": "tool_use", "id": use_id, "name": "Grep", "input": {"pattern": "def "}}
        steps = [
            ("assistant", [call]),
            ("user", [{"type": "tool_result", "tool_use_id": use_id, "content": self.text.path()}]),
            ("assistant", [{"type": "text", "text": self.text.reply()}]),
        ]
        parent = first["uuid"]
        for role, content in steps:
            record = self.base(role, side=True, parent=parent)
            record["message"] = {"role": role, "content": content}
            if role == "assistant":
                record["message"] |= {"id": api, "model": self.model, "usage": self.zero()}
            self.opaque(record, side=True)
            parent = record["uuid"]
        self.truth.shapes["sidechain-task"] += 1

    def reply(self) -> None:
        api = self.new_response()
        if self.era != "old" and self.rng.random() < 0.5:
            self.part(api, self.preamble()[0])
        self.part(api, {"type": "text", "text": self.text.reply()}, "end_turn")

    def synthetic(self) -> None:
        """A reply Claude Code wrote itself (`<synthetic>`, zero usage)."""
        self.new_response()
        api = self.uuid()  # not an API response: no msg_ id
        block = {"type": "text", "text": "API Error: 529 Overloaded. Try again later."}
        self.part(api, block, "stop_sequence", model="<synthetic>", usage=self.zero())
        self.truth.shapes["synthetic"] += 1

    def interrupted(self) -> None:
        api = self.new_response()
        call = self.call("Edit")
        self.part(api, call, "tool_use")
        self.result(call["id"], REJECTED, error=True)
        self.prompt([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
        self.truth.shapes["interrupted"] += 1

    # ---- compaction ------------------------------------------------------------------------

    def compaction(self) -> None:
        """compact_boundary, then the summary (Claude Code 1.0.113 and later)."""
        self.answer_open()
        self.flush_note()
        trigger = self.rng.choice(["auto", "manual"])
        meta = {"trigger": trigger, "preTokens": self.context}
        logical = self.parent
        boundary = self.base("system", parent=None, subtype="compact_boundary")
        boundary |= {"content": "Conversation compacted", "isMeta": False, "level": "info"}
        self.emit(boundary | {"logicalParentUuid": logical, "compactMetadata": meta})
        prompts = list(self.truth.prompts)
        text = self.text.summary(prompts)
        summary = self.user(text, isCompactSummary=True, isVisibleInTranscriptOnly=True)
        self.truth.boundaries.append((summary["uuid"], list(self.truth.view)))
        self.truth.view = [summary["uuid"]]
        self.truth.messages += 1
        self.truth.compactions += 1
        self.truth.summary_prompts = prompts
        self.truth.shapes["compact-boundary"] += 1
        self.last_api = None
        self.context = SYSTEM_PROMPT_AND_TOOLS + len(text) // 4
        if trigger == "manual":
            caveat = "Caveat: The messages below were generated by the user running local commands."
            self.prompt(f"<local-command-caveat>{caveat}</local-command-caveat>", isMeta=True)
            self.prompt("<command-name>/compact</command-name>\n<command-args></command-args>")

    def old_compaction(self) -> None:
        """Claude Code 1.0.6x: the summary is a user record with `isCompactSummary` and no
        parent, in the middle of the file, with no compact_boundary before it."""
        self.answer_open()
        self.flush_note()
        prompts = list(self.truth.prompts)
        text = self.text.summary(prompts)
        content = [{"type": "text", "text": text}]
        summary = self.user(content, parent=None, isCompactSummary=True)
        self.truth.boundaries.append((summary["uuid"], list(self.truth.view)))
        self.truth.view = [summary["uuid"]]
        self.truth.messages += 1
        self.truth.compactions += 1
        self.truth.summary_prompts = prompts
        self.truth.shapes["old-compaction"] += 1
        self.last_api = None
        self.context = SYSTEM_PROMPT_AND_TOOLS + len(text) // 4
        self.prompt("<command-name>/compact</command-name>\n<command-args></command-args>")
        self.prompt("<local-command-stdout>Compacted.</local-command-stdout>")

    def restart(self) -> None:
        """After an old compaction, a prompt with no parent: the conversation starts again
        there (the import puts a note standing for what came before)."""
        self.answer_open()
        self.flush_note()
        typed = self.text.prompt()
        record = self.user(typed, parent=None)
        self.truth.boundaries.append((f"restart-{record['uuid']}", list(self.truth.view)))
        self.truth.view = [None, record["uuid"]]  # the note, then the prompt
        self.truth.messages += 1
        self.truth.prompts.append(typed)
        self.truth.compactions += 1
        self.truth.shapes["restart"] += 1
        self.last_api = None
        self.context = SYSTEM_PROMPT_AND_TOOLS + len(typed) // 4

    def away_summary(self) -> None:
        """Claude Code 2.1's recap for a user who comes back: shown, never sent."""
        recap = f"Working on {self.text.path()}. Next: {self.text.words(4, 9)}."
        self.opaque(self.base("system", subtype="away_summary", content=recap, isMeta=False))
        self.truth.shapes["away-summary"] += 1

    def contaminated_title(self) -> None:
        """A `summary` record about another file (its leaf is not here): never the title."""
        other = {"type": "summary", "summary": "Another Session Entirely", "leafUuid": self.uuid()}
        self.emit(other, opaque=True)
        self.records.insert(0, self.records.pop())
        self.truth.shapes["contaminated-title"] += 1

    # ---- ids -------------------------------------------------------------------------------

    def new_api_id(self) -> str:
        return f"msg_01{self.rng.getrandbits(96):024x}"

    def new_call_id(self) -> str:
        return f"toolu_01{self.rng.getrandbits(88):022x}"

    @staticmethod
    def zero() -> dict[str, int]:
        keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens")
        return dict.fromkeys((*keys, "cache_read_input_tokens"), 0)
