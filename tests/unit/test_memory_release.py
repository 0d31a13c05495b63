"""Freed heap memory goes back to the system once a burst of requests is over."""

from __future__ import annotations

import asyncio
import ctypes.util
import time

import pytest

from baton.core import memory
from baton.core.memory import ReleaseAfterWork, release_freed_memory

GLIBC = memory._trim is not None


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 1e6


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's; elsewhere the release is a no-op")
def test_a_release_gives_freed_heap_pages_back() -> None:
    # 60 MB of 4 KB buffers (the C heap, not Python's small-object arenas), all freed but
    # one at the end that keeps the heap's top from shrinking on its own
    held = [bytearray(4096) for _ in range(15_000)]
    pin = bytearray(4096)
    del held
    before = rss_mb()
    assert release_freed_memory()
    assert before - rss_mb() > 30, "the freed pages went back"
    del pin


def test_without_malloc_trim_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_trim", None)
    assert release_freed_memory() is False
    ReleaseAfterWork().worked()  # no timer, no error


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's; elsewhere the release is a no-op")
async def test_one_release_runs_once_a_burst_of_requests_settles() -> None:
    release = ReleaseAfterWork(settle=0.05)
    for _ in range(20):  # a burst: each request pushes the release back
        release.worked()
        await asyncio.sleep(0.005)
    assert release.releases == 0
    await asyncio.sleep(0.2)
    assert release.releases == 1


async def test_requests_without_pause_get_a_release_now_and_then_not_after_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A release on a big heap costs ~0.4 ms; a client that asks again as soon as it is
    answered got one after every request (a third of the loop's time). The next release
    now waits twenty times the last one's cost, and the last of a burst still comes."""
    costs: list[float] = []

    def trim(pad: int) -> int:
        time.sleep(0.004)  # a release on a big heap, made slow
        costs.append(0.004)
        return 1

    monkeypatch.setattr(memory, "_trim", trim)
    release = ReleaseAfterWork()
    start = time.perf_counter()
    requests = 0
    while time.perf_counter() - start < 0.4:  # a client asking without pause
        release.worked()
        requests += 1
        await asyncio.sleep(0.001)
    flood = release.releases
    assert requests > 3 * flood and 1 <= flood <= 8, (requests, flood)
    for _ in range(300):  # the burst's end is released (soon; a loaded machine is slower)
        await asyncio.sleep(0.01)
        if release.releases > flood:
            break
    await asyncio.sleep(0.3)
    assert release.releases == flood + 1  # once


def test_the_c_library_is_found_on_linux() -> None:
    # the release is only as good as finding the call: on glibc Linux it must be found
    if ctypes.util.find_library("c") == "libc.so.6":
        assert GLIBC
