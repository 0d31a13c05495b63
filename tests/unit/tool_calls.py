"""Calling a workspace tool as the tool loop does, for the tool tests: a workspace of one
folder, a disk host, edits allowed unless the settings say otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton.core.conversation.messages import ToolUseBlock
from baton.core.settings import ToolsSettings
from baton.core.settings_lists import DEFAULT_EXCLUDES
from baton.core.tools.calls import answer
from baton.core.tools.catalog import workspace_registry
from baton.core.tools.host import DiskHost
from baton.core.tools.registry import ToolContext, ToolResult
from baton.core.tools.workspace import Workspace

AUTO_EDITS = ToolsSettings.model_validate({"permissions": {"edit": "auto"}})


def ctx(
    root: Path, host: DiskHost | None = None, settings: ToolsSettings = AUTO_EDITS
) -> ToolContext:
    return ToolContext("s1", Workspace([root], DEFAULT_EXCLUDES), host or DiskHost(), settings)


async def call(
    context: ToolContext, name: str, model: str = "claude-sonnet-4-5", **input: Any
) -> ToolResult:
    use = ToolUseBlock(id="toolu_1", name=name, input=input)
    return await answer(use, workspace_registry(model), context, set())
