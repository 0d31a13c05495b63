"""A request over the API's 32 MB of body, however few its tokens: eight screenshots of
4.9 MB are about 13K tokens but 39 MB of base64, which the API refuses (413
request_too_large) in every turn that holds them. It is refused before it is sent, in words
that name the images and their bytes and the way out."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest

from baton.acp.errors import told
from baton.core.conversation.media import MAX_REQUEST_BYTES
from baton.core.conversation.messages import MessageInput
from baton.core.conversation.session import Session
from baton.core.conversation.store import SessionStore
from baton.core.errors import PromptTooLong
from baton.core.model_api.client import AnthropicClient
from baton.core.settings import Settings
from baton.core.turn.chat import ChatContext, send
from baton.core.usage.estimator import Estimator
from baton_testkit.fake_anthropic import FakeAnthropic

MakeClient = Callable[..., AnthropicClient]
PNG_HEAD = b"\x89PNG\r\n\x1a\n"
# a screenshot's worth of base64 under the API's 5 MB per image: seven pass 32 MB together
SHOT = base64.b64encode(PNG_HEAD + bytes(range(256)) * (3_600_000 // 256)).decode()


def _shot(n: int) -> MessageInput:
    image = {"type": "base64", "media_type": "image/png", "data": SHOT}
    content = [{"type": "image", "source": image}, {"type": "text", "text": f"shot {n}"}]
    return MessageInput(role="user", content=content)


@pytest.fixture
def session(store: SessionStore) -> Session:
    session = store.create("screenshots", "claude-haiku-4-5", "You are careful.")
    for n in range(7):
        session.append([_shot(n), MessageInput(role="assistant", content=f"seen {n}")])
    return session


async def test_a_request_over_32_mb_is_refused_before_it_is_sent_naming_the_images(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    assert len(SHOT) * 7 > MAX_REQUEST_BYTES
    ctx = ChatContext(settings=Settings(), estimator=estimator, client=anthropic_client())
    with pytest.raises(PromptTooLong) as caught:
        await send(session, content="and now?", tools=None, ctx=ctx)

    message = caught.value.message
    assert fake_anthropic.message_requests() == []  # never sent: the API would refuse it
    assert f"7 images it holds are {len(SHOT) * 7:,} bytes" in message
    assert f"{MAX_REQUEST_BYTES:,}" in message and "32 MB" in message
    assert "remove" in message and "ompact" in message
    assert "too long for the model" not in message
    assert caught.value.data["requestBytes"] > MAX_REQUEST_BYTES
    assert caught.value.data["mediaBytes"] == len(SHOT) * 7
    assert (caught.value.data["images"], caught.value.data["documents"]) == (7, 0)
    assert estimator.observations == 0  # no token figure to learn from


async def test_the_apis_413_for_bytes_names_the_images_not_the_models_context(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    store: SessionStore,
    estimator: Estimator,
) -> None:
    """A proxy on the way, or a limit lower than Baton's figure, refuses the request for
    its bytes: said as that, with the images it held, asked once and learnt nothing from."""
    fake_anthropic.max_body_bytes = 4 * 1024 * 1024
    session = store.create("one shot", "claude-haiku-4-5", "You are careful.")
    ctx = ChatContext(settings=Settings(), estimator=estimator, client=anthropic_client())
    with pytest.raises(PromptTooLong) as caught:
        await send(session, content=_shot(0).content, tools=None, ctx=ctx)

    message = caught.value.message
    assert "too long for the model" not in message
    assert "size in bytes" in message and "32 MB" in message  # the API's own words
    assert f"1 image it held is {len(SHOT):,} bytes of base64" in message
    assert "rewind to before them" in message
    assert caught.value.data["type"] == "request_too_large"
    assert (caught.value.data["images"], caught.value.data["mediaBytes"]) == (1, len(SHOT))
    assert len(fake_anthropic.message_requests()) == 1  # not asked again
    assert estimator.observations == 0


async def test_an_acp_client_is_told_its_own_way_out(
    fake_anthropic: FakeAnthropic,
    anthropic_client: MakeClient,
    session: Session,
    estimator: Estimator,
) -> None:
    """An agent's client has no rewind and no send with no content: /compact-up-to a
    message after the images, then the prompt again."""
    ctx = ChatContext(settings=Settings(), estimator=estimator, client=anthropic_client())
    with pytest.raises(PromptTooLong) as caught:
        await send(session, content="and now?", tools=None, ctx=ctx)

    text = told(caught.value)
    assert "7 images it holds" in text and "/compact-up-to a message after them" in text
    assert "rewind" not in text and "no content" not in text
