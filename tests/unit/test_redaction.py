"""The key taken out of log lines: message, arguments, exception text, escaped forms."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from baton.core import redaction

KEY = "plain-key-with/odd:chars'\"9"


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("test-redaction")
    logger.addHandler(handler)
    logger.propagate = False
    redaction.remember(KEY)
    redaction.install(logger)
    yield logger, stream
    logger.removeHandler(handler)


def test_every_form_of_the_key_is_taken_out(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured
    logger.warning("key %s", KEY)
    logger.warning("params %r", {"anthropicApiKey": KEY})
    logger.warning("payload %s", json.dumps({"k": KEY}))
    try:
        raise ValueError(f"echoed {KEY}")
    except ValueError:
        logger.exception("failed")
    text = stream.getvalue()
    assert "odd:chars" not in text
    assert text.count(redaction.REDACTED) >= 4
    assert "ValueError" in text


def test_error_texts_are_redacted_and_short_values_ignored() -> None:
    redaction.remember("abc")
    redaction.remember(KEY)
    assert redaction.redact(f"error: {KEY}!") == "error: [redacted]!"
    assert redaction.redact("abc") == "abc"
