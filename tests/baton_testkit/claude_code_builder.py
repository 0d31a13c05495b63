"""Builds a Claude Code session file record by record, counting what an import must find."""

from __future__ import annotations

import json
import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from baton_testkit.claude_code_text import Text

Record = dict[str, Any]
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)
SYSTEM_PROMPT_AND_TOOLS = 14_000  # what Claude Code sends besides the conversation


@dataclass
class Truth:
    """What the generated file holds, in the importer's terms."""

    records: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    messages: int = 0  # conversation messages built from records (repairs add none)
    merged_records: int = 0
    tool_pairs: int = 0
    compactions: int = 0
    repairs: int = 0
    sidechain: int = 0
    opaque: int = 0
    empty: int = 0
    session_ids: list[str] = field(default_factory=list)
    view: list[str | None] = field(default_factory=list)  # None: a message a repair adds
    boundaries: list[tuple[str, list[str | None]]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)  # typed prompts, in order
    summary_prompts: list[str] = field(default_factory=list)  # quoted by the view's summary
    title: str | None = None
    shapes: Counter[str] = field(default_factory=Counter)


class Builder:
    """One file's records, with the importer's view of them kept alongside in `truth`."""

    def __init__(self, rng: random.Random, era: str, version: str, model: str) -> None:
        self.rng, self.era, self.version, self.model = rng, era, version, model
        self.text = Text(rng)
        self.records: list[Record] = []
        self.truth = Truth()
        self.sid = self.uuid()
        self.parent: str | None = None
        self.clock = datetime(2025, 7, 1, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 9**6))
        self.last_api: str | None = None  # API id of the previous conversation record
        self.open_calls: list[str] = []  # calls the importer will see without a result
        self.note: str | None = None  # the record a waiting stray result became a note of
        self.call_ids: list[str] = []
        self.context = SYSTEM_PROMPT_AND_TOOLS
        self.turn_no = 0

    # ---- records ---------------------------------------------------------------------------

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def tick(self) -> str:
        self.clock += timedelta(milliseconds=self.rng.randint(30, 90_000))
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def chance(self, shape: str, p: float) -> bool:
        """From the second turn on, the first chance at a shape takes it; others have p."""
        return (self.truth.shapes[shape] == 0 and self.turn_no >= 1) or self.rng.random() < p

    def emit(self, record: Record, *, opaque: bool = False) -> Record:
        kind, subtype = record["type"], record.get("subtype")
        self.truth.kinds[f"{kind}/{subtype}" if subtype else kind] += 1
        self.truth.records += 1
        self.truth.opaque += int(opaque)
        sid = record.get("sessionId")
        if sid and sid not in self.truth.session_ids:
            self.truth.session_ids.append(sid)
        self.records.append(record)
        return record

    def base(self, kind: str, *, side: bool = False, **fields: Any) -> Record:
        uid = self.uuid()
        record: Record = {
            "parentUuid": fields.pop("parent", self.parent),
            "isSidechain": side,
            "userType": "external",
            "cwd": "/home/dev/project",
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": "main",
            "type": kind,
            "uuid": uid,
            "timestamp": self.tick(),
        }
        if self.era == "newest":
            record["entrypoint"] = "cli"
        record.update(fields)
        if not side:
            self.parent = uid
        return record

    def user(self, content: Any, **fields: Any) -> Record:
        self.context += len(json.dumps(content)) // 4
        return self.emit(self.base("user", message={"role": "user", "content": content}, **fields))

    def assistant(self, api: str, block: Record, stop: str | None, **fields: Any) -> Record:
        """One record of a response (the records of one response share its id and usage)."""
        self.context += len(json.dumps(block)) // 4
        usage = {
            "input_tokens": self.rng.randint(3, 12),
            "cache_creation_input_tokens": self.rng.randint(50, 900),
            "cache_read_input_tokens": self.context,
            "output_tokens": self.rng.randint(3, 600),
            "service_tier": "standard",
        }
        message = {
            "id": api,
            "type": "message",
            "role": "assistant",
            "model": fields.pop("model", self.model),
            "content": [block],
            "stop_reason": stop if self.era != "old" else None,
            "stop_sequence": None,
            "usage": fields.pop("usage", usage),
        }
        request = f"req_011C{self.rng.getrandbits(64):016x}"
        return self.emit(self.base("assistant", message=message, requestId=request, **fields))

    def opaque(self, record: Record, *, side: bool = False) -> None:
        """A record the importer keeps as it is: no conversation role, or a subagent's."""
        self.emit(record, opaque=True)
        self.truth.sidechain += int(side)

    # ---- what the importer makes of them ---------------------------------------------------

    def message(self, uid: str) -> None:
        self.truth.messages += 1
        self.truth.view.append(uid)

    def repair(self, shape: str, added: bool) -> None:
        self.truth.repairs += 1
        self.truth.shapes[shape] += 1
        if added:
            self.truth.view.append(None)

    def answer_open(self) -> None:
        if self.open_calls:  # answered by the importer with an error result
            self.repair("repair-unanswered", added=True)
            self.open_calls = []

    def flush_note(self) -> None:
        if self.note is not None:
            self.message(self.note)
            self.note = None

    def new_response(self) -> str:
        self.answer_open()
        self.flush_note()
        if not self.truth.view:
            self.repair("repair-headless", added=True)
        self.last_api = None
        return f"msg_01{self.rng.getrandbits(96):024x}"

    def part(self, api: str, block: Record, stop: str | None = None, **fields: Any) -> Record:
        record = self.assistant(api, block, stop, **fields)
        if self.last_api == api:
            self.truth.merged_records += 1
        else:
            self.message(record["uuid"])
        self.last_api = api
        if len(self.records) > 1 and self.records[-2].get("message", {}).get("id") == api:
            self.truth.shapes["split-response"] += 1
        return record

    def prompt(self, content: Any, typed: str | None = None, **fields: Any) -> Record:
        record = self.user(content, **fields)
        self.answer_open()
        self.message(record["uuid"])
        self.flush_note()
        self.last_api = None
        if typed is not None:
            self.truth.prompts.append(typed)
        return record

    def result(self, use_id: str, content: Any, error: bool = False, **fields: Any) -> Record:
        block: Record = {"tool_use_id": use_id, "type": "tool_result", "content": content}
        if error:
            block["is_error"] = True
        record = self.user([block], **fields)
        self.last_api = None
        if use_id in self.open_calls:
            self.open_calls.remove(use_id)
            self.message(record["uuid"])
            self.truth.tool_pairs += 1
        else:  # answers no open call: becomes a note, put in when the turn moves on
            self.truth.repairs += 1
            self.note = self.note or record["uuid"]
        return record

    def call(self, name: str, use_id: str | None = None) -> Record:
        if use_id is None:
            use_id = f"toolu_01{self.rng.getrandbits(88):022x}"
            self.call_ids.append(use_id)
            self.open_calls.append(use_id)
        else:  # a repeated id: the importer keeps the call as text
            self.repair("repair-repeated-id", added=False)
        return {"type": "tool_use", "id": use_id, "name": name, "input": self.text.tool_call(name)}

    def finish(self, *, title: bool) -> None:
        self.flush_note()
        typed = [p for p in self.truth.prompts if not p.startswith(("<", "["))]
        # a title is one line, its spaces collapsed and trimmed (the rules of a title)
        self.truth.title = " ".join(typed[0].splitlines()[0][:80].split()) if typed else None
        if title:
            self.truth.title = f"{self.text.words(2, 5).title()} Session"
            record = {"type": "summary", "summary": self.truth.title, "leafUuid": self.parent}
            self.emit(record, opaque=True)
            self.records.insert(0, self.records.pop())
            self.truth.shapes["title"] += 1
