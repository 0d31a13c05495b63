"""The tool registry: a tool is its definition, default level, kind and run; a call is
planned (title, path, diff) before anyone is asked, and run once allowed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from baton.core.conversation.messages import Message
from baton.core.settings import Level, ToolsSettings
from baton.core.tools.host import OUTCOMES, PermissionOutcome, ToolHost, ToolKind
from baton.core.tools.workspace import Workspace

Status = Literal["pending", "running", "done", "denied", "failed"]


def counted(n: int, noun: str, plural: str = "") -> str:
    """`1 line`, `2 lines`, `1 entry`: how a summary counts what a tool found."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


@dataclass(frozen=True)
class ToolResult:
    """What the model reads back (`text`), and the line the panel shows (`summary`)."""

    text: str
    is_error: bool = False
    summary: str | None = None
    status: Status = "done"


@dataclass
class ToolContext:
    session_id: str
    workspace: Workspace
    host: ToolHost
    settings: ToolsSettings
    messages: Callable[[], Sequence[Message]] = lambda: ()  # the session's, in order


Run = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]


@dataclass(frozen=True)
class Call:
    """One planned call: what the user is shown, under which level, and how it runs."""

    title: str
    kind: ToolKind
    level_key: str
    run: Callable[[], Awaitable[ToolResult]]
    path: str | None = None
    diff: str | None = None
    options: tuple[PermissionOutcome, ...] = OUTCOMES  # what the user may answer


Plan = Callable[[dict[str, Any], ToolContext], Awaitable[Call]]


@dataclass(frozen=True)
class Tool:
    """`definition` is what the API gets (a custom tool's name, description and schema, or
    a built-in tool's type and name); `level` is used when the settings name no level for
    it; `plan` (optional) works out a call's title and diff before it is allowed;
    `level_key` (with a plan) names the call's level from its input alone, so an `off`
    call is refused before its plan reads anything (None: the plan decides)."""

    definition: dict[str, Any]
    level: Level
    kind: ToolKind
    run: Run
    plan: Plan | None = None
    title: Callable[[dict[str, Any]], str] | None = None
    level_key: Callable[[dict[str, Any]], str | None] | None = None

    @property
    def name(self) -> str:
        return str(self.definition["name"])

    def key_before_plan(self, input: dict[str, Any]) -> str | None:
        """The call's level key when its input tells it (None: only its plan knows)."""
        if self.plan is None:
            return self.name
        return self.level_key(input) if self.level_key is not None else None

    def input_title(self, input: dict[str, Any]) -> str:
        return self.title(input) if self.title is not None else self.name

    async def prepare(self, input: dict[str, Any], ctx: ToolContext) -> Call:
        if self.plan is not None:
            return await self.plan(input, ctx)

        async def run() -> ToolResult:
            return await self.run(input, ctx)

        return Call(self.input_title(input), self.kind, self.name, run)


@dataclass
class Registry:
    tools: dict[str, Tool] = field(default_factory=dict)

    def register(self, tool: Tool) -> Registry:
        self.tools[tool.name] = tool
        return self

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def definitions(self) -> list[dict[str, Any]]:
        return [dict(t.definition) for t in self.tools.values()]

    def names(self) -> Iterable[str]:
        return self.tools.keys()

    def default_level(self, key: str) -> Level:
        tool = self.tools.get(key)
        return tool.level if tool is not None else "ask"


def level_of(key: str, settings: ToolsSettings, registry: Registry) -> Level:
    """The settings' level for `key` (a tool's name, or `edit`), else the tool's own."""
    permissions = settings.permissions
    if key in type(permissions).model_fields:
        value: Level = getattr(permissions, key)
        return value
    return registry.default_level(key)
