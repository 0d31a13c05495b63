// The feed at any size: a 3,700-message view (a 1M-token session) drawn a window at a time,
// its earlier messages asked for once the last page is drawn, the scroll position held
// while heights change and replies stream in, and find, selection, the context menu and
// the keyboard reaching messages that were not drawn.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { longUpdate, longView, SESSION } from "./fixture.mjs";
import { RESULTS, frame, message, openView, posted, toView, useBrowser, waitPosted } from "./view.mjs";

useBrowser();

const VIEW = longView(3700);

/** Open the long view as the host sends it: the last page, then the rest when asked. */
async function openLong(t, theme = "dark") {
  const page = await openView(t, theme);
  const update = longUpdate(VIEW);
  await toView(page, update);
  await message(page, "v3699").waitFor();
  const ask = await waitPosted(page, (m) => m.type === "loadEarlier");
  assert.deepEqual(ask, { type: "loadEarlier", sessionId: update.session.sessionId, before: update.offset });
  await toView(page, {
    type: "earlier",
    sessionId: update.session.sessionId,
    messages: VIEW.slice(0, update.offset),
    totalMessages: VIEW.length,
  });
  await page.waitForFunction(() => document.querySelector(".baton-feed article[aria-posinset]"));
  return page;
}

const drawn = (page) => page.$$eval("article[data-message-id]", (els) => els.map((el) => el.dataset.messageId));
const elements = (page) => page.evaluate(() => document.getElementsByTagName("*").length);
const feed = (page) => page.locator(".baton-feed");

/** The first drawn message whose top is at or below the feed's top, and where it is. */
const topMessage = (page) =>
  page.evaluate(() => {
    const f = document.querySelector(".baton-feed");
    const top = f.getBoundingClientRect().top;
    for (const el of f.querySelectorAll("article[data-message-id]")) {
      const y = el.getBoundingClientRect().top - top;
      if (y >= 0) return { id: el.dataset.messageId, y };
    }
    return null;
  });

test("a 3,700-message view draws only what is near the viewport, and every message can be scrolled to", async (t) => {
  const page = await openLong(t);
  const atOpen = await drawn(page);
  assert.ok(atOpen.includes("v3699"), "the last message is drawn");
  assert.ok(atOpen.length < 80, `only a window is drawn (${atOpen.length})`);
  assert.ok(!atOpen.includes("v0"));
  assert.ok((await elements(page)) < 3000, "DOM elements stay under 3,000");
  // The last message says where it sits in the whole view, for assistive technology.
  assert.equal(await message(page, "v3699").getAttribute("aria-posinset"), "3700");
  assert.equal(await message(page, "v3699").getAttribute("aria-setsize"), "3700");
  const end = await feed(page).evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
  assert.ok(end < 24, "it opens at the end");

  // Scroll to the top: the first messages are drawn, the last ones are gone.
  for (let i = 0; i < 5 && !(await drawn(page)).includes("v0"); i++) {
    await feed(page).evaluate((el) => (el.scrollTop = 0));
    await frame(page);
  }
  const atTop = await drawn(page);
  assert.ok(atTop.includes("v0") && !atTop.includes("v3699"));
  assert.ok((await elements(page)) < 3000);
  // A message drawn after scrolling renders like any other.
  assert.match(await message(page, "v3").locator("pre.baton-code").textContent(), /def f3/);
});

test("the scroll position holds while heights change above it and a reply streams in below", async (t) => {
  const page = await openLong(t);
  await feed(page).evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
  await frame(page);
  const before = await topMessage(page);
  assert.ok(before, "a message is at the top");
  // A drawn message above the viewport grows (its tool call opened).
  const grown = await page.evaluate((id) => {
    const f = document.querySelector(".baton-feed");
    const above = [...f.querySelectorAll("article[data-message-id]")].filter(
      (el) => el.getBoundingClientRect().bottom < f.getBoundingClientRect().top && el.querySelector("details"),
    );
    const el = above.at(-1);
    if (!el) return null;
    el.querySelector("details").open = true;
    return el.dataset.messageId;
  }, before.id);
  assert.ok(grown, "a message with a tool call is drawn above the viewport");
  await frame(page);
  await frame(page);
  const after = await topMessage(page);
  assert.equal(after.id, before.id);
  assert.ok(Math.abs(after.y - before.y) <= 1, `stayed at ${before.y}px (now ${after.y}px)`);

  // A reply streaming in at the end does not move a reader who scrolled up.
  await toView(page, { type: "busy", busy: true, sessionId: "s_demo" });
  for (let i = 0; i < 5; i++) {
    await toView(page, { type: "delta", sessionId: "s_demo", messageId: "m_new", text: `Streaming line ${i}\n\n` });
    await frame(page);
  }
  const streamed = await topMessage(page);
  assert.equal(streamed.id, before.id);
  assert.ok(Math.abs(streamed.y - before.y) <= 1);

  // At the end it stays at the end as the reply grows.
  await feed(page).evaluate((el) => (el.scrollTop = el.scrollHeight));
  await frame(page);
  for (let i = 0; i < 5; i++) {
    await toView(page, { type: "delta", sessionId: "s_demo", messageId: "m_new", text: "More text.\n\n".repeat(3) });
    await frame(page);
  }
  const gap = await feed(page).evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
  assert.ok(gap < 24, `still at the end (${gap}px from it)`);
  assert.match(await page.locator(".baton-pending").last().textContent(), /Streaming line 4/);
});

/** Scroll the long view to message `id`, near the top of the viewport (as a reader left it). */
async function readAt(page, id) {
  await page.keyboard.press("Control+f");
  await page.locator(".baton-find-input").fill(`Prompt ${id.slice(1)}:`);
  await message(page, id).waitFor();
  await page.keyboard.press("Escape");
  await frame(page, 3);
  const at = await topMessage(page);
  assert.equal(at.id, id);
  return at;
}

test("a compaction of a long session keeps the place being read once the messages before its last page come", async (t) => {
  const page = await openLong(t);
  const before = await readAt(page, "v2500");
  // up to v1999: the view is its summary and v2000 on, and comes as its last page first
  const summary = { id: "m_sum", role: "user", kind: "summary", boundaryId: "bnd_long", content: [{ type: "text", text: "The summary." }], createdAt: "2026-12-01T09:30:00Z", tokens: 500 };
  const compacted = [summary, ...VIEW.slice(2000)];
  const update = longUpdate(compacted);
  const from = (await posted(page)).length;
  await toView(page, { ...update, session: { ...update.session, compactions: 1 } });
  const ask = await waitPosted(page, (m) => m.type === "loadEarlier", from);
  assert.equal(ask.before, update.offset);
  await toView(page, { type: "earlier", sessionId: SESSION.sessionId, messages: compacted.slice(0, update.offset), totalMessages: compacted.length });
  await frame(page, 3);
  const after = await topMessage(page);
  assert.equal(after.id, "v2500", "the message being read, not the end");
  assert.ok(Math.abs(after.y - before.y) <= 1, `at ${before.y}px (now ${after.y}px)`);
  assert.equal(await message(page, "v2500").getAttribute("aria-posinset"), "502");
});

test("in a long session, the message the keyboard is on, compacted, hands the focus on once the messages before the last page come", async (t) => {
  const page = await openLong(t);
  await readAt(page, "v2500");
  await message(page, "v2500").click({ position: { x: 4, y: 4 } });
  await page.keyboard.press("ArrowUp");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.messageId), "v2499");
  // Compact Up To Here on it: the view is a summary and v2500 on, its last page first
  const summary = { id: "m_sum", role: "user", kind: "summary", boundaryId: "bnd_long", content: [{ type: "text", text: "The summary." }], createdAt: "2026-12-01T09:30:00Z", tokens: 500 };
  const compacted = [summary, ...VIEW.slice(2500)];
  const update = longUpdate(compacted);
  const from = (await posted(page)).length;
  await toView(page, update);
  await waitPosted(page, (m) => m.type === "loadEarlier", from);
  await toView(page, { type: "earlier", sessionId: SESSION.sessionId, messages: compacted.slice(0, update.offset), totalMessages: compacted.length });
  await frame(page, 3);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.messageId), "v2500", "the first message after it, not the last page's");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.messageId), "v2501");
});

test("a long session reloaded comes back at the place being read, in the messages before its last page", async (t) => {
  const page = await openLong(t);
  await readAt(page, "v2500");
  await feed(page).evaluate((el) => (el.scrollTop += 40)); // a scroll of the reader's: the place is saved
  await page.waitForFunction(() => JSON.parse(sessionStorage.getItem("vscode-webview-state") ?? "{}").scrollTop > 0);
  await frame(page, 2);
  const before = await topMessage(page);
  await page.reload();
  await waitPosted(page, (m) => m.type === "ready");
  const update = longUpdate(VIEW);
  await toView(page, update);
  await waitPosted(page, (m) => m.type === "loadEarlier");
  await toView(page, { type: "earlier", sessionId: SESSION.sessionId, messages: VIEW.slice(0, update.offset), totalMessages: VIEW.length });
  await frame(page, 3);
  const after = await topMessage(page);
  assert.equal(after.id, before.id, "the message being read, not the first ones");
  assert.ok(Math.abs(after.y - before.y) <= 1, `at ${before.y}px (now ${after.y}px)`);
});

test("find searches every message, drawn or not, and jumping to a hit draws it", async (t) => {
  const page = await openLong(t);
  await feed(page).click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("Control+f");
  const input = page.locator(".baton-find-input");
  assert.equal(await input.evaluate((el) => el === document.activeElement), true, "Ctrl+F focuses the find box");
  assert.ok(!(await drawn(page)).includes("v120"));
  await input.fill("prompt 120:");
  await message(page, "v120").waitFor();
  assert.equal(await page.locator(".baton-find-count").textContent(), "1 of 1 messages");
  const visible = await message(page, "v120").evaluate((el) => {
    const f = el.closest(".baton-feed").getBoundingClientRect();
    const r = el.getBoundingClientRect();
    return r.top >= f.top - 1 && r.top < f.bottom;
  });
  assert.ok(visible, "the hit is scrolled into view");
  assert.ok(await page.evaluate(() => CSS.highlights.get("baton-find-current")?.size === 1), "the match is highlighted");

  // Many hits: Enter steps to the next, Shift+Enter back.
  await input.fill("needle-1001");
  assert.equal(await page.locator(".baton-find-count").textContent(), "1 of 1 messages");
  await input.fill("prompt 10");
  // The first hit is the first at or after the message the reader is at (v1001 now).
  const count = await page.locator(".baton-find-count").textContent();
  const [, at, total] = /^(\d+) of (\d+) messages$/.exec(count).map(Number);
  assert.equal(total, 28, count); // Prompt 100, 104, 108 and 1000-1096
  assert.equal(at, 4, count); // Prompt 1000
  await input.press("Enter");
  assert.equal(await page.locator(".baton-find-count").textContent(), `${at + 1} of 28 messages`);
  await message(page, "v1004").waitFor();
  await input.press("Shift+Enter");
  await input.press("Shift+Enter");
  assert.equal(await page.locator(".baton-find-count").textContent(), `${at - 1} of 28 messages`);
  await message(page, "v108").waitFor();

  // A match only inside a folded tool result opens it.
  await input.fill("line one of f1002");
  await message(page, "v1002").waitFor();
  assert.equal(await message(page, "v1002").locator("details[open]").count(), 1);
  await input.fill("no such words anywhere");
  assert.equal(await page.locator(".baton-find-count").textContent(), "No results");
  await input.press("Escape");
  assert.equal(await page.locator(".baton-find").isHidden(), true);
});

test("selection, the context menu and the keyboard reach messages that were not drawn", async (t) => {
  const page = await openLong(t);
  await page.keyboard.press("Control+f");
  const input = page.locator(".baton-find-input");
  await input.fill("prompt 120:");
  await message(page, "v120").click({ position: { x: 4, y: 4 } });
  await input.fill("prompt 132:");
  const from = (await posted(page)).length;
  await message(page, "v132").click({ position: { x: 4, y: 4 }, modifiers: ["Shift"] });
  const selection = await waitPosted(page, (m) => m.type === "selection" && m.messageIds.length > 1, from);
  assert.deepEqual(
    selection.messageIds,
    Array.from({ length: 13 }, (_, i) => `v${120 + i}`),
  );
  // Right-click on a message reached by find: its own context, for Compact up to here.
  await message(page, "v132").click({ button: "right", position: { x: 4, y: 4 } });
  const menu = await page.evaluate(() => window.__baton.contextMenus.at(-1));
  assert.equal(menu.messageId, "v132");
  assert.equal(menu.webviewSection, "message");
  // The keyboard: End goes to the last message, Home to the first, drawing each.
  await message(page, "v132").focus();
  await page.keyboard.press("End");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.messageId), "v3699");
  await page.keyboard.press("Home");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.messageId), "v0");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.messageId), "v1");
  assert.ok((await elements(page)) < 3000);
});

for (const theme of ["dark", "light", "hc"]) {
  test(`the long view and its find box in the ${theme} theme`, async (t) => {
    const page = await openLong(t, theme);
    await page.keyboard.press("Control+f");
    await page.locator(".baton-find-input").fill("prompt 2400:");
    await message(page, "v2400").waitFor();
    const style = await page.locator(".baton-find-input").evaluate((el) => getComputedStyle(el).color);
    assert.notEqual(style, "", "the find box takes the theme's colours");
    await page.screenshot({ path: join(RESULTS, `webview-long-find-${theme}.png`) });
  });
}
