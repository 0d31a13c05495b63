"""A transcript's writer lock (an exclusive `flock` its one writer holds): taken as the
file is opened for writing, and seen in the kernel's list without taking it."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from baton.core.conversation.files import SecondName, cause, open_regular

LOCKED = "open for writing in another Baton process"


def open_writer(path: Path) -> tuple[int | None, str | None]:
    """(the writer's descriptor with its lock, None) or (None, LOCKED) when another process
    holds the lock, (None, why) for a file with a second name (a hard link: it is read,
    never written); the OSError of an open that fails."""
    try:
        fd = open_regular(path, os.O_RDWR | os.O_APPEND)
    except SecondName as exc:
        return None, f"{exc.message}; it is served read-only"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None, LOCKED
    except OSError as exc:
        os.close(fd)
        if exc.errno == errno.ENOLCK:
            return None, f"{path} cannot be locked ({cause(exc)}); it is served read-only"
        raise
    return fd, None


PROC_LOCKS = Path("/proc/locks")


def write_locked() -> set[tuple[int, int]]:
    """(device, inode) of every file some open file holds an exclusive `flock` on, as the
    kernel lists them (Linux's /proc/locks; empty where there is none): a transcript's
    writer lock seen without taking a lock, which could make that writer fail to get it."""
    try:
        text = PROC_LOCKS.read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    held: set[tuple[int, int]] = set()
    for line in text.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 2419 fd:00:1322543 0 EOF" (a blocked waiter: "-> ...")
        if len(fields) < 6 or fields[1] != "FLOCK" or fields[3] != "WRITE":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            held.add((os.makedev(int(major, 16), int(minor, 16)), int(inode)))
        except ValueError:
            continue
    return held
