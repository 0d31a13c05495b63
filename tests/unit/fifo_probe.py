"""Whether a read of a FIFO in a data dir's file's place leaves it alone: the FIFO is held
open by a writer that never ends it (so a read that takes it waits for as long as that
writer stays), its bytes there to be taken; the read runs in a thread, and the writer
goes once the read has answered or taken the bytes, so a read that waits ends too."""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BYTES = b'{"s_other": "/elsewhere"}'


def _unread(fd: int) -> int:
    found = fcntl.ioctl(fd, termios.FIONREAD, struct.pack("i", 0))
    return int(struct.unpack("i", found)[0])


def read_of_fifo(path: Path, read: Callable[[], Any]) -> tuple[bool, list[Any]]:
    """(whether `read` took the bytes of a FIFO made at `path`, [what it answered])."""
    os.mkfifo(path)
    writer = os.open(path, os.O_RDWR | os.O_NONBLOCK)
    os.write(writer, BYTES)
    answers: list[Any] = []
    reader = threading.Thread(target=lambda: answers.append(read()))
    reader.start()
    while reader.is_alive() and _unread(writer) == len(BYTES):
        time.sleep(0.001)  # until it has answered, or has taken the FIFO's bytes
    taken = _unread(writer) < len(BYTES)
    os.close(writer)  # ends a read that waits on the FIFO
    reader.join()
    return taken, answers


def checked_as_regular(path: Path, monkeypatch: Any, twin: Path) -> None:
    """A stat of `path` answers as the regular file `twin` does, whatever `path` is then:
    a check of its type, then an open of it, is made to race another program that put a
    FIFO in its place between the two (only a stat of the descriptor opened tells)."""
    real_stat = os.stat

    def stat(name: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if not isinstance(name, int) and os.fspath(name) == os.fspath(path):
            return real_stat(twin)
        return real_stat(name, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
