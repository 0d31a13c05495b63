// Reading a long session: terminal escape codes never shown, a disclosure opens without
// selecting its message, and "Unattributed" in the chart drawn as a figure, not an alarm.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { SESSION, sessionUpdate } from "./fixture.mjs";
import { RESULTS, message, openView, posted, showFixture, toView, useBrowser } from "./view.mjs";

useBrowser();

const MESSAGES = [
  { id: "q", role: "user", kind: "message", content: [{ type: "text", text: "Run the tests" }], tokens: 5 },
  {
    id: "call",
    role: "assistant",
    kind: "message",
    content: [{ type: "tool_use", id: "tu_1", name: "Bash", input: { command: "pytest" } }],
    tokens: 20,
  },
  {
    id: "out",
    role: "user",
    kind: "message",
    content: [
      {
        type: "tool_result",
        tool_use_id: "tu_1",
        content: "\x1b[1m\x1b[31mFAILED\x1b[0m tests/test_x.py::test_y\x1b]0;pytest\x07 - \x1b[32m1 passed\x1b[0m\x1b[K",
      },
    ],
    tokens: 30,
  },
];

async function show(t, theme = "dark") {
  const page = await openView(t, theme);
  await toView(page, sessionUpdate({ messages: MESSAGES, session: { ...SESSION, compactions: 0 } }));
  await message(page, "out").waitFor();
  return page;
}

test("a tool's output is shown without its terminal escape codes", async (t) => {
  const page = await show(t);
  await message(page, "out").locator("summary").click();
  const text = await message(page, "out").locator(".baton-tool-body code").first().textContent();
  assert.equal(text, "FAILED tests/test_x.py::test_y - 1 passed");
  assert.ok(!text.includes("\x1b"));
});

test("a click on a disclosure opens it without selecting the message", async (t) => {
  const page = await show(t);
  const before = (await posted(page)).filter((m) => m.type === "selection").length;
  await message(page, "call").locator("summary").click();
  assert.equal(await message(page, "call").locator("details").evaluate((el) => el.open), true);
  assert.equal(await message(page, "call").evaluate((el) => el.classList.contains("selected")), false);
  const after = (await posted(page)).filter((m) => m.type === "selection");
  assert.equal(after.length, before, "no selection was posted");
});

for (const theme of ["dark", "light", "hc"]) {
  test(`"Unattributed" in the chart is not drawn in the alarm colour (${theme})`, async (t) => {
    const page = await show(t, theme);
    const seg = page.locator(".baton-usage-stack .cat-unattributed");
    const style = await seg.evaluate((el) => {
      const s = getComputedStyle(el);
      const red = getComputedStyle(document.documentElement).getPropertyValue("--vscode-charts-red").trim();
      const probe = document.createElement("span");
      probe.style.color = red;
      document.body.appendChild(probe);
      const redRgb = getComputedStyle(probe).color;
      probe.remove();
      return { background: s.backgroundColor, image: s.backgroundImage, redRgb };
    });
    assert.notEqual(style.background, style.redRgb);
    assert.match(style.image, /repeating-linear-gradient/);
    assert.ok(!style.image.includes(style.redRgb), "the hatch is not red");
    await page.locator(".baton-usage > summary").click();
    await page.screenshot({ path: join(RESULTS, `webview-reading-${theme}.png`) });
  });
}

test("a long paste in a prompt is folded with its size; a short prompt is not", async (t) => {
  const page = await openView(t);
  const paste = Array.from({ length: 300 }, (_, i) => `line ${i} of the log`).join("\n");
  const messages = [
    { id: "short", role: "user", kind: "message", content: [{ type: "text", text: "Why does this fail?" }], tokens: 5 },
    { id: "reply", role: "assistant", kind: "message", content: [{ type: "text", text: "Paste the log." }], tokens: 5 },
    { id: "long", role: "user", kind: "message", content: [{ type: "text", text: paste }], tokens: 3000 },
  ];
  await toView(page, sessionUpdate({ messages, session: { ...SESSION, compactions: 0 } }));
  await message(page, "long").waitFor();
  assert.equal(await message(page, "short").locator("details").count(), 0);
  const fold = message(page, "long").locator("details.baton-paste");
  assert.match(await fold.locator("summary").textContent(), /Pasted text 300 lines · 5\.\dK characters\s*line 0 of the log/);
  assert.equal(await message(page, "long").getByText("line 299 of the log").count(), 0, "folded: not drawn");
  await fold.locator("summary").click();
  await message(page, "long").getByText("line 299 of the log").waitFor();
  // The panel's find still reaches it: a match inside a closed paste opens it.
  await page.locator("details.baton-paste").evaluate((el) => (el.open = false));
  await page.keyboard.press("Control+f");
  await page.locator(".baton-find-input").fill("line 150 of the log");
  assert.equal(await page.locator(".baton-find-count").textContent(), "1 of 1 messages");
  assert.equal(await fold.evaluate((el) => el.open), true);
});

test("a summary's title says what it replaced: the earlier conversation, the later one, or a part", async (t) => {
  const page = await openView(t);
  const say = (id, role, text) => ({ id, role, kind: "message", content: [{ type: "text", text }], tokens: 5 });
  const summary = (id, boundaryId) => ({
    id,
    role: "user",
    kind: "summary",
    boundaryId,
    content: [{ type: "text", text: "<summary>\nWhat happened.\n</summary>" }],
    tokens: 50,
  });
  const messages = [
    summary("s_first", "b1"),
    say("u1", "user", "Next question"),
    say("a1", "assistant", "An answer"),
    summary("s_mid", "b2"),
    say("u2", "user", "Later question"),
    say("a2", "assistant", "Another answer"),
    summary("s_last", "b3"),
  ];
  await toView(page, sessionUpdate({ messages, session: { ...SESSION, compactions: 3 } }));
  await message(page, "s_last").waitFor();
  const title = (id) => message(page, id).locator(".baton-summary > summary span").first().textContent();
  assert.equal(await title("s_first"), "Earlier conversation summarized");
  assert.equal(await title("s_mid"), "Part of the conversation summarized");
  assert.equal(await title("s_last"), "Later conversation summarized");
});

test("the find box closed with Escape leaves the focus on the match it showed, or where it was before", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const where = () =>
    page.evaluate(() => {
      const el = document.activeElement;
      return el?.closest("article")?.dataset.messageId ?? el?.id ?? el?.tagName;
    });
  await page.locator("#baton-input").focus();
  await page.keyboard.press("Control+f");
  await page.keyboard.type("subtracted before");
  assert.equal(await page.locator(".baton-find-count").textContent(), "1 of 1 messages");
  await page.keyboard.press("Escape");
  assert.equal(await page.locator(".baton-find").isHidden(), true);
  assert.equal(await where(), "m_asst1", "on the message found");
  // nothing found: back where the user was
  await page.locator("#baton-input").focus();
  await page.keyboard.press("Control+f");
  await page.keyboard.press("Control+a");
  await page.keyboard.type("no such words anywhere");
  await page.keyboard.press("Escape");
  assert.equal(await where(), "baton-input");
});
