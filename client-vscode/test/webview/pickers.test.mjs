// The header's pickers in the light, dark and high-contrast themes: the model picker (the
// models with their windows, the current one marked, a choice posted and the header
// following the usage), and the session picker (title, last activity, size, source; search;
// rename; delete after a confirmation; New Chat).
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { OTHER_SESSION, SESSION, USAGE } from "./fixture.mjs";
import { RESULTS, openView, posted, showFixture, toView, useBrowser, waitPosted } from "./view.mjs";

useBrowser();

const THEMES = ["light", "dark", "hc"];

const CATALOG = {
  source: "api",
  current: "claude-sonnet-4-5",
  models: [
    { id: "claude-opus-5", displayName: "Claude Opus 5", contextWindow: 1_000_000, maxOutput: 128_000, windowFrom: "api", current: false },
    { id: "claude-sonnet-4-5", displayName: "Claude Sonnet 4.5", contextWindow: 200_000, maxOutput: 64_000, windowFrom: "api", current: true },
    { id: "claude-haiku-4-5", displayName: "Claude Haiku 4.5", contextWindow: 200_000, maxOutput: 64_000, windowFrom: "table", current: false },
  ],
};

const IMPORTED = {
  ...SESSION,
  sessionId: "s_imported",
  title: "Expense report crash",
  updatedAt: "2025-03-04T09:40:00Z",
  contextTokens: 48_213,
  source: { kind: "claude-code", file: "7c3f2a9e.jsonl", path: "/home/dev/.claude/projects/x/7c3f2a9e.jsonl" },
};
const LISTED = [
  { ...SESSION, contextTokens: 124_000 },
  { ...OTHER_SESSION, updatedAt: new Date(Date.now() - 3 * 3_600_000).toISOString() }, // size unknown
  IMPORTED,
];

for (const theme of THEMES) {
  test(`the model picker lists the models with their windows and switches (${theme})`, async (t) => {
    const page = await openView(t, theme, { width: 420, height: 640 });
    await showFixture(page, { sessions: LISTED });
    const opener = page.locator(".baton-model-button");
    assert.equal(await opener.textContent(), "sonnet-4-5 · 200K");
    assert.equal(await opener.getAttribute("aria-label"), "Model: claude-sonnet-4-5 · 200K");
    const from = (await posted(page)).length;
    await opener.click();
    await waitPosted(page, (m) => m.type === "listModels", from);
    assert.match(await page.locator(".baton-model-picker").textContent(), /Loading models/);
    await toView(page, { type: "models", catalog: CATALOG });
    const rows = page.getByRole("menuitemradio");
    await rows.first().waitFor();
    assert.equal(await rows.count(), 3);
    const checked = page.locator('.baton-model-row[aria-checked="true"]');
    assert.equal(await checked.getAttribute("data-model"), "claude-sonnet-4-5");
    assert.match(await page.locator(".baton-model-picker").textContent(), /From the Anthropic Models API/);
    assert.match(await rows.nth(0).textContent(), /Claude Opus 5claude-opus-51M window/);
    assert.match(await rows.nth(2).textContent(), /200K window/);
    assert.equal(await opener.getAttribute("aria-expanded"), "true");
    await page.screenshot({ path: join(RESULTS, `webview-model-picker-${theme}.png`) });

    await page.getByRole("menuitemradio", { name: /Claude Opus 5/ }).click();
    assert.deepEqual(await waitPosted(page, (m) => m.type === "setModel", from), { type: "setModel", model: "claude-opus-5", sessionId: SESSION.sessionId });
    assert.equal(await page.locator(".baton-model-picker").isVisible(), false);
    // the host's answer: the usage against the new model's budget (the meter and the header follow)
    const text = { ...USAGE.text, panel: "12% used · 124K/1M est. · compacts at 900K" };
    const moved = { ...USAGE, model: "claude-opus-5", contextWindow: 1_000_000, percentUsed: 12.4, text };
    await toView(page, { type: "usage", sessionId: SESSION.sessionId, usage: moved });
    await page.waitForFunction(() => document.querySelector(".baton-model-button").textContent === "opus-5 · 1M");
    assert.match(await page.locator(".baton-usage > summary").textContent(), /1M/);
  });
}

test("the model picker says the list is the configured one and why, or that it failed", async (t) => {
  const page = await openView(t, "light");
  await showFixture(page);
  await page.locator(".baton-model-button").click();
  const configured = { ...CATALOG, source: "configured", reason: "no Anthropic API key" };
  configured.models = [{ ...CATALOG.models[2], windowFrom: "assumed", id: "my-model", displayName: "my-model" }, ...CATALOG.models];
  await toView(page, { type: "models", catalog: configured });
  await page.getByRole("menuitemradio").first().waitFor();
  const picker = page.locator(".baton-model-picker");
  assert.match(await picker.textContent(), /Configured models: no Anthropic API key/);
  assert.match(await picker.textContent(), /200K window \(assumed\)/);
  // choosing the current model changes nothing
  const from = (await posted(page)).length;
  await page.getByRole("menuitemradio", { name: /Claude Sonnet 4.5/ }).click();
  await page.waitForTimeout(100);
  assert.equal((await posted(page)).slice(from).filter((m) => m.type === "setModel").length, 0);

  await page.locator(".baton-model-button").click();
  await toView(page, { type: "models", catalog: null, message: "The models could not be listed: server gone" });
  await page.getByText("The models could not be listed: server gone").waitFor();
  await page.keyboard.press("Escape");
  assert.equal(await picker.isVisible(), false);
});

for (const theme of THEMES) {
  test(`the session picker shows, searches, renames and deletes (${theme})`, async (t) => {
    const page = await openView(t, theme, { width: 420, height: 700 });
    await showFixture(page, { sessions: LISTED });
    const opener = page.locator(".baton-session-button");
    assert.equal(await opener.textContent(), SESSION.title);
    const from = (await posted(page)).length;
    await opener.click();
    await waitPosted(page, (m) => m.type === "listSessions", from);
    await toView(page, { type: "sessions", sessions: LISTED });
    const rows = page.locator(".baton-session-row");
    await rows.nth(2).waitFor();
    const texts = await rows.allTextContents();
    assert.match(texts[0], /Refactor the token meter.*current/);
    assert.match(texts[0], /124K tokens/);
    assert.match(texts[1], /Fix the importer.*3 h ago.*size unknown/);
    assert.match(texts[2], /Expense report crash.*Mar 4, 2025.*48\.2K tokens.*Imported from 7c3f2a9e\.jsonl/);
    await page.screenshot({ path: join(RESULTS, `webview-session-picker-${theme}.png`) });

    // search filters by title
    const search = page.getByRole("searchbox", { name: "Search sessions" });
    await search.fill("EXPENSE");
    assert.equal(await rows.count(), 1);
    await search.fill("nothing like it");
    await page.getByText(`No session's title matches "nothing like it".`).waitFor();
    await search.fill("");
    assert.equal(await rows.count(), 3);

    // rename in place: Enter posts it; the host's list shows it
    await page.getByRole("button", { name: 'Rename "Fix the importer"' }).click();
    const title = page.getByRole("textbox", { name: "New title" });
    await title.fill("Importer: keep tool ids");
    await title.press("Enter");
    assert.deepEqual(await waitPosted(page, (m) => m.type === "renameSession", from), {
      type: "renameSession",
      sessionId: "s_other",
      title: "Importer: keep tool ids",
    });
    const renamed = LISTED.map((s) => (s.sessionId === "s_other" ? { ...s, title: "Importer: keep tool ids" } : s));
    await toView(page, { type: "sessions", sessions: renamed });
    await page.getByText("Importer: keep tool ids").waitFor();
    assert.equal(await page.locator(".baton-model-button").textContent(), "sonnet-4-5 · 200K"); // a list keeps the window

    // delete asks first; Cancel keeps it, Delete posts it
    await page.getByRole("button", { name: 'Delete "Expense report crash"' }).click();
    const confirm = page.locator(".baton-session-confirm");
    assert.match(await confirm.textContent(), /Delete "Expense report crash"\? It leaves the list; its transcript stays on disk\./);
    await page.screenshot({ path: join(RESULTS, `webview-session-delete-${theme}.png`) });
    await confirm.getByRole("button", { name: "Cancel" }).click();
    assert.equal(await confirm.count(), 0);
    assert.equal((await posted(page)).filter((m) => m.type === "deleteSession").length, 0);
    await page.getByRole("button", { name: 'Delete "Expense report crash"' }).click();
    await page.locator(".baton-session-confirm").getByRole("button", { name: "Delete" }).click();
    assert.deepEqual(await waitPosted(page, (m) => m.type === "deleteSession", from), {
      type: "deleteSession",
      sessionId: "s_imported",
    });
    assert.equal(await page.locator(".baton-session-picker").isVisible(), false);
  });
}

test("the session picker opens a session, starts a New Chat, and closes on Escape", async (t) => {
  const page = await openView(t, "dark");
  await showFixture(page, { sessions: LISTED });
  const opener = page.locator(".baton-session-button");
  await opener.click();
  await page.getByRole("searchbox", { name: "Search sessions" }).fill("importer");
  await page.getByRole("searchbox", { name: "Search sessions" }).press("Enter");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selectSession"), { type: "selectSession", sessionId: "s_other" });
  assert.equal(await page.locator(".baton-session-picker").isVisible(), false);

  await opener.click();
  await page.locator(".baton-session-picker").getByRole("button", { name: "New Chat" }).click();
  await waitPosted(page, (m) => m.type === "newChat");

  await opener.click();
  await page.keyboard.press("Escape");
  assert.equal(await page.locator(".baton-session-picker").isVisible(), false);
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains("baton-session-button")), true);
  // a read-only session offers no rename or delete
  await opener.click();
  await toView(page, { type: "sessions", sessions: [{ ...SESSION, readOnly: true }] });
  await page.locator(".baton-session-picker").getByText("read-only", { exact: true }).waitFor();
  assert.equal(await page.getByRole("button", { name: /^Rename/ }).count(), 0);
});

test("the welcome's All sessions opens the session picker", async (t) => {
  const page = await openView(t, "light");
  const many = Array.from({ length: 10 }, (_, i) => ({ ...OTHER_SESSION, sessionId: `s_${i}`, title: `Chat ${i}` }));
  await toView(page, { type: "session", session: null, sessions: many, messages: [], usage: null, hasApiKey: true });
  await page.getByRole("button", { name: "All sessions…" }).click();
  await page.locator(".baton-session-row").nth(9).waitFor();
  await waitPosted(page, (m) => m.type === "listSessions");
});

test("the session picker keeps the keyboard's place when the list is redrawn (a reply stored elsewhere, say)", async (t) => {
  const page = await openView(t, "dark");
  await showFixture(page, { sessions: LISTED });
  await page.locator(".baton-session-button").click();
  const focusedRow = () =>
    page.evaluate(() => {
      const el = document.activeElement;
      return el === document.body ? null : [el.closest("[data-session-id]")?.dataset.sessionId ?? null, el.textContent];
    });
  // Tab from the search to the first row, then on to the second row's Open
  await page.keyboard.press("Tab");
  assert.deepEqual((await focusedRow())?.[0], SESSION.sessionId);
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  const before = await focusedRow();
  assert.equal(before?.[0], OTHER_SESSION.sessionId);
  // the host's list comes again (a session was stored meanwhile): the rows are drawn anew
  await toView(page, { type: "sessions", sessions: [{ ...LISTED[0], updatedAt: new Date().toISOString() }, ...LISTED.slice(1)] });
  await page.locator(".baton-session-row").first().getByText("just now").waitFor();
  assert.deepEqual(await focusedRow(), before, "focus stays on the same control of the same row");
  // and Enter still opens it
  await page.keyboard.press("Enter");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selectSession"), { type: "selectSession", sessionId: OTHER_SESSION.sessionId });

  // the Delete confirmation keeps its focus too
  await page.locator(".baton-session-button").click();
  await page.getByRole("button", { name: `Delete "${IMPORTED.title}"` }).click();
  const confirm = page.locator(".baton-session-confirm").getByRole("button", { name: "Cancel" });
  await confirm.focus();
  await toView(page, { type: "sessions", sessions: LISTED });
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Cancel");
});

test("the model menu is used with the arrow keys, as a menu is: Up, Down, Home, End, then Enter", async (t) => {
  const page = await openView(t, "dark");
  await showFixture(page);
  await page.locator(".baton-model-button").click();
  await toView(page, { type: "models", catalog: CATALOG });
  await page.getByRole("menuitemradio").first().waitFor();
  const on = () => page.evaluate(() => document.activeElement?.dataset.model ?? null);
  assert.equal(await on(), "claude-sonnet-4-5", "the current model has the focus");
  await page.keyboard.press("ArrowDown");
  assert.equal(await on(), "claude-haiku-4-5");
  await page.keyboard.press("ArrowDown");
  assert.equal(await on(), "claude-opus-5", "from the last, Down wraps to the first");
  await page.keyboard.press("ArrowUp");
  assert.equal(await on(), "claude-haiku-4-5");
  await page.keyboard.press("Home");
  assert.equal(await on(), "claude-opus-5");
  await page.keyboard.press("End");
  assert.equal(await on(), "claude-haiku-4-5");
  const from = (await posted(page)).length;
  await page.keyboard.press("Enter");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "setModel", from), { type: "setModel", model: "claude-haiku-4-5", sessionId: SESSION.sessionId });
});

test("a session chosen from the keyboard leaves the focus on the picker's button, not on the page's body", async (t) => {
  const page = await openView(t, "dark");
  await showFixture(page, { sessions: LISTED });
  await page.locator(".baton-session-button").focus();
  await page.keyboard.press("Enter");
  await page.getByRole("searchbox", { name: "Search sessions" }).waitFor();
  await page.keyboard.type("importer");
  await page.keyboard.press("Enter");
  await waitPosted(page, (m) => m.type === "selectSession");
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains("baton-session-button")), true);
  // New Chat from the picker too
  await page.keyboard.press("Enter");
  await page.locator(".baton-session-picker").getByRole("button", { name: "New Chat" }).focus();
  await page.keyboard.press("Enter");
  await waitPosted(page, (m) => m.type === "newChat");
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains("baton-session-button")), true);
});
