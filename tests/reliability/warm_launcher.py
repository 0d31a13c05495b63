"""Starts `baton serve` processes in milliseconds: Baton is imported once, here, and each
server is a fork of this process that runs the command line's `serve` on the pipes it was
sent. The crash suites kill hundreds of servers; an interpreter start for each would cost
seconds apiece on a busy machine.

Protocol, over the unix socket named by argv[1]: the client sends one line of JSON (the
server's environment additions) with two file descriptors attached (the server's stdin and
stdout); the launcher answers one line, {"pid": n}. Servers are reaped as they exit.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys


def _warm() -> None:
    """Import everything a server imports, and load the tokenizer, before any fork (the
    server itself imports lsp/backend.py only once `initialize` is answered)."""
    import baton.cli.compact
    import baton.cli.importing
    import baton.cli.main
    import baton.cli.payload
    import baton.cli.usage
    import baton.lsp.backend
    import baton.lsp.server
    from baton.core.usage.estimator import default_estimator

    default_estimator().count_text("warm")
    del baton


def _serve(stdin: int, stdout: int, stderr: int, env: dict[str, str]) -> None:
    os.setpgid(0, 0)
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.update(env)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    # the standard streams were bound to the launcher's descriptors: rebind them
    # (the __std*__ names keep the originals alive once `serve` swaps stdout for stderr)
    sys.stdin = sys.__stdin__ = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(2, "w", closefd=False)  # noqa: SIM115
    from baton.cli.main import main

    code = 1
    try:
        code = main(["serve", "--log-level", "WARNING"])
    finally:
        os._exit(code)


def main() -> None:
    _warm()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps finished servers
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sys.argv[1])
    listener.listen(1)
    print("ready", flush=True)
    connection, _ = listener.accept()
    buffer = b""
    while True:
        data, fds, _, _ = socket.recv_fds(connection, 65536, 3)
        if not data:
            return
        buffer += data
        line, _, buffer = buffer.partition(b"\n")
        env = json.loads(line)
        pid = os.fork()
        if pid == 0:
            connection.close()
            listener.close()
            _serve(fds[0], fds[1], fds[2], env)
        for fd in fds:
            os.close(fd)
        connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")


if __name__ == "__main__":
    main()
