// A message too long to draw whole (a pasted log, a tool's output of megabytes) is drawn as
// its first part with a line that says how much shows: Show more, Copy all, Open in editor.
// The panel never draws all of it at once, and every character stays reachable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { SESSION, longView, sessionUpdate } from "./fixture.mjs";
import { RESULTS, frame, message, openView, posted, toView, useBrowser, waitPosted } from "./view.mjs";

useBrowser();

/** The most of a long text the view draws at first (webview/longText.ts). */
const LIMIT = 100_000;
/** Room for a message's header and the clip line besides the text drawn. */
const CHROME = 600;

/** `count` log lines (about 70 characters each), the last one saying `last`. */
function logLines(count, last = "the last line") {
  const lines = Array.from({ length: count - 1 }, (_, i) => `2026-12-01 10:00:${String(i % 60).padStart(2, "0")} INFO worker-${i % 17} request ${i} handled`);
  lines.push(last);
  return lines.join("\n");
}

// A reply of about 2.5 MB: a fenced block of log lines, then a sentence.
const REPLY = "Here is the log:\n\n```\n" + logLines(40_000, "end-of-log marker") + "\n```\n\nThat is all of it.";
const total = (text) => text.length.toLocaleString("en-US");

const say = (id, role, content) => ({ id, role, kind: "message", content, tokens: 10, createdAt: "2026-12-01T10:00:00Z" });
const text = (t) => ({ type: "text", text: t });

async function show(page, messages) {
  await toView(page, sessionUpdate({ messages, session: { ...SESSION, compactions: 0 } }));
  await message(page, messages.at(-1).id).waitFor();
}

const drawnLength = (locator) => locator.evaluate((el) => (el.textContent ?? "").length);

test("a reply of megabytes draws its first part and says how much of it shows", async (t) => {
  const page = await openView(t, "dark", { width: 420, height: 900 });
  await show(page, [say("ask", "user", [text("Show me the log.")]), say("long", "assistant", [text(REPLY)])]);
  const article = message(page, "long");
  const clip = article.locator(".baton-clip");
  assert.equal(await clip.count(), 1);
  assert.ok((await drawnLength(article)) <= LIMIT + CHROME, "at most the limit's characters drawn");
  assert.match(await clip.textContent(), new RegExp(`Showing the first 99,\\d{3} of ${total(REPLY)} characters\\.`));
  assert.equal(await article.getByText("end-of-log marker").count(), 0);
  // the block the cut falls in offers nothing that would take a part of it for the whole
  const cut = article.locator("pre.baton-code").last();
  assert.equal(await cut.locator(".baton-copy, .baton-insert, .baton-apply").count(), 0);

  await clip.getByRole("button", { name: "Show more" }).click();
  await frame(page);
  const more = await drawnLength(article);
  assert.ok(more > LIMIT + CHROME && more <= 2 * LIMIT + CHROME, `the next part drawn (${more} characters)`);
  assert.match(await clip.textContent(), new RegExp(`Showing the first 199,\\d{3} of ${total(REPLY)} characters\\.`));
  await clip.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(RESULTS, "webview-long-text.png") });
});

test("Copy all copies the whole text; Open in editor asks the host for the message's lines", async (t) => {
  const page = await openView(t);
  await show(page, [say("ask", "user", [text("Show me the log.")]), say("long", "assistant", [text(REPLY)])]);
  const clip = message(page, "long").locator(".baton-clip");
  const button = clip.getByRole("button", { name: "Copy all" });
  const copied = button.evaluate(
    (el) => new Promise((resolve) => new MutationObserver(() => el.textContent === "Copied" && resolve(true)).observe(el, { childList: true, subtree: true, characterData: true })),
  );
  await button.click();
  assert.equal(await copied, true);
  const clipboard = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(clipboard.length, REPLY.length);
  assert.equal(clipboard === REPLY, true);

  const before = (await posted(page)).length;
  await clip.getByRole("button", { name: "Open in editor" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "openMessage", before), { type: "openMessage", messageId: "long" });
  // the clip line's buttons are its own: the message is not selected by them
  assert.equal((await posted(page)).slice(before).filter((m) => m.type === "selection").length, 0);
});

test("an opened paste, thinking, a tool's input and a result's Show all are drawn in part the same way", async (t) => {
  const page = await openView(t, "dark", { width: 420, height: 1400 });
  const log = logLines(40_000);
  const messages = [
    say("paste", "user", [text(log)]),
    say("asst", "assistant", [
      { type: "thinking", thinking: log, signature: "sig" },
      { type: "tool_use", id: "tu_big", name: "Write", input: { path: "big.log", content: log } },
      { type: "tool_use", id: "tu_read", name: "Read", input: { path: "server.log" } },
    ]),
    say("results", "user", [
      { type: "tool_result", tool_use_id: "tu_big", content: "written" },
      { type: "tool_result", tool_use_id: "tu_read", content: log },
    ]),
  ];
  messages[1].toolCalls = [{ toolUseId: "tu_read", tool: "Read", title: "Read server.log", status: "done", summary: "40,000 lines" }];
  await show(page, messages);

  const paste = message(page, "paste");
  await paste.locator("details.baton-paste > summary").click();
  await paste.locator(".baton-clip").waitFor();
  assert.ok((await drawnLength(paste)) <= LIMIT + CHROME, "the opened paste is drawn in part");
  assert.match(await paste.locator(".baton-clip").textContent(), new RegExp(`of ${total(log)} characters`));

  const asst = message(page, "asst");
  const thinking = asst.locator("details.baton-thinking");
  await thinking.locator("> summary").click();
  await thinking.locator(".baton-clip").waitFor();
  assert.ok((await drawnLength(thinking)) <= LIMIT + CHROME, "thinking is drawn in part");

  const input = asst.locator("details.baton-tool-use");
  await input.locator("> summary").click();
  await input.locator(".baton-clip").waitFor();
  // the input's JSON is short lines, then one line of megabytes (the content, its line breaks escaped)
  const first = await drawnLength(input);
  assert.ok(first > 0.9 * LIMIT && first <= LIMIT + CHROME, `a tool's input is drawn in part (${first} characters)`);
  assert.equal(await input.locator("pre.baton-code .baton-copy").count(), 0, "no Copy of a part of the input");
  await input.getByRole("button", { name: "Show more" }).click();
  const next = await drawnLength(input);
  assert.ok(next > 1.9 * LIMIT && next <= 2 * LIMIT + CHROME, `Show more draws the next part of a long line (${next} characters)`);

  const read = asst.locator('details[data-tool-use-id="tu_read"]');
  await read.locator("> summary").click();
  const result = read.locator(".baton-toolcall-result");
  await result.locator("details.baton-toolcall-more > summary").click();
  const all = result.locator("details.baton-toolcall-more");
  await all.locator(".baton-clip").waitFor();
  assert.ok((await drawnLength(all)) <= LIMIT + CHROME, "Show all draws the result in part");
  assert.equal(await all.locator("pre.baton-code .baton-copy").count(), 0, "no Copy of a part of the result");
  assert.match(await all.locator(".baton-clip").textContent(), new RegExp(`of ${total(log)} characters`));
});

test("the feed's height counts a long text by what is drawn of it, and a long paste by its fold", async (t) => {
  const page = await openView(t, "dark", { width: 420, height: 900 });
  const rest = longView(40);
  await show(page, [say("long", "assistant", [text(REPLY)]), say("paste", "user", [text(logLines(40_000))]), ...rest]);
  await frame(page, 2);
  assert.equal(await message(page, "long").count(), 0, "the long reply is not drawn: its height is an estimate");
  const height = await page.locator(".baton-feed").evaluate((el) => el.scrollHeight);
  // drawn whole, the reply would be some 40,000 lines of code (about 680,000 px), the paste as many again
  assert.ok(height < 120_000, `the feed is ${height} px high`);
});

test("find reaches a match past the part drawn, or says it lies in the part not shown", async (t) => {
  const page = await openView(t, "dark", { width: 420, height: 900 });
  const near = logLines(2_000) + "\nnear-needle here\n" + logLines(40_000);
  await show(page, [say("near", "assistant", [text(near)]), say("far", "assistant", [text(REPLY)])]);
  await page.keyboard.press("Control+f");
  const input = page.locator(".baton-find-input");
  await input.fill("near-needle");
  assert.equal(await page.locator(".baton-find-count").textContent(), "1 of 1 messages");
  await message(page, "near").getByText("near-needle here").waitFor();
  assert.ok(await page.evaluate(() => CSS.highlights.get("baton-find-current")?.size === 1), "the match is highlighted");

  await input.fill("end-of-log marker");
  assert.match(await page.locator(".baton-find-count").textContent(), /^1 of 1 messages · in the part not shown/);
  assert.equal(await message(page, "far").getByText("end-of-log marker").count(), 0, "megabytes are not drawn to reach it");
});
