// What the panel says and keeps around a send: the prompt back in the box when it was not
// sent, banners that go once they are stale, brief notices, and the draft's weight.
import assert from "node:assert/strict";
import { test } from "node:test";
import { OTHER_SESSION, SESSION, sessionUpdate } from "./fixture.mjs";
import { openView, posted, showFixture, toView, useBrowser, waitPosted } from "./view.mjs";

useBrowser();

const savedDraft = (page) =>
  page.evaluate(() => JSON.parse(sessionStorage.getItem("vscode-webview-state") ?? "{}").draft);
const banner = (page) => page.locator(".baton-banner");

test("a prompt the host did not send comes back into the box, and the saved draft then keeps it", async (t) => {
  const page = await openView(t);
  await showFixture(page, { hasApiKey: false });
  const input = page.locator("#baton-input");
  await input.fill("my carefully written question");
  await input.press("Enter");
  await waitPosted(page, (m) => m.type === "send" && m.text === "my carefully written question");
  assert.equal(await input.inputValue(), "", "the box is free while the send runs");
  // kept until the outcome, with the session it went to: the saved draft is the box's text
  assert.equal(await savedDraft(page), "");
  assert.deepEqual(await page.evaluate(() => JSON.parse(sessionStorage.getItem("vscode-webview-state")).sent), {
    text: "my carefully written question",
    sessionId: SESSION.sessionId,
  });
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await toView(page, { type: "error", message: "No API key: replies need one.", scope: "apiKey" });
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  await toView(page, { type: "sendOutcome", stored: false, text: "my carefully written question", sessionId: SESSION.sessionId });
  await page.waitForFunction(() => document.querySelector("#baton-input").value !== "");
  assert.equal(await input.inputValue(), "my carefully written question");
  assert.equal(await savedDraft(page), "my carefully written question");

  // once the session holds it, the draft goes
  await input.press("Enter");
  await toView(page, { type: "sendOutcome", stored: true, text: "my carefully written question", sessionId: SESSION.sessionId });
  await page.waitForFunction(() => JSON.parse(sessionStorage.getItem("vscode-webview-state")).draft === "");
  assert.equal(await input.inputValue(), "");
});

test("banners go once stale: the server answered, a key was set, another session is shown", async (t) => {
  const page = await openView(t);
  await showFixture(page);

  await toView(page, { type: "error", message: "Baton's server is not running.", scope: "server" });
  await banner(page).waitFor();
  await toView(page, sessionUpdate()); // the server answered
  await banner(page).waitFor({ state: "hidden" });

  await toView(page, { type: "error", message: "No API key: replies need one.", scope: "apiKey" });
  await banner(page).waitFor();
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await banner(page).waitFor({ state: "hidden" });

  await toView(page, { type: "error", message: "No API key: replies need one.", scope: "apiKey" });
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [], hasApiKey: true }));
  await banner(page).waitFor({ state: "hidden" });

  // a failure of this session stays while it is on show, and goes with it
  await toView(page, { type: "error", message: "The conversation is past the limit.", scope: "session" });
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  assert.equal(await banner(page).isVisible(), true);
  await toView(page, sessionUpdate());
  await banner(page).waitFor({ state: "hidden" });
});

test("a banner or a notice dismissed from the keyboard hands the focus to the input box", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
  await toView(page, {
    type: "error",
    message: "Not sent: the conversation could not be compacted first (the summary request failed).",
    scope: "session",
  });
  await banner(page).getByRole("button", { name: "Dismiss" }).focus();
  await page.keyboard.press("Enter");
  await banner(page).waitFor({ state: "hidden" });
  assert.equal(await focused(), "baton-input", "not the page's body: the prompt can be sent again from there");

  await toView(page, { type: "notice", sessionId: SESSION.sessionId, message: "Auto-compaction failed: the summary request failed.", tone: "warning" });
  const notice = page.locator(".baton-notice");
  await notice.getByRole("button", { name: "Dismiss" }).focus();
  await page.keyboard.press("Space");
  await notice.waitFor({ state: "hidden" });
  assert.equal(await focused(), "baton-input");
  // one that goes by itself (it was about a compaction that stopped) while the keyboard is on it
  await toView(page, { type: "notice", sessionId: SESSION.sessionId, message: "Compacting…", tone: "warning", about: "compactFirst" });
  await notice.getByRole("button", { name: "Dismiss" }).focus();
  await toView(page, { type: "noticeEnd", sessionId: SESSION.sessionId, about: "compactFirst" });
  await notice.waitFor({ state: "hidden" });
  assert.equal(await focused(), "baton-input");
});

test("an auto-compaction's outcome shows briefly, for the session on show only", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const notice = page.locator(".baton-notice");
  await toView(page, { type: "notice", sessionId: OTHER_SESSION.sessionId, message: "elsewhere", tone: "info" });
  await toView(page, {
    type: "notice",
    sessionId: SESSION.sessionId,
    message: "Auto-compact failed (refused): the request goes out with 175,000 tokens in context.",
    tone: "warning",
  });
  await notice.waitFor();
  assert.match(await notice.textContent(), /Auto-compact failed \(refused\): the request goes out with 175,000/);
  assert.equal(await notice.getAttribute("data-tone"), "warning");
  assert.equal(await page.getByText("elsewhere").count(), 0);
  await notice.getByRole("button", { name: "Dismiss" }).click();
  await notice.waitFor({ state: "hidden" });
  await toView(page, { type: "notice", sessionId: SESSION.sessionId, message: "Auto-compacted: 175,000 -> 21,000 tokens.", tone: "info" });
  await notice.waitFor();
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await notice.waitFor({ state: "hidden" });
});

test("an edit's notice goes when what it took out is back; another notice stays", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const notice = page.locator(".baton-notice");
  const end = { type: "noticeEnd", sessionId: SESSION.sessionId, about: "rewind" };
  await toView(page, { type: "notice", sessionId: SESSION.sessionId, message: "Auto-compacted.", tone: "info" });
  await notice.waitFor();
  await toView(page, end);
  assert.equal(await notice.isVisible(), true, "a notice about something else stays");
  await toView(page, {
    type: "notice",
    sessionId: SESSION.sessionId,
    message: "2 messages left the view (kept in the transcript; Baton: Undo Compaction brings them back).",
    tone: "info",
    about: "rewind",
  });
  await page.getByText("2 messages left the view").waitFor();
  await toView(page, { ...end, sessionId: OTHER_SESSION.sessionId });
  assert.equal(await notice.isVisible(), true, "another session's end says nothing here");
  await toView(page, end);
  await notice.waitFor({ state: "hidden", timeout: 3_000 }); // now, not after its 8 s
});

test("the draft's weight once sent shows under the box, with the server's warning", async (t) => {
  const page = await openView(t);
  const from = await showFixture(page);
  const input = page.locator("#baton-input");
  await input.fill("a long paste");
  await waitPosted(page, (m) => m.type === "draft" && m.text === "a long paste", from);
  const line = page.locator(".baton-draft-usage");
  await toView(page, {
    type: "draftUsage",
    sessionId: SESSION.sessionId,
    draft: {
      text: "After sending: ~172K / 200K (86%)",
      verdict: "autoCompact",
      warning: "Sending this takes the context past the auto-compact point: Baton compacts the conversation first.",
    },
  });
  await line.waitFor();
  assert.match(await line.textContent(), /After sending: ~172K \/ 200K \(86%\)/);
  assert.match(await line.locator(".baton-draft-warning").textContent(), /Baton compacts the conversation first/);
  assert.equal(await line.getAttribute("data-verdict"), "autoCompact");
  // another session's figure is not this box's
  await toView(page, { type: "draftUsage", sessionId: OTHER_SESSION.sessionId, draft: null });
  assert.equal(await line.isVisible(), true);
  await input.press("Enter");
  await line.waitFor({ state: "hidden" });
  const sent = (await posted(page)).filter((m) => m.type === "send");
  assert.deepEqual(sent, [{ type: "send", text: "a long paste", sessionId: SESSION.sessionId }]);
});

test("a draft restored after a reload that opens on the welcome is weighed once a conversation opens", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  await page.locator("#baton-input").fill("a long paste");
  await page.waitForFunction(() => JSON.parse(sessionStorage.getItem("vscode-webview-state") ?? "{}").draft === "a long paste");
  await page.reload();
  await waitPosted(page, (m) => m.type === "ready");
  // the saved session is gone: the host's first update is the welcome, with no session
  await toView(page, { ...sessionUpdate({ messages: [] }), session: null, sessions: [] });
  await page.getByRole("button", { name: "New Chat" }).first().click();
  const from = (await posted(page)).length;
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  // the host (started again with the window) has no draft until the box's is posted
  assert.deepEqual(await waitPosted(page, (m) => m.type === "draft", from), { type: "draft", text: "a long paste" });
  await page.locator("#baton-input").waitFor();
  assert.equal(await page.locator("#baton-input").inputValue(), "a long paste");
});

test("the prompt being sent and its streamed reply stay with their session: another one opened meanwhile shows neither", async (t) => {
  const page = await openView(t);
  await toView(page, sessionUpdate({ messages: [] }));
  await page.locator("#baton-input").fill("summarize the parser");
  await page.locator("#baton-input").press("Enter");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await toView(page, { type: "delta", sessionId: SESSION.sessionId, messageId: "a_next", text: "The parser reads" });
  await page.locator('article.baton-pending[data-pending-id="a_next"]').waitFor();
  // the user opens another session while the reply streams
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await page.waitForFunction(() => document.querySelector(".baton-header")?.textContent?.includes("Fix the importer") ?? true);
  await page.waitForFunction(() => document.querySelectorAll("article.baton-pending").length === 0);
  assert.equal(await page.getByText("summarize the parser").count(), 0);
});

test("a Send while another session is being opened waits for it: the text stays, then goes to the one on show", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await page.locator(".baton-session-button").click();
  await page.getByRole("searchbox", { name: "Search sessions" }).fill("importer");
  await page.getByRole("searchbox", { name: "Search sessions" }).press("Enter");
  await waitPosted(page, (m) => m.type === "selectSession" && m.sessionId === OTHER_SESSION.sessionId);
  // the host has not shown it yet: Enter and Send keep the text in the box
  await input.fill("for the importer");
  await input.press("Enter");
  assert.equal(await page.locator(".baton-send").isDisabled(), true);
  assert.equal(await input.inputValue(), "for the importer");
  assert.equal((await posted(page)).filter((m) => m.type === "send").length, 0);
  // the session is on show: the prompt goes, naming it
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await page.waitForFunction(() => !document.querySelector(".baton-send").disabled);
  await input.press("Enter");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "send"), {
    type: "send",
    text: "for the importer",
    sessionId: OTHER_SESSION.sessionId,
  });
});

test("a session that could not be opened lets Send go again, to the session still on show", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  await page.locator(".baton-session-button").click();
  await page.locator(".baton-session-picker").getByRole("button", { name: "New Chat" }).click();
  await waitPosted(page, (m) => m.type === "newChat");
  assert.equal(await page.locator(".baton-send").isDisabled(), true);
  await toView(page, { type: "error", message: "Baton's server is not running.", scope: "server", opening: true });
  await page.waitForFunction(() => !document.querySelector(".baton-send").disabled);
  await page.locator("#baton-input").fill("still here");
  await page.locator("#baton-input").press("Enter");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "send"), { type: "send", text: "still here", sessionId: SESSION.sessionId });
});

test("another failure while a session is being opened (an Apply) leaves Send waiting for that session", async (t) => {
  const page = await openView(t);
  await showFixture(page);
  const input = page.locator("#baton-input");
  await page.locator(".baton-session-button").click();
  await page.getByRole("searchbox", { name: "Search sessions" }).fill("importer");
  await page.getByRole("searchbox", { name: "Search sessions" }).press("Enter");
  await waitPosted(page, (m) => m.type === "selectSession" && m.sessionId === OTHER_SESSION.sessionId);
  await toView(page, { type: "error", message: "Could not apply the code: no editor is open.", scope: "session" });
  await page.locator(".baton-banner").getByText("Could not apply the code").waitFor();
  await input.fill("for the importer");
  await input.press("Enter");
  assert.equal(await page.locator(".baton-send").isDisabled(), true);
  assert.equal(await input.inputValue(), "for the importer");
  assert.equal((await posted(page)).filter((m) => m.type === "send").length, 0, "nothing goes to the session being left");
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await page.waitForFunction(() => !document.querySelector(".baton-send").disabled);
  await input.press("Enter");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "send"), {
    type: "send",
    text: "for the importer",
    sessionId: OTHER_SESSION.sessionId,
  });
});
