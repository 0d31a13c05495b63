"""What a face on stdio says, and its exit code, when its output to the client fails:
the same for `baton serve` and `baton acp` (PROTOCOL.md)."""

from __future__ import annotations


def output_lost(error: OSError) -> tuple[str, int]:
    """The line said on stderr and the exit code: a client gone (a broken pipe) ends the
    server as an exit would; another error (a full disk) is exit code 2."""
    if isinstance(error, BrokenPipeError | ConnectionResetError):
        return "the connection to the client is lost; shutting down", 0
    reason = error.strerror or str(error)
    return f"the output to the client cannot be written ({reason}): shutting down", 2
