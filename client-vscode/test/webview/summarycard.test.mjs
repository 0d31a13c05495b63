// The summary card's "Summarized messages": what its compaction replaced, read from the
// transcript a page at a time when opened and shown greyed under the summary (the feed stays
// virtualized: nothing is asked for until it opens); and the task list as a checklist.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { MESSAGES, sessionUpdate } from "./fixture.mjs";
import { RESULTS, message, openView, posted, toView, useBrowser, waitPosted } from "./view.mjs";

useBrowser();

const text = (t) => ({ type: "text", text: t });
const at = "2026-12-01T08:00:00Z";
/** What compaction bnd_1 replaced, as `baton/session/replaced` gives it (five messages). */
const REPLACED = [
  { id: "o1", role: "user", kind: "message", content: [text("Move the thresholds into settings, please.")], createdAt: at, tokens: 12 },
  {
    id: "o2",
    role: "assistant",
    kind: "message",
    content: [text("Reading the budget first."), { type: "tool_use", id: "tu_old", name: "read_file", input: { path: "budget.py" } }],
    toolCalls: [{ toolUseId: "tu_old", tool: "read_file", title: "Read budget.py", status: "done", summary: "80 lines" }],
    createdAt: at,
    tokens: 40,
  },
  { id: "o3", role: "user", kind: "message", content: [{ type: "tool_result", tool_use_id: "tu_old", content: "WARNING = 0.8\n" }], createdAt: at, tokens: 8 },
  { id: "o4", role: "assistant", kind: "message", content: [text("The warning point is a constant; I will make it a setting.")], createdAt: at, tokens: 20 },
  { id: "o5", role: "user", kind: "message", content: [text("Never touch the migrations.")], createdAt: at, tokens: 9 },
];
const DROPPED = ["5 messages summarized", "1 tool result cleared"];
const TODOS = [
  { content: "Read the budget code", status: "completed", activeForm: "Reading the budget code" },
  { content: "Move the thresholds into settings", status: "in_progress", activeForm: "Moving the thresholds into settings" },
  { content: "Run the tests", status: "pending", activeForm: "Running the tests" },
];

function withDropped() {
  return MESSAGES.map((m) => (m.id === "m_summary" ? { ...m, dropped: DROPPED } : m));
}

const page = (messages, offset, total, extra = {}) => ({
  type: "replaced",
  sessionId: "s_demo",
  boundaryId: "bnd_1",
  messages,
  offset,
  totalMessages: total,
  ...extra,
});

async function openCard(view) {
  const card = message(view, "m_summary");
  await card.locator("details.baton-summary > summary").click();
  return card;
}

test("the card reads what its compaction replaced a page at a time, greyed, and keeps it", async (t) => {
  const view = await openView(t);
  await toView(view, sessionUpdate({ messages: withDropped() }));
  const card = await openCard(view);
  assert.deepEqual(await card.locator(".baton-dropped li").allTextContents(), DROPPED);
  assert.equal((await posted(view)).some((m) => m.type === "loadReplaced"), false, "nothing read before it opens");
  let from = (await posted(view)).length;
  await card.locator("details.baton-replaced > summary").click();
  const asked = await waitPosted(view, (m) => m.type === "loadReplaced", from);
  assert.deepEqual(asked, { type: "loadReplaced", sessionId: "s_demo", boundaryId: "bnd_1", offset: 0 });
  assert.match(await card.locator(".baton-replaced-status").textContent(), /Reading/);

  await toView(view, page(REPLACED.slice(0, 3), 0, 5));
  const shown = card.locator(".baton-replaced-message");
  await shown.nth(2).waitFor();
  assert.equal(await shown.count(), 3);
  assert.equal(await card.locator(".baton-replaced-status").textContent(), "3 of 5 shown");
  assert.match(await card.locator("details.baton-replaced > summary").textContent(), /Summarized messages · 5 messages/);
  // the tool call's line is the server's, its result read from the span
  assert.match(await shown.nth(1).textContent(), /Read budget\.py/);
  // greyed, and not messages of the view (no selection, no actions)
  const [greyed, normal] = await Promise.all([
    shown.first().evaluate((el) => getComputedStyle(el).color),
    message(view, "m_user1").locator(".baton-markdown").first().evaluate((el) => getComputedStyle(el).color),
  ]);
  assert.notEqual(greyed, normal, "greyed: the description colour, not the text's");
  assert.equal(await card.locator("article").count(), 0);
  assert.equal(await card.locator(".baton-replaced .baton-message-actions").count(), 0);

  from = (await posted(view)).length;
  await card.locator(".baton-replaced-more").click();
  assert.deepEqual(await waitPosted(view, (m) => m.type === "loadReplaced", from), {
    type: "loadReplaced",
    sessionId: "s_demo",
    boundaryId: "bnd_1",
    offset: 3,
  });
  await toView(view, page(REPLACED.slice(0, 2), 0, 5)); // a stale page is ignored
  await toView(view, page(REPLACED.slice(3), 3, 5));
  await shown.nth(4).waitFor();
  assert.deepEqual(await shown.locator(".baton-replaced-head .baton-role").allTextContents(), [
    "You",
    "Assistant",
    "Tool result",
    "Assistant",
    "You",
  ]);
  assert.equal(await card.locator(".baton-replaced-more").isHidden(), true);
  assert.equal(await card.locator(".baton-replaced-status").isHidden(), true);

  // the view refreshed (a reply came): the card is drawn again with what was read
  const grown = [...withDropped(), { id: "m_new", role: "assistant", kind: "message", content: [text("Done.")], createdAt: at, tokens: 3 }];
  await toView(view, sessionUpdate({ messages: grown }));
  await message(view, "m_new").waitFor();
  assert.equal(await message(view, "m_summary").locator(".baton-replaced-message").count(), 5);
  assert.equal((await posted(view)).filter((m) => m.type === "loadReplaced").length, 2, "not read again");
});

test("a right-click on a summarized message names that message, for Copy Message, not the summary", async (t) => {
  const view = await openView(t);
  await toView(view, sessionUpdate({ messages: withDropped() }));
  const card = await openCard(view);
  await card.locator("details.baton-replaced > summary").click();
  await waitPosted(view, (m) => m.type === "loadReplaced");
  await toView(view, page(REPLACED, 0, 5));
  const shown = card.locator(".baton-replaced-message");
  await shown.nth(4).waitFor();
  const from = (await posted(view)).length;
  await shown.nth(3).getByText("The warning point").click({ button: "right" });
  const menu = await view.evaluate(() => window.__baton.contextMenus.at(-1));
  assert.equal(menu.webviewSection, "replacedMessage", "the menu of a summarized message: Copy, not the summary's Compact or Pin");
  assert.equal(menu.messageId, "o4");
  assert.equal(menu.boundaryId, "bnd_1");
  assert.equal(menu.replacedIndex, 3, "where the host reads it from the transcript");
  assert.equal(menu.sessionId, "s_demo", "the session it is read from");
  // it selects nothing: it is not a message of the view
  assert.equal((await posted(view)).slice(from).filter((m) => m.type === "selection").length, 0);
  assert.equal(await view.locator("article.selected").count(), 0);
});

test("from the keyboard alone a summarized message is reached with Tab and its menu opened with the menu key", async (t) => {
  const view = await openView(t);
  await toView(view, sessionUpdate({ messages: withDropped() }));
  const card = message(view, "m_summary");
  await card.locator("details.baton-summary > summary").focus();
  await view.keyboard.press("Enter");
  const list = card.locator("details.baton-replaced > summary");
  await list.focus();
  await view.keyboard.press("Enter");
  await waitPosted(view, (m) => m.type === "loadReplaced");
  await toView(view, page(REPLACED, 0, 5));
  await card.locator(".baton-replaced-message").nth(4).waitFor();
  // the next stop after the list's title is its first message (its text alone: nothing in it takes the focus)
  await view.keyboard.press("Tab");
  assert.equal(await view.evaluate(() => document.activeElement?.dataset.replacedId), "o1");
  const from = (await posted(view)).length;
  await view.keyboard.press("Shift+F10");
  const menu = await view.evaluate(() => window.__baton.contextMenus.at(-1));
  assert.equal(menu.webviewSection, "replacedMessage", "Copy Message, not the summary's menu");
  assert.equal(menu.messageId, "o1");
  assert.equal(menu.replacedIndex, 0);
  assert.equal((await posted(view)).slice(from).filter((m) => m.type === "selection").length, 0);
});

test("Show more pressed from the keyboard puts the focus on the first message it shows, and Try again back on itself", async (t) => {
  const view = await openView(t);
  await toView(view, sessionUpdate({ messages: withDropped() }));
  const card = await openCard(view);
  await card.locator("details.baton-replaced > summary").click();
  await waitPosted(view, (m) => m.type === "loadReplaced");
  await toView(view, page(REPLACED.slice(0, 2), 0, 5));
  const more = card.locator(".baton-replaced-more");
  await more.waitFor();
  const focusedId = () => view.evaluate(() => document.activeElement?.dataset?.replacedId ?? document.activeElement?.textContent ?? null);
  let from = (await posted(view)).length;
  await more.focus();
  await view.keyboard.press("Enter");
  await waitPosted(view, (m) => m.type === "loadReplaced", from);
  await toView(view, page([], 0, 0, { offset: 2, error: "the transcript is busy" }));
  await more.waitFor();
  assert.equal(await focusedId(), "Try again", "the button it was pressed on, shown again");
  from = (await posted(view)).length;
  await view.keyboard.press("Enter");
  await waitPosted(view, (m) => m.type === "loadReplaced", from);
  await toView(view, page(REPLACED.slice(2, 4), 2, 5));
  await card.locator(".baton-replaced-message").nth(3).waitFor();
  assert.equal(await focusedId(), "o3", "not the page's body: the button went while it read");
  await view.keyboard.press("Shift+F10");
  assert.equal((await view.evaluate(() => window.__baton.contextMenus.at(-1))).messageId, "o3");
});

test("a page that could not be read says so on the card and can be asked again", async (t) => {
  const view = await openView(t);
  await toView(view, sessionUpdate({ messages: withDropped() }));
  const card = await openCard(view);
  let from = (await posted(view)).length;
  await card.locator("details.baton-replaced > summary").click();
  await waitPosted(view, (m) => m.type === "loadReplaced", from);
  await toView(view, page([], 0, 0, { error: "no compaction 'bnd_1' in session s_demo" }));
  await card.locator(".baton-replaced-more").waitFor();
  assert.match(await card.locator(".baton-replaced-status").textContent(), /could not be read: no compaction/);
  assert.equal(await card.locator(".baton-replaced-more").textContent(), "Try again");
  from = (await posted(view)).length;
  await card.locator(".baton-replaced-more").click();
  assert.equal((await waitPosted(view, (m) => m.type === "loadReplaced", from)).offset, 0);
  await toView(view, page(REPLACED, 0, 5));
  await card.locator(".baton-replaced-message").nth(4).waitFor();
  assert.equal(await view.locator(".baton-banner").isHidden(), true, "no banner for it");
});

test("the task list is a checklist that follows the server's list, and goes when there is none", async (t) => {
  const view = await openView(t);
  await toView(view, sessionUpdate({ todos: TODOS }));
  const list = view.locator(".baton-todos");
  await list.waitFor();
  assert.equal(await list.evaluate((el) => el.open), true);
  assert.match(await list.locator("summary").textContent(), /Tasks 1\/3 done · Moving the thresholds into settings/);
  const items = list.locator("li.baton-todo");
  assert.deepEqual(await items.evaluateAll((els) => els.map((el) => el.className)), [
    "baton-todo status-completed",
    "baton-todo status-in_progress",
    "baton-todo status-pending",
  ]);
  assert.deepEqual(await items.locator(".baton-todo-text").allTextContents(), [
    "Read the budget code",
    "Moving the thresholds into settings", // in progress: its active form
    "Run the tests",
  ]);
  assert.deepEqual(await items.locator(".baton-visually-hidden").allTextContents(), [" (completed)", " (in progress)", " (pending)"]);
  const struck = await items.first().locator(".baton-todo-text").evaluate((el) => getComputedStyle(el).textDecorationLine);
  assert.equal(struck, "line-through");

  // the model moved on: the list follows; folded by the user, it stays folded
  await list.locator("summary").click();
  const next = TODOS.map((todo, i) => ({ ...todo, status: i < 2 ? "completed" : "in_progress" }));
  await toView(view, sessionUpdate({ todos: next }));
  await view.locator(".baton-todos summary", { hasText: "2/3 done · Running the tests" }).waitFor();
  assert.equal(await view.locator(".baton-todos").evaluate((el) => el.open), false);
  await toView(view, sessionUpdate({}));
  await view.locator(".baton-todos-slot").waitFor({ state: "hidden" });
  assert.equal(await view.locator(".baton-todo").count(), 0);
});

for (const theme of ["dark", "light", "hc"]) {
  test(`the summary card with what it replaced and the checklist in the ${theme} theme`, async (t) => {
    const view = await openView(t, theme, { width: 460, height: 1000 });
    await toView(view, sessionUpdate({ messages: withDropped(), todos: TODOS }));
    const card = await openCard(view);
    const from = (await posted(view)).length;
    await card.locator("details.baton-replaced > summary").click();
    await waitPosted(view, (m) => m.type === "loadReplaced", from);
    await toView(view, page(REPLACED.slice(0, 4), 0, 5));
    await card.locator(".baton-replaced-message").nth(3).waitFor();
    const replaced = card.locator(".baton-replaced-message").first();
    const [greyed, normal] = await Promise.all([
      replaced.evaluate((el) => getComputedStyle(el).color),
      message(view, "m_user1").locator(".baton-markdown").first().evaluate((el) => getComputedStyle(el).color),
    ]);
    // greyed by colour (descriptionForeground); high contrast's is white, so only the rule marks it
    if (theme === "hc") assert.equal(greyed, "rgb(255, 255, 255)");
    else assert.notEqual(greyed, normal);
    assert.equal(await replaced.evaluate((el) => getComputedStyle(el).opacity), "1", "never faded below legibility");
    assert.equal(await replaced.evaluate((el) => getComputedStyle(el).borderLeftStyle), "dashed");
    await card.locator(".baton-replaced-message").first().scrollIntoViewIfNeeded();
    await view.screenshot({ path: join(RESULTS, `webview-summary-card-${theme}.png`) });
  });
}
