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


def test_a_blank_text_in_a_tool_results_content_is_left_out() -> None:
    """The API refuses a text block of blanks wherever it is ("text content blocks must
    contain non-whitespace text"), in a tool result's content too: an MCP tool that
    answered with an empty text (as a Claude Code file keeps it) failed every request of
    the session that sent it. Such a part is left out; a result left with none goes with
    no content, which the API takes."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    result = ToolResultBlock(
        tool_use_id="toolu_1",
        content=[{"type": "text", "text": ""}, image, {"type": "text", "text": " \n"}],
    )
    assert api_block(result) == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [image],
    }
    empty = ToolResultBlock(tool_use_id="toolu_2", content=[{"type": "text", "text": ""}])
    assert api_block(empty) == {"type": "tool_result", "tool_use_id": "toolu_2"}
    assert result.content is not None and len(result.content) == 3  # kept as stored
    blank = ToolResultBlock(tool_use_id="toolu_3", content="", is_error=False)
    assert api_block(blank) == {  # a blank string: the API takes it
        "type": "tool_result",
        "tool_use_id": "toolu_3",
        "content": "",
        "is_error": False,
    }
