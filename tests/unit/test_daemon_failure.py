"""background.daemon: what a failed work's frames held is let go of in its thread, once the
failure is handed over, not kept by the exception until a full collection."""

from __future__ import annotations

import asyncio
import gc
import threading
import traceback
import weakref

import pytest

from baton.core.background import daemon


def _ended() -> None:
    """Once the work's thread has ended (it hands the outcome over, then returns)."""
    for thread in threading.enumerate():
        if thread.name == "test-daemon":
            thread.join(10)


class Held:
    """Something a work's frame holds as it fails."""


def test_a_failed_work_s_frames_let_go_of_what_they_held() -> None:
    refs: list[weakref.ref[Held]] = []

    def work() -> None:
        held = Held()
        refs.append(weakref.ref(held))
        raise ValueError("no such thing")

    async def main() -> BaseException:
        with pytest.raises(ValueError) as caught:
            await daemon(work, "test-daemon")
        return caught.value

    enabled = gc.isenabled()
    gc.disable()  # no collection frees it: the exception's references alone decide
    try:
        error = asyncio.run(main())
        _ended()
        assert refs[0]() is None  # the exception, still held, keeps none of it
        # and it still tells where the work failed
        assert "work" in "".join(traceback.format_exception(error))
        assert "no such thing" in str(error)
        del error
    finally:
        if enabled:
            gc.enable()


def test_a_failed_work_s_exception_is_freed_with_its_last_holder() -> None:
    refs: list[weakref.ref[BaseException]] = []

    class Failed(Exception):
        pass

    def work() -> None:
        error = Failed("stop")
        refs.append(weakref.ref(error))
        raise error

    async def main() -> None:
        with pytest.raises(Failed):
            await daemon(work, "test-daemon")

    enabled = gc.isenabled()
    gc.disable()
    try:
        asyncio.run(main())
        _ended()
        # no cycle through the thread's frame, which holds the future that holds it
        assert refs[0]() is None
    finally:
        if enabled:
            gc.enable()
