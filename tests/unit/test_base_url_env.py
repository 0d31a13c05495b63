"""An endpoint taken from the environment is checked as the setting is: a send names the
variable to fix rather than failing as a connection error far from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.core.errors import ApiError
from baton.core.service.service import BatonService
from baton.core.settings import Settings

KEY = "sk-ant-test-base-url-000000000000"


async def test_a_send_with_no_url_in_the_environment_endpoint_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "localhost:8080")
    service = BatonService(Settings(data_dir=str(tmp_path)), api_key=KEY)
    sid = service.create().session_id
    with pytest.raises(ApiError) as caught:
        await service.replies.send(sid, "hi")
    message = caught.value.message
    assert "ANTHROPIC_BASE_URL" in message and "http:// or https://" in message
    assert "UnsupportedProtocol" not in message
    await service.close()


async def test_the_setting_wins_over_a_bad_endpoint_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "localhost:8080")
    service = BatonService(
        Settings(data_dir=str(tmp_path), anthropic_base_url="http://127.0.0.1:9"), api_key=KEY
    )
    assert service.models.client(service.settings) is not None
    await service.close()
