"""The standard streams while a command runs: a write its output refuses (a full disk,
/dev/full, an I/O error) is told apart from an error of a file the command reads or
writes; one its error stream refuses is dropped."""

from __future__ import annotations

import os
from typing import Any, TextIO


class OutputFailed(Exception):
    """Standard output refused a write or a flush; `reason` is the system's words."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.reason = error.strerror or str(error)


class Output:
    """`stream` (sys.stdout) whose write and flush raise OutputFailed for what the output
    refuses. A reader gone (BrokenPipeError) stays what it is: the command ends quietly."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer, closed
        return getattr(self.stream, name)


class Unheard:
    """`stream` (sys.stderr) whose write and flush drop what the stream refuses (a full
    disk, /dev/full), and all that comes after: a warning that cannot be told fails no
    command, and an error's exit code stays its own."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError:
            discard(self.stream)
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError:
            discard(self.stream)

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer, closed
        return getattr(self.stream, name)


def discard(stream: TextIO | None) -> None:
    """Send what `stream` still holds, and all it is given later, to the null device, so
    the interpreter's last flush at exit raises nothing."""
    if stream is None:
        return
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream in memory (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
