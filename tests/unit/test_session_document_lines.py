"""The session document's lines: every message's range starts on its own heading, whatever
its fields and text hold (a line break in a field the renderer writes on one line would
move every later range; "Compact up to here" would name the next message)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from baton.core.conversation.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from baton.lsp.session_document.render import RenderedSession, render_session

# the line ends a client counts (LSP: \n, \r\n and \r)
LINE_END = re.compile(r"\r\n|\r|\n")


def said(role: str, text: str, **fields: Any) -> Message:
    return Message(role=role, content=[TextBlock(text=text)], **fields)


def assert_ranges_on_headings(rendered: RenderedSession) -> None:
    """Each section starts on its message's heading and the text has no line the ranges
    do not count."""
    lines = LINE_END.split(rendered.text)
    assert len(lines) == len(rendered.lines)
    for section in rendered.sections:
        heading = lines[section.start_line]
        assert heading.startswith("## "), (section, heading)
        assert f" · {' '.join(section.message_id.split())} · " in heading


@pytest.mark.parametrize("model", ["claude-x\n\n\n\ny", "claude-x\r\r\ry", "claude-x\u2028y"])
def test_a_model_name_with_line_breaks_moves_no_range(model: str) -> None:
    """A transcript may hold such a name (they were taken before the contract refused
    them): the header stays three lines."""
    messages = [said("user", "one"), said("assistant", "two"), said("user", "three")]
    rendered = render_session("Title", "s1", model, messages)
    assert rendered.sections[0].start_line == 4
    assert_ranges_on_headings(rendered)
    assert "claude-x y" in rendered.lines[2]


BREAKS = "\n\r\n\r\u2028"


@pytest.mark.parametrize("field", ["message id", "tool_use name", "tool_use id"])
def test_a_line_break_in_an_id_or_a_name_moves_no_range(field: str) -> None:
    """Append refuses them now; a transcript written before may hold them."""
    broken = {field: BREAKS.join(field.split())}  # "tool_use\n\r\n\r\u2028name"
    name, call_id = broken.get("tool_use name", "Read"), broken.get("tool_use id", "t1")
    first = said("user", "question", id=broken.get("message id", "m1"))
    call = Message(role="assistant", content=[ToolUseBlock(id=call_id, name=name, input={})])
    answer = Message(role="user", content=[ToolResultBlock(tool_use_id=call_id, content="ok")])
    rendered = render_session("t", "s1", "m", [first, call, answer, said("assistant", "last")])
    assert_ranges_on_headings(rendered)


@pytest.mark.parametrize(
    ("text", "closing"),
    [
        ("```python\nprint('cut off", "```"),  # a reply cut off inside a code block
        ("~~~~\nx\n```", "~~~~"),
        ("  ````\ncode", "````"),
        ("<!-- a note", "-->"),
        ("<pre>\nraw", "</pre>"),
        ("<SCRIPT>\nx = 1", "</script>"),
        ("<![CDATA[ x", "]]>"),
        ("> quote\n\n```\nopen", "```"),
        ("1. step\n   ```bash\nls\n```", "```"),  # "ls" ends the item, and its fence
    ],
)
def test_a_code_fence_or_html_block_a_text_leaves_open_is_closed_in_its_section(
    text: str, closing: str
) -> None:
    """Else every later heading is inside it for a Markdown viewer (one section per
    message): the closing line is the last of the message's section."""
    messages = [said("user", "show code"), said("assistant", text), said("user", "thanks")]
    rendered = render_session("t", "s1", "m", messages)
    cut = rendered.sections[1]
    shown = rendered.lines[cut.start_line + 2 : cut.end_line + 1]
    assert shown == [*text.splitlines(), closing]
    assert_ranges_on_headings(rendered)
    assert rendered.sections[2].start_line == cut.end_line + 2


@pytest.mark.parametrize(
    "text",
    [
        "```python\nprint(1)\n```",
        "1. Install:\n   ```bash\n   pip install x\n   ```\n2. Run",
        "1. Install:\n   ```bash\n   pip install x",  # open in the item: the heading ends it
        "- ```py\n  x = 1\n  ```",
        "> ```\n> open in the quote",
        "<!-- note -->\ntext <pre> inline",
        "<div>\n```\n</div>",  # HTML to the blank line: the fence is HTML
        "</pre>\n```bash",
        "text\n    ```\nindented code is no fence",
        "```js `x`\nan info string with a backtick opens no fence",
        "para\n- \n2. two\n   ```\n   ```bash",  # "- " underlines "para": a heading
    ],
)
def test_a_text_that_leaves_nothing_open_is_shown_as_it_is(text: str) -> None:
    rendered = render_session("t", "s1", "m", [said("assistant", text), said("user", "ok")])
    section = rendered.sections[0]
    assert rendered.lines[section.start_line + 2 : section.end_line + 1] == text.splitlines()


def test_a_block_is_read_where_it_sits_in_its_message() -> None:
    """The first block leaves a list item open with a fence in it: the second block's
    first lines are in that fence, and its last line opens one at the top level."""
    first, second = "- ```py", "   ```bash\n    ```\n```"
    message = Message(role="assistant", content=[TextBlock(text=first), TextBlock(text=second)])
    rendered = render_session("t", "s1", "m", [message, said("user", "ok")])
    section = rendered.sections[0]
    body = rendered.lines[section.start_line + 2 : section.end_line + 1]
    assert body == [first, "", *second.splitlines(), "```"]
    assert_ranges_on_headings(rendered)
