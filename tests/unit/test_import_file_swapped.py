"""The file an import names is read only as the file it was checked to be: another program
that puts a FIFO in its place after the check (`named_file`) is told, never waited on (the
import's thread waited for ever on its open, the request with it), and a larger file put
there is held to the bound the import checks, by the size of the file opened."""

from __future__ import annotations

from pathlib import Path

import pytest
from fifo_probe import checked_as_regular, read_of_fifo

from baton.core.conversation.store import SessionStore
from baton.core.errors import InvalidParams
from baton.core.importers import claude_code_read
from baton.core.importers.claude_code import import_with_report, named_file


@pytest.mark.timeout(60)  # the import waited on the FIFO's open for ever
def test_a_fifo_put_in_its_place_after_the_check_is_not_waited_on(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    twin = tmp_path / "twin.jsonl"
    twin.write_text('{"type": "user"}\n')
    path = tmp_path / "session.jsonl"
    checked_as_regular(path, monkeypatch, twin)

    def imported() -> str:
        with pytest.raises(InvalidParams) as raised:
            import_with_report(named_file(str(path)), plain_store)
        return raised.value.message

    taken, answers = read_of_fifo(path, imported)
    assert not taken, "the FIFO was read"
    assert answers == [f"cannot read {path}: a FIFO, not a regular file"]
    assert plain_store.list() == []


def test_a_file_put_in_its_place_after_the_check_is_held_to_the_bound(
    tmp_path: Path, plain_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size an import is limited to was taken from the name, the file read from the
    name opened after: a larger file put there in between was read whole."""
    small = tmp_path / "small.jsonl"
    small.write_text('{"type": "user"}\n')
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"type": "user"}\n' * 100)
    monkeypatch.setattr(claude_code_read, "MAX_IMPORT_BYTES", 1_000)
    checked_as_regular(path, monkeypatch, small)

    with pytest.raises(InvalidParams) as raised:
        import_with_report(named_file(str(path)), plain_store)
    assert raised.value.message == "session.jsonl is 1,700 bytes; imports are limited to 1,000"
    assert plain_store.list() == []
