"""A session loaded in an agent panel while another Baton process writes it (another
editor's `baton acp`, `baton serve`) is read-only there; once that process lets go, a
prompt works, and its request carries the turns that process added. ACP has no reload:
the agent tells them before the turn's own updates, after a word that they were added
elsewhere, so the panel holds what the request carries. A view changed there before the
last message the panel holds (compacted, or undone) is not told again: a word says to
load it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton_testkit.acp_client import running_agent
from baton_testkit.fake_anthropic import FakeAnthropic

ELSEWHERE = "Added in another Baton process since this panel showed the conversation:"


def texts(updates: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The user and agent chunks told, in order, one per message (pieces joined)."""
    out: list[tuple[str, str, str]] = []
    for update in updates:
        kind = update["sessionUpdate"]
        if kind not in {"user_message_chunk", "agent_message_chunk"}:
            continue
        if out and out[-1][1] == update["messageId"]:
            out[-1] = (kind, out[-1][1], out[-1][2] + update["content"]["text"])
        else:
            out.append((kind, update["messageId"], update["content"]["text"]))
    return [(kind.split("_")[0], text) for kind, _, text in out]


async def test_turns_another_process_added_are_told_before_the_reply(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The request carried a prompt and a reply the panel had never shown."""
    async with running_agent(tmp_path, fake_anthropic.base_url) as writer:
        sid = await writer.new()
        fake_anthropic.reply("First answer.")
        await writer.say(sid, "first question")
        async with running_agent(tmp_path, fake_anthropic.base_url, name="b") as viewer:
            await viewer.conn.load_session(cwd=str(viewer.workspace), session_id=sid)
            loaded = len(viewer.recorder.updates(sid))
            fake_anthropic.reply("Second answer.")
            await writer.say(sid, "second question, asked elsewhere")
            await writer.conn.close_session(session_id=sid)  # it lets go
            fake_anthropic.reply("Third answer.")

            answer = await viewer.say(sid, "third question")

            assert answer.stop_reason == "end_turn"
            sent = fake_anthropic.message_requests()[-1].body["messages"]
            assert [m["content"][0]["text"] for m in sent] == [
                "first question",
                "First answer.",
                "second question, asked elsewhere",
                "Second answer.",
                "third question",
            ]
            assert texts(viewer.recorder.updates(sid)[loaded:]) == [
                ("agent", ELSEWHERE),
                ("user", "second question, asked elsewhere"),
                ("agent", "Second answer."),
                ("agent", "Third answer."),
            ]
            fake_anthropic.reply("Fourth answer.")
            told = len(viewer.recorder.updates(sid))
            await viewer.say(sid, "fourth question")  # nothing new elsewhere: nothing told
            assert texts(viewer.recorder.updates(sid)[told:]) == [("agent", "Fourth answer.")]


async def test_a_view_changed_elsewhere_before_what_the_panel_holds_says_to_load_again(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    async with running_agent(tmp_path, fake_anthropic.base_url) as writer:
        sid = await writer.new()
        for n in range(3):
            fake_anthropic.reply(f"Answer {n}.")
            await writer.say(sid, f"question {n}")
        async with running_agent(tmp_path, fake_anthropic.base_url, name="b") as viewer:
            await viewer.conn.load_session(cwd=str(viewer.workspace), session_id=sid)
            loaded = len(viewer.recorder.updates(sid))
            fake_anthropic.reply("<summary>Two questions were asked.</summary>")
            assert (await writer.say(sid, "/compact-up-to 4")).stop_reason == "end_turn"
            assert writer.recorder.updates(sid, "compaction_update")[-1]["status"] == "completed"
            await writer.conn.close_session(session_id=sid)
            fake_anthropic.reply("After the compaction.")

            await viewer.say(sid, "go on")

            said = texts(viewer.recorder.updates(sid)[loaded:])
            assert said[0][0] == "agent" and "load it again" in said[0][1]
            assert said[1:] == [("agent", "After the compaction.")]
