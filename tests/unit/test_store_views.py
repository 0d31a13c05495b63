"""A view of a session another process writes follows that process without reading the
whole file at each look: it is read again when that process wrote it (or another program
replaced it), and when that process let go (it becomes writable); while neither, each
`get` takes the session already read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from baton.core.conversation.messages import MessageInput
from baton.core.conversation.store import SessionStore


def _count(message: object) -> int:
    return 1


def say(text: str) -> list[MessageInput]:
    return [MessageInput(role="user", content=text)]


def texts(store: SessionStore, sid: str) -> list[str]:
    return [m.text() for m in store.get(sid).view_messages()]


def test_a_view_is_read_again_only_when_the_writer_wrote_or_let_go(tmp_path: Path) -> None:
    """Each `get` of such a view (every request about it) read the whole file again: a
    second server looking at a 100,000-message session the first one writes spent seconds
    of its loop on each request."""
    writer = SessionStore(tmp_path, _count)
    viewer = SessionStore(tmp_path, _count)  # its own descriptors: its locks conflict
    sid = writer.create("written elsewhere").session_id
    writer.get(sid).append(say("one"))

    seen = viewer.get(sid)
    assert seen.read_only and texts(viewer, sid) == ["one"]
    assert viewer.get(sid) is seen  # nothing changed: what was read

    writer.get(sid).append(say("two"))
    again = viewer.get(sid)
    assert again is not seen and texts(viewer, sid) == ["one", "two"]
    assert viewer.get(sid) is again

    path = writer.path_for(sid)  # another program's safe-save, the same bytes
    shutil.copyfile(path, path.with_suffix(".tmp"))
    os.replace(path.with_suffix(".tmp"), path)
    assert viewer.get(sid) is not again

    writer.close()  # let go: the view becomes the writer
    mine = viewer.get(sid)
    assert not mine.read_only
    mine.append(say("three"))
    assert texts(viewer, sid) == ["one", "two", "three"]
    viewer.close()
