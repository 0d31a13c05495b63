"""The user's hooks file (`hooks.json`, or the file `BATON_HOOKS_FILE` names) is read as
a settings file is: only a regular file (a link followed), bounded, never waited on. It
is read at each compaction, on the server's loop: a FIFO in its place held the loop (and
so the server) for as long as its writer stayed, a link to /dev/zero read without end,
and JSON nested past the parser's depth failed the compaction with an internal error;
each is now a problem the compaction reports, and no hook runs."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from fifo_probe import checked_as_regular, read_of_fifo

from baton.core.compaction.hooks import HOOKS_BYTES, Hooks, load_hooks, read_output
from baton.core.errors import InvalidParams
from baton.core.settings_file import read_settings


def problem(path: Path) -> str:
    hooks = load_hooks(path)
    assert (hooks.pre, hooks.post) == ([], []) and len(hooks.problems) == 1
    return hooks.problems[0]


def test_a_fifo_in_its_place_is_not_waited_on(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    taken, answers = read_of_fifo(path, lambda: load_hooks(path))
    assert not taken, "the FIFO was read"
    [hooks] = answers
    assert hooks.problems == [
        f"the hooks file {path} cannot be read: a FIFO, not a hooks file; no hook runs"
    ]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"[" * 4_000, "not JSON"),  # nested past the parser's depth
        (b"{}" + b" " * HOOKS_BYTES, f"longer than {HOOKS_BYTES:,} bytes"),
        (b"\xff\xfe{}", "not UTF-8 text"),
    ],
)
def test_a_file_that_is_no_hooks_file_is_a_problem(
    tmp_path: Path, content: bytes, why: str
) -> None:
    path = tmp_path / "hooks.json"
    path.write_bytes(content)
    assert why in problem(path) and str(path) in problem(path)


def test_a_link_is_followed_to_a_regular_file_only(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.symlink_to("/dev/zero")
    assert "a device, not a hooks file" in problem(path)
    path.unlink()
    (tmp_path / "mine.json").write_text('{"PreCompact": [{"command": "true"}]}')
    path.symlink_to(tmp_path / "mine.json")
    assert len(load_hooks(path).pre) == 1
    path.unlink()
    assert load_hooks(path) == Hooks()  # no file: no hooks
    os.symlink(tmp_path / "gone.json", path)
    assert "no such file" in problem(path)


def test_a_hook_that_prints_json_nested_too_deep_is_reported() -> None:
    """Its stdout failed the compaction with a RecursionError (an internal error)."""
    from baton.core.compaction.hooks import HookRun

    run = HookRun(exit_code=0, stdout="[" * 4_000)
    assert read_output(run) == ({}, "printed what is not a JSON object; its output was ignored")


NONE = "no hook runs"


def _hooks_problem(path: Path) -> str:
    [told] = load_hooks(path).problems
    return told


def _settings_problem(path: Path) -> str:
    with pytest.raises(InvalidParams) as raised:
        read_settings(str(path))
    return raised.value.message


@pytest.mark.parametrize(
    ("read", "told"),
    [
        (_hooks_problem, "the hooks file {path} cannot be read: a FIFO, not a hooks file; " + NONE),
        (_settings_problem, "--settings {path}: a FIFO, not a settings file"),
    ],
)
def test_a_fifo_put_in_its_place_after_its_type_was_checked_is_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: Callable[[Path], str], told: str
) -> None:
    """The file's type was checked by its name, then the name opened: another program that
    swapped the file for a FIFO between the two held the loop (hooks, at each compaction)
    or the start (--settings) for as long as its writer stayed. The file opened is checked."""
    twin = tmp_path / "twin.json"
    twin.write_text("{}")
    path = tmp_path / "file.json"
    checked_as_regular(path, monkeypatch, twin)
    taken, answers = read_of_fifo(path, lambda: read(path))
    assert not taken, "the FIFO was read"
    assert answers == [told.format(path=path)]
