"""The serving process's allocator: one malloc arena for all threads (glibc)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

from baton.lsp.transport import process_memory

# a child process that mallocs from three threads and counts glibc's heaps (malloc_info)
CHILD = textwrap.dedent(
    """
    import ctypes, sys, tempfile, threading
    from baton.lsp.transport.process_memory import share_one_arena
    print(share_one_arena() if sys.argv[1] == "one" else None)
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    kept = []
    def work():
        kept.extend(libc.malloc(1000) for _ in range(100))
    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads: t.start()
    for t in threads: t.join()
    libc.fopen.restype = ctypes.c_void_p
    with tempfile.NamedTemporaryFile("r") as out:
        handle = libc.fopen(out.name.encode(), b"w")
        libc.malloc_info(0, ctypes.c_void_p(handle))
        libc.fclose(ctypes.c_void_p(handle))
        print(out.read().count("<heap nr="))
    """
)


def heaps(mode: str, env: dict[str, str] | None = None) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, env=env, check=True
    )
    answer, count = done.stdout.split()
    return answer, int(count)


glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="malloc arenas are glibc's",
)


@glibc
def test_threads_share_one_arena_once_it_is_set() -> None:
    assert heaps("default")[1] > 1  # each thread that allocates gets an arena of its own
    assert heaps("one") == ("True", 1)


@glibc
def test_an_arena_limit_from_the_environment_is_left_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = {**os.environ, "MALLOC_ARENA_MAX": "2"}
    assert heaps("one", env) == ("False", 2)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "2")
    assert process_memory.share_one_arena() is False
