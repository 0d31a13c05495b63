"""Images and documents are counted in the API's own units (`media_tokens.py`): the
calibration learns its factor on the text alone and applies it to the text alone, so a
conversation of screenshots teaches the factor its text does, and the meter after a
compaction is the size of the next request with images as without.

The fake API here counts the text of what it was sent (and of its reply) at 1.3 times the
estimator's count, and each image as `image_tokens` figures it."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from test_meter_thinking import Chat, request_with_prompt, without_last_prompt

from baton.cli.main import main
from baton.core.compaction.result import CompactRequest
from baton.core.conversation.messages import (
    ApiUsage,
    DocumentBlock,
    ImageBlock,
    Message,
    MessageInput,
    TextBlock,
    ToolResultBlock,
)
from baton.core.conversation.store import SessionStore
from baton.core.conversation.view_state import holds_media
from baton.core.errors import PromptTooLong
from baton.core.usage.draft import Draft
from baton.core.usage.estimator import Estimator
from baton.core.usage.media_tokens import image_tokens
from baton_testkit.fake_anthropic import FakeAnthropic
from baton_testkit.request_size import prose, raw_size

TEXT_FACTOR = 1.3
# the fake rounds each request's text figure; the factor learned from those moves a hair
# from 1.3, which the meter's figure (some thousands of text tokens) carries as a token or two
ROUNDING = 3


def screenshot(width: int = 1200, height: int = 900) -> dict[str, Any]:
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    data = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + ihdr + b"\x00" * 4
    return {"type": "base64", "media_type": "image/png", "data": base64.b64encode(data).decode()}


def media_in(body: dict[str, Any]) -> int:
    def walk(blocks: Any) -> int:
        if not isinstance(blocks, list):
            return 0
        total = 0
        for block in blocks:
            if block.get("type") == "image":
                total += image_tokens(block["source"])
            elif block.get("type") == "tool_result":
                total += walk(block.get("content"))
        return total

    return sum(walk(m["content"]) for m in body.get("messages") or [])


class TextAtAFactor:
    """The fake's usage: the text of what each request sent at TEXT_FACTOR, images as
    the API counts them."""

    def __init__(self, estimator: Estimator) -> None:
        self.estimator = estimator

    def size(self, body: dict[str, Any]) -> int:
        media = media_in(body)
        return round(TEXT_FACTOR * (raw_size(self.estimator, body) - media)) + media

    def usage(self, body: dict[str, Any], reply: list[dict[str, Any]]) -> dict[str, int]:
        return {
            "input_tokens": self.size(body),
            "output_tokens": round(TEXT_FACTOR * (4 + self.estimator.count_blocks(reply))),
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }


async def chat_of_screenshots(
    tmp_path: Path, estimator: Estimator, fake: FakeAnthropic, images: bool
) -> tuple[Chat, TextAtAFactor]:
    # as restored from a calibration saved before: what a reply teaches then moves it only
    # by its errors, not by the way from 1 to 1.3
    estimator.factor, estimator.observations = TEXT_FACTOR, 1
    chat = Chat(tmp_path, estimator, fake)
    api = TextAtAFactor(estimator)
    fake.prompt_cache = api  # type: ignore[assignment]
    for n in range(10):
        prompt: list[Any] = [TextBlock(text=f"Look {n}: " + prose(1_000 + n, 120))]
        if images:
            prompt.append(ImageBlock(source=screenshot()))
        fake.reply(f"Seen {n}. " + prose(2_000 + n, 200))
        await chat.service.replies.send(chat.sid, prompt)
    return chat, api


async def meter_and_next(chat: Chat, api: TextAtAFactor) -> tuple[int, int]:
    """(the meter now, the fake's size of the next request without its new prompt)."""
    meter = chat.service.usage(chat.sid).used_tokens
    before = len(chat.fake.message_requests())
    prompt = "Next: " + prose(9_999, 40)
    chat.fake.reply("Done. " + prose(7_777, 30))
    await chat.service.replies.send(chat.sid, prompt)
    body = chat.fake.message_requests()[before].body
    return meter, api.size(without_last_prompt(body, prompt))


async def test_screenshots_teach_the_factor_of_the_text(
    tmp_path: Path, estimator: Estimator, cl100k: Any, fake_anthropic: FakeAnthropic
) -> None:
    chat, _ = await chat_of_screenshots(tmp_path / "images", estimator, fake_anthropic, True)
    await chat.service.close()
    text_only = Estimator(encoder=cl100k)
    chat, _ = await chat_of_screenshots(tmp_path / "text", text_only, fake_anthropic, False)
    await chat.service.close()

    assert abs(text_only.factor - TEXT_FACTOR) < 0.005, text_only.factor
    # it fell toward 1.05 with the images in its count (a diluted factor)
    assert abs(estimator.factor - text_only.factor) < 0.005, (estimator.factor, text_only.factor)


async def test_the_meter_after_a_compaction_is_the_next_request_with_screenshots(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    chat, api = await chat_of_screenshots(tmp_path, estimator, fake_anthropic, True)
    try:
        prompts = chat.prompts()
        request = CompactRequest(direction="up_to", pivot_message_id=prompts[5])
        result = await chat.service.compaction.compact(chat.sid, request)
        assert result.post_tokens == chat.service.usage(chat.sid).used_tokens

        meter, sent = await meter_and_next(chat, api)

        assert media_in(fake_anthropic.message_requests()[-1].body) > 0  # images kept and sent
        assert abs(meter - sent) <= ROUNDING, (meter, sent)  # it stood 433 under
    finally:
        await chat.service.close()


async def test_the_meter_after_a_whole_compaction_of_screenshots_is_the_next_request(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    chat, api = await chat_of_screenshots(tmp_path, estimator, fake_anthropic, True)
    try:
        await chat.service.compaction.compact(chat.sid, CompactRequest(direction="all"))

        meter, sent = await meter_and_next(chat, api)

        assert abs(meter - sent) <= ROUNDING, (meter, sent)
    finally:
        await chat.service.close()


async def test_a_drafted_screenshot_counts_as_the_request_that_sends_it(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """The draft's figure is the meter's growth once it is sent: its text at the factor,
    its image as the API counts it (it stood 432 above at a factor of 1.3)."""
    chat, api = await chat_of_screenshots(tmp_path, estimator, fake_anthropic, False)
    try:
        text = "Look again: " + prose(4_242, 60)
        draft = Draft(text=text, attachments=[ImageBlock(source=screenshot())])
        drafted = await chat.service.draft_usage(chat.sid, draft)
        assert drafted.draft is not None
        before = len(fake_anthropic.message_requests())
        fake_anthropic.reply("Seen. " + prose(7_000, 30))
        await chat.service.replies.send(chat.sid, draft.blocks())
        body = fake_anthropic.message_requests()[before].body
        prompt = body["messages"][-1]
        sent = api.size({"messages": [prompt]})

        assert abs(drafted.draft.tokens - sent) <= ROUNDING, (drafted.draft.tokens, sent)
    finally:
        await chat.service.close()


async def test_a_prompt_too_long_of_screenshots_teaches_the_factor_of_the_text(
    tmp_path: Path, estimator: Estimator, fake_anthropic: FakeAnthropic
) -> None:
    """The error's stated size holds the images as the API counts them: what it teaches
    is the text's factor (it fell to 1.24 with the images in its count)."""
    chat, api = await chat_of_screenshots(tmp_path, estimator, fake_anthropic, True)
    try:
        factor = estimator.factor
        session = chat.service.session(chat.sid)
        prompt = "Next: " + prose(9_999, 40)
        body = request_with_prompt(session, prompt)
        size = api.size(body)
        fake_anthropic.prompt_too_long(actual=size, limit=size - 1)

        with pytest.raises(PromptTooLong):
            await chat.service.replies.send(chat.sid, prompt)

        assert fake_anthropic.message_requests()[-1].body["messages"] == body["messages"]
        assert abs(estimator.factor - factor) < 0.005, (estimator.factor, factor)
    finally:
        await chat.service.close()


def test_baton_usage_estimates_a_view_of_screenshots_with_the_images_as_the_api_counts_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, estimator: Estimator
) -> None:
    """`baton usage` of a data dir's transcript (its saved calibration 1.3): the estimate
    of the view alone is its text at the factor and its screenshots as they are (it stood
    432 above with one screenshot)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "calibration.json").write_text('{"factor": 1.3, "observations": 5}\n')
    store = SessionStore(data, estimator.count_message)
    session = store.create(model="claude-sonnet-4-5")
    prompt = [TextBlock(text="Look: " + prose(1, 300)), ImageBlock(source=screenshot())]
    session.append([MessageInput(role="user", content=prompt)])
    reply = MessageInput(
        role="assistant",
        content=[TextBlock(text="Seen. " + prose(2, 100))],
        api_message_id="api_1",
        usage=ApiUsage(input_tokens=2_500, output_tokens=150),
    )
    session.append([reply])
    raw = sum(m.tokens for m in session.view_messages())
    transcript = store.path_for(session.session_id)
    store.close()

    assert main(["usage", str(transcript)]) == 0
    out = capsys.readouterr().out

    (line,) = [x for x in out.splitlines() if x.startswith("Estimate of the view alone")]
    media = image_tokens(screenshot())
    expected = round(TEXT_FACTOR * (raw - media)) + media
    assert f" {expected:,} tokens" in line, (line, expected)


def test_a_tool_results_screenshot_is_kept_apart_from_the_text(estimator: Estimator) -> None:
    """A tool's screenshot (in its result's content) and a PDF are the API's figures as a
    prompt's image is; a document of text is text, at the factor."""
    shot = {"type": "image", "source": screenshot()}
    result = ToolResultBlock(tool_use_id="t1", content=[{"type": "text", "text": "ok"}, shot])
    message = Message(role="user", content=[result])
    text_doc = DocumentBlock(source={"type": "text", "media_type": "text/plain", "data": "a b c"})
    estimator.factor = TEXT_FACTOR

    assert holds_media(message)
    assert estimator.count_message_media(message) == image_tokens(screenshot())
    assert estimator.count_media([text_doc]) == 0
    raw = estimator.count_message(message)
    media = image_tokens(screenshot())
    assert estimator.calibrated(raw, media) == round(TEXT_FACTOR * (raw - media)) + media
