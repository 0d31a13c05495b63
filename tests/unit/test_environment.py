"""The numbers read from the environment: seconds in their range, else the default and
one warning that names the variable and the range."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from baton.acp.open_sessions import permission_wait
from baton.core.service.model_access import api_timeout
from baton.lsp.transport.admission import token_timeout

READERS: list[tuple[Callable[[], float], str, float, float]] = [  # read, variable, default, max
    (api_timeout, "BATON_API_TIMEOUT", 600.0, 86_400.0),
    (permission_wait, "BATON_ACP_PERMISSION_WAIT", 300.0, 86_400.0),
    (token_timeout, "BATON_TOKEN_TIMEOUT", 5.0, 600.0),
]


@pytest.mark.parametrize(("read", "name", "default", "maximum"), READERS)
@pytest.mark.parametrize("raw", ["1e300", "past", "inf", "nan", "-5", "0", "soon", "9" * 500])
def test_a_value_out_of_range_warns_naming_the_variable_and_takes_the_default(
    read: Callable[[], float],
    name: str,
    default: float,
    maximum: float,
    raw: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """BATON_API_TIMEOUT=1e300 was taken (a request that never times out), as was
    BATON_ACP_PERMISSION_WAIT=1e300; a bad permission wait was dropped without a word."""
    monkeypatch.setenv(name, f"{maximum + 1:g}" if raw == "past" else raw)
    with caplog.at_level(logging.WARNING):
        assert read() == default
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"{name}=")
    assert f"is not a number of seconds in (0, {maximum:g}]: using {default:g}" in warnings[0]
    assert len(warnings[0]) < 200


@pytest.mark.parametrize(("read", "name", "default", "maximum"), READERS)
@pytest.mark.parametrize("raw", ["", "0.5", "max"])
def test_a_value_in_range_is_taken_without_a_word(
    read: Callable[[], float],
    name: str,
    default: float,
    maximum: float,
    raw: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    given = f"{maximum:g}" if raw == "max" else raw
    monkeypatch.setenv(name, given)
    with caplog.at_level(logging.WARNING):
        assert read() == (float(given) if given else default)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
