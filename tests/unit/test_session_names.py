"""A session id as given: checked, and named within bounds when it is refused."""

from __future__ import annotations

import pytest

from baton.core.conversation.session_names import check_session_id
from baton.core.errors import InvalidParams


def test_a_well_formed_id_is_taken_as_it_is() -> None:
    assert check_session_id("s_0123abcd") == "s_0123abcd"


@pytest.mark.parametrize("given", ["../../etc/passwd", "s_\x00", "\ud800", 5])
def test_a_malformed_id_is_refused_naming_it(given: object) -> None:
    with pytest.raises(InvalidParams) as refused:
        check_session_id(given)
    assert refused.value.message == f"invalid session id {given!r}"


def test_a_huge_malformed_id_is_refused_naming_its_start_and_its_length() -> None:
    """A sessionId of a megabyte (every baton/* request takes one) was quoted whole in the
    error's message and again in its problems: two megabytes of answer, shown by a client
    as the error's text."""
    given = "s_" + "a" * 1_000_000
    with pytest.raises(InvalidParams) as refused:
        check_session_id(given)
    message = refused.value.message
    assert len(message) < 300, message[:400]
    assert message.startswith("invalid session id 's_aaa")
    assert "1,000,002 characters" in message
    assert "at most 128" in message
