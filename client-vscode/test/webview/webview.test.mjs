// The chat webview alone in headless Chromium (Debian's, never a downloaded one), under the
// extension's CSP, talking to a stand-in host.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";
import { MESSAGES, SESSION, sessionUpdate } from "./fixture.mjs";
import { CLIENT_ROOT, serve } from "./harness.mjs";

const RESULTS = join(CLIENT_ROOT, "test-results");
let browser;
let server;

before(async () => {
  server = await serve();
  browser = await chromium.launch({
    executablePath: process.env.BATON_CHROMIUM || "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  await mkdir(RESULTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh view (its own session storage) that has loaded and said it is ready. */
async function openView(t, theme = "dark", size = { width: 420, height: 900 }) {
  const context = await browser.newContext({ viewport: size });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.origin });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  t.after(async () => {
    // Every page must have run without a CSP violation or an uncaught error.
    const violations = await page.evaluate(() => window.__baton.violations).catch(() => []);
    await context.close();
    assert.deepEqual(violations, [], "CSP violations");
    assert.deepEqual(errors, [], "page errors");
  });
  await page.goto(server.url(theme));
  await waitPosted(page, (m) => m.type === "ready");
  return page;
}

const toView = (page, message) => page.evaluate((m) => window.postMessage(m, "*"), message);
const posted = (page) => page.evaluate(() => window.__baton.posted);

/** The first message posted at or after index `from` that matches, waiting for it if need be. */
async function waitPosted(page, predicate, from = 0) {
  for (;;) {
    const all = await posted(page);
    const found = all.slice(from).find(predicate);
    if (found) return found;
    // Wait for the next post (the page's CSP forbids evaluating the predicate in it).
    await page.waitForFunction((n) => window.__baton.posted.length > n, all.length, { timeout: 5000 });
  }
}

/** Show the fixture; resolves once it is drawn, with the count of posts so far. */
async function showFixture(page, overrides) {
  await toView(page, sessionUpdate(overrides));
  await page.locator(`article[data-message-id="${MESSAGES.at(-1).id}"]`).waitFor();
  return (await posted(page)).length;
}

const message = (page, id) => page.locator(`article[data-message-id="${id}"]`);
/** Click a message's edge (not a link or button inside it). */
const clickMessage = (page, id, options = {}) => message(page, id).click({ position: { x: 4, y: 4 }, ...options });

test("renders the session: Markdown, highlighted code, collapsed tools, image, summary", async (t) => {
  const page = await openView(t, "dark", { width: 420, height: 1200 });
  await showFixture(page);
  // The first view tells the host nothing is selected (after a reload it may think otherwise).
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selection"), { type: "selection", messageIds: [] });

  // Every message element, in order, with the exact context VS Code's menu reads.
  const contexts = await page.$$eval("article[data-message-id]", (els) =>
    els.map((el) => [el.dataset.messageId, el.dataset.vscodeContext]),
  );
  assert.deepEqual(
    contexts,
    MESSAGES.map((m) => [
      m.id,
      JSON.stringify({ webviewSection: "message", messageId: m.id, preventDefaultContextMenuItems: true }),
    ]),
  );

  const user = message(page, "m_user1");
  assert.equal(await user.locator("strong").textContent(), "negative");
  assert.equal(await user.locator("td.align-right").first().textContent(), "124,000");
  // Raw HTML in a message is text, never markup.
  assert.match(await user.textContent(), /<script>window\.injected = true<\/script>/);
  assert.equal(await page.evaluate(() => window.injected ?? null), null);
  assert.equal(await user.locator(".baton-markdown img, .baton-markdown script").count(), 0);
  // The image is a thumbnail of its base64 source.
  const src = await user.locator("img.baton-thumbnail").getAttribute("src");
  assert.match(src, /^data:image\/png;base64,iVBOR/);
  assert.ok(await user.locator("img.baton-thumbnail").evaluate((img) => img.complete && img.naturalWidth === 32));

  const code = message(page, "m_asst2").locator("pre.baton-code code.hljs.language-python");
  assert.equal(await code.locator(".hljs-keyword").first().textContent(), "def");
  assert.ok((await code.locator("span[class^='hljs-']").count()) >= 4);
  assert.equal(await message(page, "m_asst2").locator("a").getAttribute("href"), "https://example.com/docs");
  assert.equal(await message(page, "m_asst2").locator(".baton-pin").count(), 1);

  // Thinking, the tool call and its result are folded; the result names its tool.
  const asst = message(page, "m_asst1");
  assert.equal(await asst.locator("details.baton-thinking").evaluate((d) => d.open), false);
  const call = asst.locator("details.baton-tool-use");
  assert.equal(await call.evaluate((d) => d.open), false);
  assert.match(await call.locator("summary").textContent(), /read_file/);
  assert.equal(await call.locator(".baton-tool-body").isVisible(), false);
  const result = message(page, "m_result1").locator("details.baton-tool-result");
  assert.equal(await result.evaluate((d) => d.open), false);
  assert.match(await result.locator("summary").textContent(), /Tool result\s*read_file/);
  await call.locator("summary").click();
  assert.match(await call.locator(".baton-tool-body").textContent(), /"path": "server\/baton\/core\/budget.py"/);

  // The compaction boundary: folded summary, the files restored after it, Undo with its id.
  const summary = message(page, "m_summary").locator("details.baton-summary");
  assert.equal(await summary.evaluate((d) => d.open), false);
  assert.match(await summary.locator("summary").textContent(), /2 files restored/);
  await summary.locator("summary").click();
  assert.deepEqual(await summary.locator(".baton-restored li").allTextContents(), ["budget.py", "PROTOCOL.md"]);
  assert.equal(await summary.locator("h2").first().textContent(), "Primary request");
  await message(page, "m_summary").getByRole("button", { name: "Undo" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "undo"), { type: "undo", boundaryId: "bnd_1" });

  // The usage chart: a stacked bar in sight; unfolded, a bar for every category present,
  // unknown ones included.
  const segments = await page.$$eval(".baton-usage-stack .baton-usage-seg", (els) => els.map((el) => el.className));
  assert.equal(segments.length, 6); // all but free space
  assert.equal(await page.locator(".baton-usage-tick").evaluate((el) => el.style.left), "83.5%");
  assert.equal(await page.locator(".baton-usage-row").first().isVisible(), false);
  await page.locator(".baton-usage > summary").click();
  assert.equal(await page.locator(".baton-usage-row").first().isVisible(), true);
  const categories = await page.$$eval(".baton-usage-row", (rows) => rows.map((r) => r.dataset.category));
  assert.deepEqual(categories, ["system", "tools", "messages", "summary", "attachments", "unattributed", "free"]);
  const width = await page
    .locator(".baton-usage-row[data-category=messages] .baton-usage-fill")
    .evaluate((el) => el.style.width);
  assert.equal(width, "49%");
  assert.match(
    await page.locator(".baton-usage > summary").textContent(),
    /62% used · 124K\/200K est\. · auto-compact at 167K/,
  );

  await page.screenshot({ path: join(RESULTS, "webview-dark.png") });
});

test("a code block's Copy button puts its code on the clipboard", async (t) => {
  const page = await openView(t);
  const shown = await showFixture(page);
  const block = message(page, "m_asst2").locator("pre.baton-code");
  await block.hover();
  await block.getByRole("button", { name: "Copy code" }).click();
  await block.getByRole("button", { name: "Copy code" }).filter({ hasText: "Copied" }).waitFor();
  assert.equal(
    await page.evaluate(() => navigator.clipboard.readText()),
    "def percent_left(used: int, threshold: int) -> int:\n    return max(0, min(100, 100 * (threshold - used) // threshold))\n",
  );
  // The button is the code block's own: the message is not selected by it.
  assert.equal((await posted(page)).slice(shown).filter((m) => m.type === "selection").length, 0);
});

test("before the host's first update the view says it is starting", async (t) => {
  const page = await openView(t);
  assert.equal(await page.getByRole("status").textContent(), "Starting Baton…");
  await showFixture(page);
  assert.equal(await page.locator(".baton-starting").count(), 0);
});

test("two compactions: each summary lists the files it restored and undoes its own boundary", async (t) => {
  const page = await openView(t);
  const text = (said) => [{ type: "text", text: said }];
  const base = { role: "user", createdAt: "2026-12-01T09:00:00Z", tokens: 10, pinned: false };
  const messages = [
    { ...base, id: "s1", kind: "summary", boundaryId: "bnd_1", content: text("First summary") },
    { ...base, id: "u1", kind: "message", content: text("kept prompt") },
    { ...base, id: "s2", kind: "summary", boundaryId: "bnd_2", content: text("Second summary") },
    { ...base, id: "a1", kind: "attachment", boundaryId: "bnd_1", content: text("Restored file: /p/one.py\nx") },
    { ...base, id: "a2", kind: "attachment", boundaryId: "bnd_2", content: text("Restored file: /p/two.py\ny") },
  ];
  await toView(page, sessionUpdate({ messages }));
  await message(page, "a2").waitFor();
  const files = (id) => message(page, id).locator(".baton-restored li").allTextContents();
  assert.deepEqual(await files("s1"), ["one.py"]);
  assert.deepEqual(await files("s2"), ["two.py"]);
  const from = (await posted(page)).length;
  await message(page, "s1").getByRole("button", { name: "Undo" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "undo", from), { type: "undo", boundaryId: "bnd_1" });
});

test("a usage update redraws the chart; a session without a boundary id undoes the last", async (t) => {
  const page = await openView(t);
  const messages = MESSAGES.map(({ boundaryId, ...m }) => m);
  await showFixture(page, { messages });
  const usage = {
    ...sessionUpdate().usage,
    usedTokens: 40000,
    percentUsed: 20,
    breakdown: { system: 3000, messages: 37000, free: 160000 },
    estimatorExact: false,
    warnings: ["unknown model: a 200K window was assumed"],
  };
  await toView(page, { type: "usage", sessionId: "s_other", usage: { ...usage, percentUsed: 99 } }); // another session: ignored
  await toView(page, { type: "usage", sessionId: SESSION.sessionId, usage });
  await page.waitForFunction(() =>
    document.querySelector(".baton-usage > summary")?.textContent?.startsWith("20% used"),
  );
  const categories = await page.$$eval(".baton-usage-row", (rows) => rows.map((r) => r.dataset.category));
  assert.deepEqual(categories, ["system", "messages", "free"]);
  const title = await page.locator(".baton-usage > summary").textContent();
  assert.equal(title, "20% used · 40K/200K est. · auto-compact at 167K · 2 warnings");
  await page.locator(".baton-usage > summary").click();
  assert.deepEqual(await page.locator(".baton-usage-warnings li").allTextContents(), [
    "Token counts come from an approximate tokenizer.",
    "unknown model: a 200K window was assumed",
  ]);
  await page.getByRole("button", { name: "Open as Document" }).click();
  await waitPosted(page, (m) => m.type === "openSessionDocument");
  // Without ids the restored files are the attachments after the summary.
  assert.deepEqual(await message(page, "m_summary").locator(".baton-restored li").allTextContents(), [
    "budget.py",
    "PROTOCOL.md",
  ]);
  await message(page, "m_summary").getByRole("button", { name: "Undo" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "undo"), { type: "undo" });
});

test("streamed deltas appear in a pending reply; Stop posts stop; the stored reply replaces it", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  await page.locator("#baton-input").fill("Explain the clamp");
  await page.locator("#baton-input").press("Enter");
  await toView(page, { type: "busy", busy: true });
  const stop = page.getByRole("button", { name: "Stop" });
  await stop.waitFor();
  assert.equal(await page.getByRole("button", { name: "Send" }).isVisible(), false);
  for (const chunk of ["The clamp ", "keeps it in **range**", " and `0` is the floor."]) {
    await toView(page, { type: "delta", sessionId: SESSION.sessionId, messageId: "m_new", text: chunk });
  }
  await toView(page, { type: "delta", sessionId: "s_other", messageId: "m_x", text: "not this one" });
  // Streamed text is no stored message yet: it carries no data-message-id (nor a menu).
  const pending = page.locator('article.baton-pending[data-pending-id="m_new"]');
  await page.waitForFunction(() =>
    document.querySelector('[data-pending-id="m_new"]')?.textContent?.includes("floor."),
  );
  assert.match(await pending.textContent(), /The clamp keeps it in range and 0 is the floor\./);
  assert.equal(await pending.locator("strong").textContent(), "range");
  assert.equal(await page.getByText("not this one").count(), 0);
  // The prompt shows at once, before the reply, though the host has not stored it yet.
  const order = await page.$$eval("article.baton-pending", (els) => els.map((el) => el.getAttribute("aria-label")));
  assert.deepEqual(order, ["You, sending", "Assistant, replying"]);
  await page.screenshot({ path: join(RESULTS, "webview-streaming.png") });
  await stop.click();
  await waitPosted(page, (m) => m.type === "stop");

  const prompt = {
    id: "m_prompt",
    role: "user",
    kind: "message",
    content: [{ type: "text", text: "Explain the clamp" }],
  };
  const reply = {
    id: "m_new",
    role: "assistant",
    kind: "message",
    content: [{ type: "text", text: "The clamp keeps it in **range** and `0` is the floor." }],
    stopReason: "end_turn",
  };
  await toView(page, { type: "busy", busy: false });
  await toView(page, sessionUpdate({ messages: [...MESSAGES, prompt, reply] }));
  await page.waitForFunction(() => !document.querySelector("article.baton-pending"));
  assert.equal(await page.locator('[data-message-id="m_new"]').count(), 1);
  assert.equal(await page.getByText("Explain the clamp").count(), 1);
  assert.equal(await page.getByRole("button", { name: "Send" }).isVisible(), true);

  // A stopped reply the server did not keep goes once the send has ended.
  await page.locator("#baton-input").fill("Again");
  await page.locator("#baton-input").press("Enter");
  await toView(page, { type: "busy", busy: true });
  await toView(page, { type: "delta", sessionId: SESSION.sessionId, messageId: "m_lost", text: "half a rep" });
  await page.locator('[data-pending-id="m_lost"]').waitFor();
  await toView(page, { type: "busy", busy: false });
  await toView(page, sessionUpdate({ messages: [...MESSAGES, prompt, reply] }));
  await page.waitForFunction(() => !document.querySelector("article.baton-pending"));
  assert.equal(await page.getByText("half a rep").count(), 0);
});

test("a right-click resolves to the message under it and selects it", async (t) => {
  const page = await openView(t);
  const shown = await showFixture(page);
  // On a word deep inside the message: VS Code reads the nearest data-vscode-context.
  await message(page, "m_asst2").locator("code.hljs .hljs-keyword").first().click({ button: "right" });
  // The message's own context, and `pinned` from the element that fills it (Pin / Unpin).
  const menus = await page.evaluate(() => window.__baton.contextMenus);
  assert.deepEqual(menus, [
    { webviewSection: "message", messageId: "m_asst2", preventDefaultContextMenuItems: true, pinned: true },
  ]);
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selection", shown), {
    type: "selection",
    messageIds: ["m_asst2"],
  });
  assert.ok(await message(page, "m_asst2").evaluate((el) => el.classList.contains("selected")));

  // Right-click inside a multi-selection keeps it (the menu offers Compact Selected).
  await clickMessage(page, "m_user1");
  await clickMessage(page, "m_result1", { modifiers: ["Shift"] });
  const before = (await posted(page)).length;
  await message(page, "m_asst1").click({ button: "right", position: { x: 1, y: 1 } }); // its very edge
  assert.deepEqual((await page.evaluate(() => window.__baton.contextMenus)).at(-1), {
    webviewSection: "message",
    messageId: "m_asst1",
    preventDefaultContextMenuItems: true,
    pinned: false,
  });
  assert.equal((await posted(page)).slice(before).filter((m) => m.type === "selection").length, 0);
  assert.equal(await page.locator("article.selected").count(), 3);
  // The bar under the feed says how to act on them, and clears them.
  assert.match(await page.locator(".baton-selection-bar").textContent(), /3 messages selected/);
  const cleared = (await posted(page)).length;
  await page.locator(".baton-selection-bar").getByRole("button", { name: "Clear" }).click();
  const clear = await waitPosted(page, (m) => m.type === "selection", cleared);
  assert.deepEqual(clear, { type: "selection", messageIds: [] });
  assert.equal(await page.locator(".baton-selection-bar").isVisible(), false);
});

test("click selects one message, shift-click a range in view order, Escape clears", async (t) => {
  const page = await openView(t);
  const shown = await showFixture(page);
  await clickMessage(page, "m_asst2");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selection", shown), {
    type: "selection",
    messageIds: ["m_asst2"],
  });
  let from = (await posted(page)).length;
  await clickMessage(page, "m_user1", { modifiers: ["Shift"] });
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selection", from), {
    type: "selection",
    messageIds: ["m_user1", "m_asst1", "m_result1", "m_asst2"],
  });
  // The keyboard: shift+arrow extends from the same anchor, Escape clears.
  from = (await posted(page)).length;
  await page.keyboard.press("Shift+ArrowUp");
  assert.deepEqual((await waitPosted(page, (m) => m.type === "selection", from)).messageIds, [
    "m_summary",
    "m_user1",
    "m_asst1",
    "m_result1",
    "m_asst2",
  ]);
  assert.match(await page.locator(".baton-selection-bar").textContent(), /5 messages selected/);
  from = (await posted(page)).length;
  await page.keyboard.press("Escape");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selection", from), { type: "selection", messageIds: [] });
  assert.equal(await page.locator("article.selected").count(), 0);
  // A tool result is all folded summary line: clicking it opens it and selects the message.
  from = (await posted(page)).length;
  await message(page, "m_result1").locator("details > summary").click();
  assert.deepEqual((await waitPosted(page, (m) => m.type === "selection", from)).messageIds, ["m_result1"]);
  assert.equal(
    await message(page, "m_result1")
      .locator("details")
      .evaluate((d) => d.open),
    true,
  );
  // A link or a button inside a message does its own thing and leaves the selection alone.
  from = (await posted(page)).length;
  await message(page, "m_summary").getByRole("button", { name: "Undo" }).click();
  await waitPosted(page, (m) => m.type === "undo", from);
  assert.equal((await posted(page)).slice(from).filter((m) => m.type === "selection").length, 0);
});

test("Enter sends, Shift+Enter adds a line, nothing empty is sent", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await input.press("Enter");
  await input.pressSequentially("first line");
  await input.press("Shift+Enter");
  await input.pressSequentially("second line");
  assert.equal(await input.inputValue(), "first line\nsecond line");
  assert.equal((await posted(page)).filter((m) => m.type === "send").length, 0);
  await input.press("Enter");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "send"), { type: "send", text: "first line\nsecond line" });
  assert.equal(await input.inputValue(), "");
  assert.equal((await posted(page)).filter((m) => m.type === "send").length, 1);
});

test("without an API key a note offers Set API Key and the rest still works", async (t) => {
  const page = await openView(t);
  await showFixture(page, { hasApiKey: false });
  const note = page.locator(".baton-key-note");
  assert.match(await note.textContent(), /No API key/);
  await note.getByRole("button", { name: "Set API Key" }).click();
  await waitPosted(page, (m) => m.type === "setApiKey");
  await page.locator("#baton-input").fill("still sends");
  await page.locator("#baton-input").press("Enter");
  await waitPosted(page, (m) => m.type === "send" && m.text === "still sends");
  await page.getByRole("combobox", { name: "Session" }).selectOption("s_other");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selectSession"), {
    type: "selectSession",
    sessionId: "s_other",
  });
  await page.getByRole("button", { name: "Sessions…" }).click();
  await waitPosted(page, (m) => m.type === "pickSession");
  await page.getByRole("button", { name: "New Chat" }).click();
  await waitPosted(page, (m) => m.type === "newChat");
  await toView(page, { type: "error", message: "The server stopped: see Baton: Show Logs." });
  assert.match(await page.getByRole("alert").textContent(), /The server stopped/);
  await page.screenshot({ path: join(RESULTS, "webview-no-key.png") });
});

test("a session another process holds is shown read-only: no sending, no Undo", async (t) => {
  const page = await openView(t);
  await showFixture(page, { session: { ...SESSION, readOnly: true } });
  assert.match(await page.locator(".baton-lock-note").textContent(), /another Baton process/);
  assert.equal(await page.locator("#baton-input").isDisabled(), true);
  assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), true);
  assert.equal(await message(page, "m_summary").getByRole("button", { name: "Undo" }).count(), 0);
  // Reading still works: the summary opens, messages select.
  await message(page, "m_summary").locator("details.baton-summary > summary").click();
  assert.equal(
    await message(page, "m_summary")
      .locator("details.baton-summary")
      .evaluate((d) => d.open),
    true,
  );
  // The lock lifts with the next update.
  await showFixture(page);
  assert.equal(await page.locator("#baton-input").isDisabled(), false);
  await message(page, "m_summary").getByRole("button", { name: "Undo" }).waitFor();
});

test("a narrow side bar: long paths, URLs and tables never widen the view", async (t) => {
  const page = await openView(t, "dark", { width: 280, height: 700 });
  const long = {
    id: "m_long",
    role: "assistant",
    kind: "message",
    pinned: false,
    tokens: 5,
    createdAt: "2026-12-01T09:40:00Z",
    content: [
      {
        type: "text",
        text:
          "See /work/project/server/baton/core/compaction/a_module_name_without_any_break_in_it.py and " +
          "https://example.com/a/really/long/url/that/does/not/break/anywhere\n\n" +
          "| a | b | c | d |\n|---|---|---|---|\n| aaaaaaaaaaaa | bbbbbbbbbbbb | cccccccccccc | dddddddddddd |",
      },
    ],
  };
  await toView(page, sessionUpdate({ messages: [...MESSAGES, long] }));
  await message(page, "m_long").waitFor();
  const [scroll, client] = await page.locator(".baton-feed").evaluate((el) => [el.scrollWidth, el.clientWidth]);
  assert.equal(scroll, client);
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 280);
  await page.locator(".baton-feed").evaluate((el) => (el.scrollTop = el.scrollHeight));
  await page.screenshot({ path: join(RESULTS, "webview-narrow.png") });
});

test("the welcome offers New Chat and Import when there is no session", async (t) => {
  const page = await openView(t, "light");
  await toView(page, sessionUpdate({ session: null, messages: [], usage: null }));
  const welcome = page.locator(".baton-welcome");
  await welcome.waitFor();
  assert.equal(await page.locator(".baton-feed").isVisible(), false);
  assert.equal(await page.locator("#baton-input").isVisible(), false);
  await welcome.getByRole("button", { name: "New Chat" }).click();
  await waitPosted(page, (m) => m.type === "newChat");
  await welcome.getByRole("button", { name: "Import Claude Code Session" }).click();
  await waitPosted(page, (m) => m.type === "import");
  await welcome.getByRole("button", { name: "Fix the importer" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selectSession"), {
    type: "selectSession",
    sessionId: "s_other",
  });
  await page.screenshot({ path: join(RESULTS, "webview-welcome-light.png") });
});

test("the draft, scroll position and session survive a reload", async (t) => {
  const page = await openView(t, "dark", { width: 420, height: 420 });
  await showFixture(page);
  await page.locator("#baton-input").fill("half-written thought");
  await page.locator(".baton-usage > summary").click(); // unfold the chart: that is kept too
  const feed = page.locator(".baton-feed");
  await feed.evaluate((el) => (el.scrollTop = 120));
  await page.waitForFunction(
    () => JSON.parse(sessionStorage.getItem("vscode-webview-state") ?? "{}").scrollTop === 120,
  );

  await page.reload();
  await waitPosted(page, (m) => m.type === "ready");
  assert.equal(await page.locator("#baton-input").inputValue(), "half-written thought");
  await showFixture(page);
  assert.equal(await feed.evaluate((el) => el.scrollTop), 120);
  assert.equal(await page.locator(".baton-usage").evaluate((d) => d.open), true);

  // The host came back showing another session: the view asks for the one it had.
  await page.reload();
  await waitPosted(page, (m) => m.type === "ready");
  await toView(
    page,
    sessionUpdate({ session: { ...SESSION, sessionId: "s_other", title: "Fix the importer" }, messages: [] }),
  );
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selectSession"), {
    type: "selectSession",
    sessionId: "s_demo",
  });
});

test("the light theme renders with the theme's colours", async (t) => {
  const page = await openView(t, "light", { width: 420, height: 1200 });
  await showFixture(page);
  await message(page, "m_summary").locator("details.baton-summary > summary").click();
  await message(page, "m_asst1").locator("details.baton-tool-use > summary").click();
  await clickMessage(page, "m_asst2");
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, "rgb(248, 248, 248)");
  const keyword = await page
    .locator(".language-python .hljs-keyword")
    .first()
    .evaluate((el) => getComputedStyle(el).color);
  assert.equal(keyword, "rgb(0, 0, 255)");
  await page.screenshot({ path: join(RESULTS, "webview-light.png") });
});

test("the harness does report CSP violations (the checks above can fail)", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(server.url());
    await waitPosted(page, (m) => m.type === "ready");
    await page.evaluate(() => {
      const el = document.createElement("div");
      el.innerHTML = '<span style="color: red">inline</span>';
      document.body.appendChild(el);
      const s = document.createElement("script");
      s.textContent = "window.ran = true";
      document.body.appendChild(s);
    });
    await page.waitForFunction(() => window.__baton.violations.length >= 2);
    assert.equal(await page.evaluate(() => window.ran ?? false), false);
  } finally {
    await context.close();
  }
});
