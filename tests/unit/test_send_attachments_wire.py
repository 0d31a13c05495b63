"""`baton/session/send` params carry the editor's attachments, in the contract's shape."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from baton.protocol import SendParams


def test_send_params_read_the_attachments_in_camel_case() -> None:
    params = SendParams.model_validate(
        {
            "sessionId": "s1",
            "content": "rename parse_date",
            "attachments": [
                {"kind": "file", "path": "/ws/utils.py", "text": "x = 1\n", "languageId": "python"},
                {
                    "kind": "selection",
                    "path": "file:///ws/app.py",
                    "range": {"startLine": 3, "endLine": 5},
                },
            ],
        }
    )
    assert params.attachments is not None
    first, second = params.attachments
    assert (first.kind, first.path, first.text, first.language_id) == (
        "file",
        "/ws/utils.py",
        "x = 1\n",
        "python",
    )
    assert second.range is not None and (second.range.start_line, second.range.end_line) == (3, 5)
    assert second.text is None
    assert SendParams.model_validate({"sessionId": "s1"}).attachments is None


@pytest.mark.parametrize(
    "attachment",
    [
        {"kind": "folder", "path": "/ws"},
        {"kind": "file", "path": ""},
        {"kind": "selection", "path": "/ws/a.py", "range": {"startLine": 0, "endLine": 2}},
        {"kind": "file"},
    ],
)
def test_a_malformed_attachment_is_refused(attachment: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        SendParams.model_validate({"sessionId": "s1", "attachments": [attachment]})
