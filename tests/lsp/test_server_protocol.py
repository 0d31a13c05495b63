"""The contract in protocol.py and the one in docs/PROTOCOL.md name the same things."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton import protocol

DOC = Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md"


def constants(prefix: str = "") -> list[str]:
    return [
        value
        for name, value in vars(protocol).items()
        if name.isupper() and isinstance(value, str) and value.startswith(prefix)
    ]


@pytest.mark.parametrize("name", constants("baton/") + constants("baton."))
def test_every_method_notification_and_command_constant_is_in_the_protocol_doc(name: str) -> None:
    assert f"`{name}`" in DOC.read_text(encoding="utf-8")


@pytest.mark.parametrize("code", protocol.ERROR_CODES)
def test_every_error_code_is_in_the_protocol_doc(code: str) -> None:
    assert f"`{code}`" in DOC.read_text(encoding="utf-8")


def test_the_grouped_lists_hold_every_constant() -> None:
    grouped = set(protocol.REQUESTS) | set(protocol.NOTIFICATIONS) | set(protocol.COMMANDS)
    grouped |= set(protocol.SERVER_REQUESTS)
    assert grouped == set(constants("baton/")) | set(constants("baton."))


def test_session_uris_round_trip_and_other_uris_name_no_session() -> None:
    uri = protocol.session_uri("s_0123abcd")
    assert uri == "baton:/sessions/s_0123abcd.md"
    assert protocol.session_id_from_uri(uri) == "s_0123abcd"
    assert protocol.session_id_from_uri("baton:///sessions/s_1.md") == "s_1"
    assert protocol.session_id_from_uri("file:///sessions/s_1.md") is None
    assert protocol.session_id_from_uri("baton:/sessions/../x.md") is None
