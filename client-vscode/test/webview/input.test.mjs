// The chat webview posts what the user does: selection by click, shift-click, keys and
// right-click, sending and stopping, the API key and session buttons, and its saved state.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { MESSAGES, OTHER_SESSION, SESSION, sessionUpdate } from "./fixture.mjs";
import {
  RESULTS,
  clickMessage,
  message,
  openView,
  posted,
  showFixture,
  toView,
  useBrowser,
  waitPosted,
} from "./view.mjs";

useBrowser();

// the state the view keeps for a reload (VS Code's getState), as it stands
const savedState = (page) => page.evaluate(() => JSON.parse(sessionStorage.getItem("vscode-webview-state") ?? "{}"));

// until the state the view keeps for a reload holds `value` at `key`
const untilSaved = (page, key, value) =>
  page.waitForFunction(([k, v]) => JSON.parse(sessionStorage.getItem("vscode-webview-state") ?? "{}")[k] === v, [key, value]);

// the view reloaded (the panel hidden and shown, or the window reloaded), until it says it is ready
async function reloaded(page) {
  await page.reload();
  await waitPosted(page, (m) => m.type === "ready");
}

// `text` typed into the box and sent with Enter, until the view posts the send
async function sentFromTheBox(page, text) {
  const input = page.locator("#baton-input");
  await input.fill(text);
  await input.press("Enter");
  await waitPosted(page, (m) => m.type === "send");
}

test("streamed deltas appear in a pending reply; Stop posts stop; the stored reply replaces it", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  await page.locator("#baton-input").fill("Explain the clamp");
  await page.locator("#baton-input").press("Enter");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
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
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await toView(page, sessionUpdate({ messages: [...MESSAGES, prompt, reply] }));
  await page.waitForFunction(() => !document.querySelector("article.baton-pending"));
  assert.equal(await page.locator('[data-message-id="m_new"]').count(), 1);
  assert.equal(await page.getByText("Explain the clamp").count(), 1);
  assert.equal(await page.getByRole("button", { name: "Send" }).isVisible(), true);

  // A stopped reply the server did not keep goes once the send has ended.
  await page.locator("#baton-input").fill("Again");
  await page.locator("#baton-input").press("Enter");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await toView(page, { type: "delta", sessionId: SESSION.sessionId, messageId: "m_lost", text: "half a rep" });
  await page.locator('[data-pending-id="m_lost"]').waitFor();
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await toView(page, sessionUpdate({ messages: [...MESSAGES, prompt, reply] }));
  await page.waitForFunction(() => !document.querySelector("article.baton-pending"));
  assert.equal(await page.getByText("half a rep").count(), 0);
});

test("a right-click resolves to the message under it and selects it", async (t) => {
  const page = await openView(t);
  const shown = await showFixture(page);
  // On a word deep inside the message: VS Code reads the nearest data-vscode-context.
  await message(page, "m_asst2").locator("code.hljs .hljs-keyword").first().click({ button: "right" });
  // The message's own context, with `pinned` (Pin / Unpin).
  const menus = await page.evaluate(() => window.__baton.contextMenus);
  assert.deepEqual(menus, [
    { webviewSection: "message", messageId: "m_asst2", preventDefaultContextMenuItems: true, pinned: true, sessionId: "s_demo" },
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
    sessionId: "s_demo",
    // what Compact Selected acts on, whatever the host holds by the time it is chosen
    selectedFirst: "m_user1",
    selectedLast: "m_result1",
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

test("the menu key on the message the keyboard is on opens its menu: Unpin for a pinned one, Pin for another", async (t) => {
  const page = await openView(t);
  const shown = await showFixture(page);
  await clickMessage(page, "m_asst2"); // pinned
  await page.keyboard.press("Shift+F10");
  // the menu's target is the focused message itself, not an element inside it
  assert.deepEqual((await page.evaluate(() => window.__baton.contextMenus)).at(-1), {
    webviewSection: "message",
    messageId: "m_asst2",
    preventDefaultContextMenuItems: true,
    pinned: true,
    sessionId: "s_demo",
  });
  await page.keyboard.press("ArrowUp");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.messageId), "m_result1");
  await page.keyboard.press("ContextMenu");
  assert.deepEqual((await page.evaluate(() => window.__baton.contextMenus)).at(-1), {
    webviewSection: "message",
    messageId: "m_result1",
    preventDefaultContextMenuItems: true,
    pinned: false,
    sessionId: "s_demo",
  });
  // the menu key selects the message it opens on, as a right-click does
  const selections = (await posted(page)).slice(shown).filter((m) => m.type === "selection");
  assert.deepEqual(selections.at(-1), { type: "selection", messageIds: ["m_result1"] });
});

test("a message's menu names the session on show, not one the host is opening meanwhile", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const menu = async (id) => {
    await message(page, id).click({ button: "right", position: { x: 4, y: 4 } });
    return (await page.evaluate(() => window.__baton.contextMenus)).at(-1);
  };
  // the host may already hold another session as current: the menu's command acts on this one
  assert.equal((await menu("m_asst1")).sessionId, "s_demo");
  const otherMessages = MESSAGES.map((m) => ({ ...m, id: `o_${m.id}` }));
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: otherMessages }));
  await message(page, "o_m_asst1").waitFor();
  const other = await menu("o_m_asst1");
  assert.equal(other.sessionId, "s_other");
  assert.equal(other.messageId, "o_m_asst1");
});

test("a message's menu names the selection on show, for Compact Selected, and none once another session shows", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  await clickMessage(page, "m_result1");
  await clickMessage(page, "m_user1", { modifiers: ["Shift"] });
  await message(page, "m_asst1").click({ button: "right", position: { x: 4, y: 4 } });
  const menu = (await page.evaluate(() => window.__baton.contextMenus)).at(-1);
  assert.deepEqual([menu.sessionId, menu.selectedFirst, menu.selectedLast], ["s_demo", "m_user1", "m_result1"], "in view order");
  // one message alone is no span: the menu names none
  await clickMessage(page, "m_asst2");
  await message(page, "m_asst2").click({ button: "right", position: { x: 4, y: 4 } });
  const single = (await page.evaluate(() => window.__baton.contextMenus)).at(-1);
  assert.equal(single.selectedFirst, undefined);
  await clickMessage(page, "m_user1");
  await clickMessage(page, "m_asst1", { modifiers: ["Shift"] });
  const otherMessages = MESSAGES.map((m) => ({ ...m, id: `o_${m.id}` }));
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: otherMessages }));
  await message(page, "o_m_asst1").waitFor();
  await message(page, "o_m_asst1").click({ button: "right", position: { x: 4, y: 4 } });
  const other = (await page.evaluate(() => window.__baton.contextMenus)).at(-1);
  assert.equal(other.sessionId, "s_other");
  assert.equal(other.selectedFirst, undefined, "the selection went with its session");
});

test("the selection bar's Clear pressed from the keyboard gives the focus back to the message it was on", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  await clickMessage(page, "m_user1");
  await page.keyboard.press("Shift+ArrowDown");
  await page.keyboard.press("Shift+ArrowDown");
  const bar = page.locator(".baton-selection-bar");
  assert.match(await bar.textContent(), /3 messages selected/);
  await bar.getByRole("button", { name: "Clear" }).focus();
  await page.keyboard.press("Enter");
  await bar.waitFor({ state: "hidden" });
  // the bar went with the focus: back on the feed, where the arrow keys go on
  assert.equal(await page.evaluate(() => document.activeElement?.dataset?.messageId ?? null), "m_result1");
  await page.keyboard.press("ArrowUp");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset?.messageId ?? null), "m_asst1");
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
  // Arrows move the focus without selecting; Space selects the focused message.
  const focused = () => page.evaluate(() => document.activeElement?.dataset?.messageId ?? null);
  await page.keyboard.press("ArrowDown");
  assert.equal(await focused(), "m_user1");
  await page.keyboard.press("End");
  assert.equal(await focused(), "m_att2");
  await page.keyboard.press("ArrowUp");
  assert.equal(await focused(), "m_att1");
  from = (await posted(page)).length;
  await page.keyboard.press(" ");
  assert.deepEqual((await waitPosted(page, (m) => m.type === "selection", from)).messageIds, ["m_att1"]);
  // The feed is one tab stop: the focused message.
  assert.deepEqual(await page.$$eval("article[tabindex='0']", (els) => els.map((el) => el.dataset.messageId)), [
    "m_att1",
  ]);
  // A tool result is all folded summary line: clicking that line opens it without
  // selecting the message (issue 21); a click on the message's edge selects it.
  from = (await posted(page)).length;
  await message(page, "m_result1").locator("details > summary").click();
  assert.equal(
    await message(page, "m_result1")
      .locator("details")
      .evaluate((d) => d.open),
    true,
  );
  assert.equal(await message(page, "m_result1").evaluate((el) => el.classList.contains("selected")), false);
  await clickMessage(page, "m_result1");
  assert.deepEqual((await waitPosted(page, (m) => m.type === "selection", from)).messageIds, ["m_result1"]);
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
  assert.deepEqual(await waitPosted(page, (m) => m.type === "send"), { type: "send", text: "first line\nsecond line", sessionId: "s_demo" });
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
  await page.getByRole("button", { name: /^Session:/ }).click();
  await page.getByRole("button", { name: /^Fix the importer/ }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selectSession"), {
    type: "selectSession",
    sessionId: "s_other",
  });
  await page.locator(".baton-header").getByRole("button", { name: "New Chat" }).click();
  await waitPosted(page, (m) => m.type === "newChat");
  await toView(page, { type: "error", message: "The server stopped: see Baton: Show Logs." });
  assert.match(await page.getByRole("alert").textContent(), /The server stopped/);
  await page.screenshot({ path: join(RESULTS, "webview-no-key.png") });
});

test("the draft, scroll position and session survive a reload", async (t) => {
  const page = await openView(t, "dark", { width: 420, height: 420 });
  await showFixture(page);
  await page.locator("#baton-input").fill("half-written thought");
  await page.locator(".baton-usage > summary").click(); // unfold the chart: that is kept too
  const feed = page.locator(".baton-feed");
  await feed.evaluate((el) => (el.scrollTop = 120));
  await untilSaved(page, "scrollTop", 120);

  await reloaded(page);
  assert.equal(await page.locator("#baton-input").inputValue(), "half-written thought");
  await showFixture(page);
  assert.equal(await feed.evaluate((el) => el.scrollTop), 120);
  assert.equal(await page.locator(".baton-usage").evaluate((d) => d.open), true);

  // The host came back showing another session: the view asks for the one it had.
  await reloaded(page);
  const other = { ...SESSION, sessionId: "s_other", title: "Fix the importer" };
  await toView(page, sessionUpdate({ session: other, messages: MESSAGES.map((m) => ({ ...m, id: `o_${m.id}` })) }));
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selectSession"), {
    type: "selectSession",
    sessionId: "s_demo",
  });
  await page.locator('article[data-message-id="o_m_att2"]').waitFor();
  // ...and when it comes, at the place it was left (the interim view saved nothing).
  await showFixture(page);
  assert.equal(await feed.evaluate((el) => el.scrollTop), 120);
  assert.equal(
    await page.evaluate(() => JSON.parse(sessionStorage.getItem("vscode-webview-state")).sessionId),
    "s_demo",
  );
});

test("a streaming reply keeps what it has drawn: text selected in it stays selected as more comes", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  const delta = (text) => toView(page, { type: "delta", sessionId: SESSION.sessionId, messageId: "m_long", text });
  const drawn = (text) =>
    page.waitForFunction((t) => document.querySelector('[data-pending-id="m_long"] .baton-message-body')?.textContent?.includes(t), text);
  await delta("The first paragraph, done.\n\n```python\nx = 1\n\ny = 2\n");
  await drawn("y = 2");
  // the user selects the first paragraph to copy it while the reply goes on
  await page.evaluate(() => {
    const p = document.querySelector('[data-pending-id="m_long"] .baton-message-body p');
    getSelection().selectAllChildren(p);
  });
  for (const chunk of ["z = 3\n```\n\nA third", " part, with **bold**", " words.\n\n- one\n- two\n"]) await delta(chunk);
  await drawn("two");
  assert.equal(await page.evaluate(() => getSelection().toString()), "The first paragraph, done.");
  const body = page.locator('[data-pending-id="m_long"] .baton-message-body');
  // drawn as the whole text would be: the code block kept whole across its blank line
  assert.equal(await body.locator("pre code").count(), 1);
  assert.equal(await body.locator("pre code").textContent(), "x = 1\n\ny = 2\nz = 3\n");
  assert.equal(await body.locator("strong").textContent(), "bold");
  assert.deepEqual(await body.locator("li").allTextContents(), ["one", "two"]);
  assert.match(await body.textContent(), /A third part, with bold words\./);
});

test("a streaming reply keeps a code block nested in a list whole across its blank line, and a list item's later paragraph in it", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  const delta = (text) => toView(page, { type: "delta", sessionId: SESSION.sessionId, messageId: "m_list", text });
  const drawn = (text) =>
    page.waitForFunction((t) => document.querySelector('[data-pending-id="m_list"] .baton-message-body')?.textContent?.includes(t), text);
  // each part drawn before the next comes: what a frame settled stays as it was drawn
  await delta("1. Install it:\n   - then run:\n\n     ```python\n     a = 1\n\n");
  await drawn("a = 1");
  await delta("     b = 2\n     ```\n\n");
  await drawn("b = 2");
  await delta("   - and check,\n\n         indented four past the item\n\nDone.\n");
  await drawn("Done.");
  const body = page.locator('[data-pending-id="m_list"] .baton-message-body');
  // drawn as the whole text would be
  assert.equal(await body.locator("pre code").count(), 2);
  assert.equal(await body.locator("pre code").first().textContent(), "a = 1\n\nb = 2\n");
  assert.equal(await body.locator("pre code").nth(1).textContent(), "indented four past the item\n");
  assert.equal(await body.locator("ol").count(), 1, "one list, not one per part");
  assert.deepEqual(await body.locator("ol > li > ul > li").count(), 2);
  assert.equal(await body.locator(":scope > div > p, :scope > p").last().textContent(), "Done.");
});

test("a panel reloaded while its prompt is being sent shows that prompt in the box once, and not after it is stored", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await sentFromTheBox(page, "explain the parser");
  // the panel is hidden and shown again while the reply streams: the view reloads
  await reloaded(page);
  await showFixture(page);
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  // the send was refused after all: the prompt comes back once, not twice
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await toView(page, { type: "sendOutcome", stored: false, text: "explain the parser", sessionId: SESSION.sessionId });
  await page.waitForFunction(() => document.activeElement?.id === "baton-input");
  assert.equal(await input.inputValue(), "explain the parser");

  // sent again, reloaded mid-send, and stored this time: the box is left empty
  await input.press("Enter");
  await waitPosted(page, (m) => m.type === "send" && m.text === "explain the parser");
  await reloaded(page);
  await showFixture(page);
  await toView(page, { type: "sendOutcome", stored: true, text: "explain the parser", sessionId: SESSION.sessionId });
  await untilSaved(page, "draft", "");
  assert.equal(await input.inputValue(), "");
});

test("a prompt back in a reloaded panel's box and typed on is not put back a second time when its send was refused", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await sentFromTheBox(page, "explain the parser");
  await reloaded(page);
  await showFixture(page);
  await page.waitForFunction(() => document.querySelector(".baton-input").value === "explain the parser");
  // the user goes on writing while the send runs; then it is refused
  await input.press("End");
  await input.pressSequentially(" and the lexer");
  await toView(page, { type: "sendOutcome", stored: false, text: "explain the parser", sessionId: SESSION.sessionId });
  await untilSaved(page, "sent", null);
  assert.equal(await input.inputValue(), "explain the parser and the lexer");
});

test("a window reloaded while its prompt is being sent does not offer that prompt again once the session holds it", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await sentFromTheBox(page, "explain the parser");
  const prompt = { id: "m_sent", role: "user", kind: "message", content: [{ type: "text", text: "explain the parser" }], createdAt: "2026-12-01T10:05:00Z", tokens: 5 };
  // stored, the prompt is in the view while the reply streams
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await toView(page, sessionUpdate({ messages: [...MESSAGES, prompt] }));
  await page.locator('article[data-message-id="m_sent"]').waitFor();
  // the whole window reloads: a new extension host, which never says how that send ended
  await reloaded(page);
  assert.equal(await input.inputValue(), "");
  await toView(page, sessionUpdate({ messages: [...MESSAGES, prompt] }));
  await page.locator('article[data-message-id="m_sent"]').waitFor();
  assert.equal(await input.inputValue(), "");
  await untilSaved(page, "draft", "");

  // a prompt the session does not hold (it was never stored) stays in the box to send again
  await input.fill("and the lexer");
  await input.press("Enter");
  await waitPosted(page, (m) => m.type === "send" && m.text === "and the lexer");
  await reloaded(page);
  await toView(page, sessionUpdate({ messages: [...MESSAGES, prompt] }));
  await page.locator('article[data-message-id="m_sent"]').waitFor();
  assert.equal(await input.inputValue(), "and the lexer");
});

test("a panel reloaded on another session while a prompt is being sent keeps that prompt out of its box, for its own session", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await sentFromTheBox(page, "explain the parser");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  // the user opens another session while the reply streams, and the panel reloads there
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await untilSaved(page, "sessionId", "s_other");
  await reloaded(page);
  assert.equal(await input.inputValue(), "", "the other session's prompt is not in this box");
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await page.getByRole("button", { name: "Send" }).waitFor();
  assert.equal(await input.inputValue(), "");
  // it was not sent after all: it waits for its own session, and comes back there once
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await toView(page, { type: "sendOutcome", stored: false, text: "explain the parser", sessionId: SESSION.sessionId });
  await untilSaved(page, "sent", null);
  assert.equal(await input.inputValue(), "");
  // reloaded again before going back: still not this box's
  await reloaded(page);
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await page.getByRole("button", { name: "Send" }).waitFor();
  assert.equal(await input.inputValue(), "");
  await toView(page, sessionUpdate());
  await page.waitForFunction(() => document.querySelector(".baton-input").value !== "");
  assert.equal(await input.inputValue(), "explain the parser");
});

test("a prompt kept for a session deleted since comes into the empty box with a notice, not kept for it for good", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await sentFromTheBox(page, "explain the parser");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  // the user opens another session while the reply streams; the prompt was not sent after all
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await toView(page, { type: "sendOutcome", stored: false, text: "explain the parser", sessionId: SESSION.sessionId });
  await untilSaved(page, "sent", null);
  assert.deepEqual((await savedState(page)).returned, { [SESSION.sessionId]: "explain the parser" });
  // typed on here, then its session is deleted (from another window, say): it waits while the box holds text
  await input.fill("for the other one");
  await toView(page, sessionUpdate({ session: OTHER_SESSION, sessions: [OTHER_SESSION], messages: [] }));
  await page.getByRole("button", { name: "Send" }).waitFor();
  assert.equal(await input.inputValue(), "for the other one");
  // the box emptied (sent here), the next update brings it in, said by a notice, and lets it go
  await input.fill("");
  await toView(page, sessionUpdate({ session: OTHER_SESSION, sessions: [OTHER_SESSION], messages: [] }));
  await page.waitForFunction(() => document.querySelector(".baton-input").value !== "");
  assert.equal(await input.inputValue(), "explain the parser");
  const notice = page.locator(".baton-notice");
  await notice.waitFor();
  assert.match(await notice.textContent(), /A prompt not sent to a conversation deleted since is back in the box/);
  assert.equal((await savedState(page)).returned?.[SESSION.sessionId], undefined);
  // once only: a later update does not put it back a second time
  await input.fill("");
  await toView(page, sessionUpdate({ session: OTHER_SESSION, sessions: [OTHER_SESSION], messages: [] }));
  await page.getByRole("button", { name: "Send" }).waitFor();
  assert.equal(await input.inputValue(), "");
});

test("a deleted conversation's prompt handed back mid-send leaves the send's own prompt kept for a reload", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await sentFromTheBox(page, "explain the parser");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  // while the reply runs, another conversation is deleted: the host hands back the prompt it kept for it
  await toView(page, { type: "sendOutcome", stored: false, text: "the deleted one's prompt", sessionId: SESSION.sessionId });
  await page.waitForFunction(() => document.querySelector(".baton-input").value !== "");
  assert.equal(await input.inputValue(), "the deleted one's prompt");
  assert.deepEqual((await savedState(page)).sent, { text: "explain the parser", sessionId: SESSION.sessionId });
  // the window reloads mid-send (no outcome ever comes) and the session does not hold the prompt
  await reloaded(page);
  await toView(page, sessionUpdate());
  await page.waitForFunction(() => document.querySelector(".baton-input").value.includes("explain the parser"), undefined, {
    timeout: 5_000,
  });
  assert.match(await input.inputValue(), /the deleted one's prompt/);
});

test("a window reloaded while its prompt was being sent to a session deleted since gives that prompt back", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await sentFromTheBox(page, "explain the parser");
  // the whole window reloads (no outcome ever comes); the session is deleted meanwhile
  await reloaded(page);
  await toView(page, sessionUpdate({ session: OTHER_SESSION, sessions: [OTHER_SESSION], messages: [] }));
  await page.waitForFunction(() => document.querySelector(".baton-input").value !== "", undefined, { timeout: 5_000 });
  assert.equal(await input.inputValue(), "explain the parser");
  await page.locator(".baton-notice").waitFor();
  await untilSaved(page, "sent", null);
  // reloaded again: not offered a second time
  await input.fill("");
  await reloaded(page);
  await toView(page, sessionUpdate({ session: OTHER_SESSION, sessions: [OTHER_SESSION], messages: [] }));
  await page.getByRole("button", { name: "Send" }).waitFor();
  assert.equal(await input.inputValue(), "");
});

test("the message the keyboard is on keeps the focus when a send starts and ends", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const focused = () => page.evaluate(() => document.activeElement?.closest("article")?.dataset.messageId ?? null);
  await clickMessage(page, "m_user1");
  await page.keyboard.press("ArrowDown");
  assert.equal(await focused(), "m_asst1");
  // a send starts (its prompts lose Edit, so they are drawn again) while the user reads
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await page.waitForFunction(() => document.querySelector(".baton-feed").getAttribute("aria-busy") === "true");
  assert.equal(await focused(), "m_asst1");
  await page.keyboard.press("ArrowDown");
  assert.equal(await focused(), "m_result1");
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("ArrowUp");
  assert.equal(await focused(), "m_user1");
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await toView(page, sessionUpdate());
  await page.waitForFunction(() => document.querySelector(".baton-feed").getAttribute("aria-busy") === "false");
  assert.equal(await focused(), "m_user1");
  await page.keyboard.press("ArrowDown");
  assert.equal(await focused(), "m_asst1");
});

test("the message the keyboard is on, compacted from its menu, hands the focus to the first message after it left in the view", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const focused = () => page.evaluate(() => document.activeElement?.closest("article")?.dataset.messageId ?? null);
  await clickMessage(page, "m_user1");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Shift+F10"); // Compact Up To Here, from the keyboard
  // a new summary stands for everything up to m_asst1
  const summary = { ...MESSAGES[0], id: "m_summary2", boundaryId: "bnd_2" };
  await toView(page, sessionUpdate({ messages: [summary, ...MESSAGES.slice(3)] }));
  await message(page, "m_summary2").waitFor();
  assert.equal(await focused(), "m_result1", "not the page's body: the arrow keys go on from there");
  await page.keyboard.press("ArrowUp");
  assert.equal(await focused(), "m_summary2");
  // Compact From Here on the last messages: none is left after it, the view's last takes it
  await page.keyboard.press("End");
  assert.equal(await focused(), "m_att2");
  const tail = { ...MESSAGES[0], id: "m_summary3", boundaryId: "bnd_3" };
  await toView(page, sessionUpdate({ messages: [summary, ...MESSAGES.slice(3, 5), tail] }));
  await message(page, "m_summary3").waitFor();
  assert.equal(await focused(), "m_summary3");
});

test("Undo pressed from the keyboard on a summary puts the focus on the first message it brought back", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const focused = () => page.evaluate(() => document.activeElement?.closest("article")?.dataset.messageId ?? null);
  const from = (await posted(page)).length;
  await message(page, "m_summary").getByRole("button", { name: "Undo" }).focus();
  await page.keyboard.press("Enter");
  await waitPosted(page, (m) => m.type === "undo", from);
  // the summary goes; the messages it stood for come back in its place, before those it kept
  const restored = [
    { ...MESSAGES[1], id: "o_first" },
    { ...MESSAGES[2], id: "o_second" },
  ];
  await toView(page, sessionUpdate({ messages: [...restored, ...MESSAGES.slice(1)] }));
  await message(page, "o_first").waitFor();
  assert.equal(await focused(), "o_first", "where the summary was, not the first message it kept");
  await page.keyboard.press("ArrowDown");
  assert.equal(await focused(), "o_second");
});

test("Send pressed from the keyboard leaves the focus on Stop while the reply runs, then in the box", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent || null);
  await page.locator("#baton-input").fill("Explain the clamp");
  await page.getByRole("button", { name: "Send" }).focus();
  await page.keyboard.press("Enter");
  await waitPosted(page, (m) => m.type === "send");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await page.getByRole("button", { name: "Stop" }).waitFor();
  // the button pressed is gone: not the page's body, where the keyboard starts over
  assert.equal(await focused(), "Stop");
  const from = (await posted(page)).length;
  await page.keyboard.press("Enter");
  await waitPosted(page, (m) => m.type === "stop", from);
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await page.getByRole("button", { name: "Send" }).waitFor();
  assert.equal(await focused(), "baton-input", "the next prompt is typed there");
});

test("a reply streaming in one session keeps its Stop and its returned prompt to that session", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await sentFromTheBox(page, "a long question");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await page.getByRole("button", { name: "Stop" }).waitFor();
  // the user opens another session while the reply streams: its box sends, later
  await page.evaluate(() => document.querySelector(".baton-input").focus());
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  const send = page.getByRole("button", { name: "Send" });
  await send.waitFor();
  assert.equal(await page.getByRole("button", { name: "Stop" }).isVisible(), false, "no Stop for another session's reply");
  assert.equal(await send.isDisabled(), true, "one send at a time: Send waits for the other session's reply");
  await input.fill("for the other one");
  await input.press("Enter");
  assert.equal(await input.inputValue(), "for the other one", "Enter keeps the text while Send waits");
  // the first session's prompt was not sent: it does not come into this box
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await toView(page, { type: "sendOutcome", stored: false, text: "a long question", sessionId: SESSION.sessionId });
  await page.waitForFunction(() => !document.querySelector(".baton-send").disabled);
  assert.equal(await input.inputValue(), "for the other one");
  // back on its own session, it is in the box again
  await toView(page, sessionUpdate());
  await page.waitForFunction(() => document.querySelector(".baton-input").value.startsWith("a long question"));
  assert.equal(await input.inputValue(), "a long question\nfor the other one");
  // a Stop names the session it was clicked in
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  const from = (await posted(page)).length;
  await page.getByRole("button", { name: "Stop" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "stop", from), { type: "stop", sessionId: SESSION.sessionId });
});

test("what the send is doing shows under the turn until the reply's text comes, and goes when it ends", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  await page.locator("#baton-input").fill("Explain the clamp");
  await page.locator("#baton-input").press("Enter");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  const wait = "Rate limited by the API: trying again in 30 s (attempt 2 of 3)";
  await toView(page, { type: "status", sessionId: "s_other", message: "not this one" });
  await toView(page, { type: "status", sessionId: SESSION.sessionId, message: wait });
  const status = page.getByRole("status").filter({ hasText: "trying again" });
  await status.waitFor();
  assert.equal(await status.textContent(), wait);
  assert.equal(await page.getByText("not this one").count(), 0);
  const order = await page.$$eval(".baton-pending", (els) => els.map((el) => el.getAttribute("aria-label") ?? el.textContent));
  assert.deepEqual(order, ["You, sending", wait]); // under the prompt
  await toView(page, { type: "delta", sessionId: SESSION.sessionId, messageId: "m_new", text: "The clamp" });
  await page.locator('[data-pending-id="m_new"]').waitFor();
  await page.waitForFunction(() => !document.querySelector(".baton-status"));

  await toView(page, { type: "status", sessionId: SESSION.sessionId, message: "Reply complete" });
  await page.locator(".baton-status").waitFor();
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await toView(page, sessionUpdate({ messages: MESSAGES }));
  await page.waitForFunction(() => !document.querySelector(".baton-pending"));
});
