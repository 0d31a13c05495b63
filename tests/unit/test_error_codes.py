"""One error-code table: the codes the core raises and the wire's table are the same set.

`contract/names.py`'s `ERROR_TABLE` is the table (the JSON-RPC code and meaning of each);
every code in it is a domain error's `code` (`core/errors.py`), except the ones the
transport answers itself (`EDGE_CODES`). A code added on either side alone fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

from baton.contract import names
from baton.core import errors

PROTOCOL_DOC = Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md"


def _subclasses(cls: type[errors.BatonError]) -> set[type[errors.BatonError]]:
    found = {cls}
    for sub in cls.__subclasses__():
        found |= _subclasses(sub)
    return found


def core_codes() -> set[str]:
    """The `code` of BatonError and of every error class derived from it, wherever defined."""
    return {cls.code for cls in _subclasses(errors.BatonError)}


def test_every_core_error_code_is_in_the_wire_table_and_back() -> None:
    table = set(names.ERROR_CODES)
    assert len(table) == len(names.ERROR_TABLE), "a code is listed twice"
    assert core_codes() - table == set(), "a domain error's code is missing from ERROR_TABLE"
    assert table - core_codes() == set(names.EDGE_CODES), "a wire code no domain error raises"
    assert set(names.EDGE_CODES).isdisjoint(core_codes())


def test_the_errors_section_of_protocol_md_names_every_code() -> None:
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    assert set(names.ERROR_CODES) <= set(re.findall(r"`([a-z_]+)`", section))
