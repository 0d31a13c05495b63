"""A prompt's `resource_link` to a file the client cannot read is read from the disk: the
file was checked by its name (a regular file, within the size a prompt takes), then read
by its name again, whole, on the agent's loop. A FIFO another program put in its place in
between held the loop for as long as its writer stayed, and a file grown past the bound
was read whole. The file opened is the one read now, never waited on, and bounded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from acp.schema import ResourceContentBlock, TextContentBlock
from fifo_probe import checked_as_regular, read_of_fifo

from baton.acp import turns
from baton.acp.prompt_content import MAX_FILE_CHARS, PromptContent, prompt_content
from baton.acp.tool_host import AcpToolHost


def prompt_with_link(path: Path) -> PromptContent:
    """The prompt's content, read as a turn reads it for a client that cannot read files
    (no `fs/read_text_file`: the client is never asked)."""
    host = AcpToolHost(cast(Any, None), "s", can_read=False, can_write=False)
    live: Any = SimpleNamespace(host=host)
    blocks = [
        TextContentBlock(type="text", text="see"),
        ResourceContentBlock(type="resource_link", name=path.name, uri=path.as_uri()),
    ]
    return asyncio.run(prompt_content(blocks, lambda linked: turns._read(live, linked)))


@pytest.mark.timeout(60)  # the read waited on the FIFO for as long as its writer stayed
def test_a_fifo_put_in_its_place_after_the_check_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    twin = tmp_path / "twin.py"
    twin.write_text("x = 1\n")
    path = tmp_path / "app.py"
    checked_as_regular(path, monkeypatch, twin)

    taken, answers = read_of_fifo(path, lambda: prompt_with_link(path))
    assert not taken, "the FIFO was read"
    [made] = answers
    assert made.blocks[1].text == f"Linked file: {path} (not included: a FIFO)"
    assert made.files == {}


def test_a_file_grown_past_the_bound_after_the_check_is_named_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    twin = tmp_path / "twin.log"
    twin.write_text("small\n")
    path = tmp_path / "grown.log"
    size = MAX_FILE_CHARS * 5
    path.write_bytes(b"x" * size)
    checked_as_regular(path, monkeypatch, twin)

    made = prompt_with_link(path)
    assert made.blocks[1].text == f"Attached file: {path} (not included: {size:,} bytes)"  # type: ignore[union-attr]
    assert made.files == {str(path): None}
