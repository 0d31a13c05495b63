"""A stored block as the Messages API takes it: what a tool result's content may hold."""

from __future__ import annotations

from baton.core.conversation.messages import ToolResultBlock
from baton.core.model_api.api_messages import api_block


def test_a_tool_reference_in_an_imported_result_goes_as_text() -> None:
    """Claude Code 2.1's ToolSearch answers with `tool_reference` blocks to deferred tools
    that Baton's request does not define: the API refuses those (tool_reference_unresolved),
    so the first reply of such a session would fail."""
    result = ToolResultBlock(
        tool_use_id="toolu_1",
        content=[
            {"type": "text", "text": "Found 2 tools"},
            {"type": "tool_reference", "tool_name": "TaskCreate"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}},
            {"type": "mystery"},
        ],
    )
    sent = api_block(result)
    assert sent is not None
    assert sent["content"] == [
        {"type": "text", "text": "Found 2 tools"},
        {"type": "text", "text": "[tool_reference TaskCreate]"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}},
        {"type": "text", "text": "[mystery]"},
    ]
    assert result.content is not None and result.content[1]["type"] == "tool_reference"  # kept
    assert api_block(ToolResultBlock(tool_use_id="t", content="plain"))["content"] == "plain"  # type: ignore[index]
