// The workspace tools in the panel: attachment chips and the `@` picker, dropped and pasted
// files, the permission card with its diff, and tool calls as one line each (expandable to
// input, result and diff), in the dark, light and high-contrast themes.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { OTHER_SESSION, SESSION, sessionUpdate } from "./fixture.mjs";
import { message, openView, posted, RESULTS, toView, useBrowser, waitPosted } from "./view.mjs";

useBrowser();

const DIFF = [
  "--- a/utils.py",
  "+++ b/utils.py",
  "@@ -1,6 +1,9 @@",
  "-def parse_date(text):",
  "+def parse_day(text):",
  '     """Parse an ISO date."""',
  "+    text = text.strip()",
  "+    if not text:",
  "+        raise ValueError(text)",
  "     return date.fromisoformat(text)",
  "",
].join("\n");

const RESULT_LINES = Array.from({ length: 80 }, (_, i) => `${String(i + 1).padStart(4)}\tline ${i + 1} of app.py`).join("\n");

const TOOL_MESSAGES = [
  {
    id: "t_user",
    role: "user",
    kind: "message",
    content: [{ type: "text", text: "rename parse_date to parse_day in utils.py" }],
    createdAt: "2026-12-01T10:00:00Z",
    tokens: 12,
    pinned: false,
  },
  {
    id: "t_asst",
    role: "assistant",
    kind: "message",
    content: [
      { type: "text", text: "Let me look first." },
      { type: "tool_use", id: "tu_read", name: "read_file", input: { path: "app.py", startLine: 1, endLine: 80 } },
      { type: "tool_use", id: "tu_search", name: "search_text", input: { pattern: "parse_date" } },
      { type: "tool_use", id: "tu_edit", name: "str_replace_based_edit_tool", input: { command: "str_replace", path: "utils.py", old_str: "def parse_date", new_str: "def parse_day" } },
      { type: "tool_use", id: "tu_denied", name: "str_replace_based_edit_tool", input: { command: "create", path: "notes.txt" } },
    ],
    createdAt: "2026-12-01T10:00:05Z",
    tokens: 240,
    pinned: false,
    toolCalls: [
      { toolUseId: "tu_read", tool: "read_file", title: "Read app.py:1-80", status: "done", summary: "80 lines", path: "/ws/app.py" },
      { toolUseId: "tu_search", tool: "search_text", title: "Search `parse_date`", status: "done", summary: "12 hits" },
      { toolUseId: "tu_edit", tool: "str_replace_based_edit_tool", title: "Edit utils.py (+4 -1)", status: "done", summary: "applied", path: "/ws/utils.py", diff: DIFF },
      { toolUseId: "tu_denied", tool: "str_replace_based_edit_tool", title: "Create notes.txt", status: "denied" },
    ],
  },
  {
    id: "t_results",
    role: "user",
    kind: "message",
    content: [
      { type: "tool_result", tool_use_id: "tu_read", content: RESULT_LINES },
      { type: "tool_result", tool_use_id: "tu_search", content: "utils.py:1: def parse_date(text):\napp.py:3: from utils import parse_date" },
      { type: "tool_result", tool_use_id: "tu_edit", content: "Applied the edit to utils.py." },
      { type: "tool_result", tool_use_id: "tu_denied", content: "The user denied this tool call.", is_error: true },
    ],
    createdAt: "2026-12-01T10:00:06Z",
    tokens: 900,
    pinned: false,
  },
];

const EDIT_REQUEST = {
  sessionId: SESSION.sessionId,
  toolUseId: "tu_ask",
  tool: "str_replace_based_edit_tool",
  input: { command: "str_replace", path: "utils.py", old_str: "def parse_date", new_str: "def parse_day" },
  title: "Edit utils.py (+4 -1)",
  kind: "edit",
  path: "/ws/utils.py",
  diff: DIFF,
  options: [
    { id: "allowOnce", label: "Allow once" },
    { id: "allowSession", label: "Allow for this session" },
    { id: "deny", label: "Deny" },
  ],
};

const CHIPS = [
  { id: "active:/ws/utils.py", kind: "file", label: "utils.py", detail: "utils.py, the active file", path: "/ws/utils.py", auto: true },
  { id: "selection:/ws/utils.py:3-5", kind: "selection", label: "utils.py:3-5", detail: "the selection in utils.py, lines 3-5", path: "/ws/utils.py", range: { startLine: 3, endLine: 5 }, auto: true },
  { id: "picked:/ws/README.md", kind: "file", label: "README.md", detail: "README.md", path: "/ws/README.md", auto: false },
];

async function showTools(page) {
  await toView(page, sessionUpdate({ messages: TOOL_MESSAGES }));
  await page.locator('article[data-message-id="t_results"]').waitFor();
}

const lineText = (page, id) => page.locator(`details.baton-toolcall[data-tool-use-id="${id}"] > summary`).innerText();

test("tool calls read as one line each with the server's title, summary and status", async (t) => {
  const page = await openView(t);
  await showTools(page);
  assert.equal(await page.locator("details.baton-toolcall").count(), 4);
  assert.match(await lineText(page, "tu_read"), /✓\s*Read app\.py:1-80\s*\(80 lines\)/);
  assert.match(await lineText(page, "tu_search"), /Search parse_date\s*\(12 hits\)/);
  assert.equal(await page.locator('details[data-tool-use-id="tu_search"] .baton-toolcall-title code').innerText(), "parse_date");
  assert.match(await lineText(page, "tu_edit"), /Edit utils\.py \(\+4 -1\)\s*\(applied\)/);
  assert.match(await lineText(page, "tu_denied"), /⊘\s*Create notes\.txt\s*denied/);
  assert.equal(await page.locator('details[data-tool-use-id="tu_denied"]').getAttribute("data-status"), "denied");
  // the old "Tool call <name>" rows are gone for calls the server describes
  assert.equal(await page.locator("details.baton-tool-use").count(), 0);
  // the results name the call they answer
  assert.match(await page.locator('article[data-message-id="t_results"] details.baton-tool-result > summary').first().innerText(), /Tool result\s*Read app\.py:1-80/);
});

test("a tool line opens on its input and result; a long result is folded; an edit shows its diff", async (t) => {
  const page = await openView(t, "dark", { width: 420, height: 1400 });
  await showTools(page);
  const read = page.locator('details[data-tool-use-id="tu_read"]');
  await read.locator("> summary").click();
  assert.match(await read.locator(".baton-toolcall-input").innerText(), /"startLine": 1/);
  const result = read.locator(".baton-toolcall-result");
  assert.match(await result.innerText(), /line 20 of app\.py/);
  assert.doesNotMatch(await result.innerText(), /line 21 of app\.py/, "folded after 20 lines");
  await result.locator("details.baton-toolcall-more > summary").click();
  // the opened fold is drawn on the next frame: wait for its last line rather than read at once
  await result.getByText("line 80 of app.py").waitFor({ timeout: 10_000 });
  assert.match(await result.innerText(), /line 80 of app\.py/);

  const edit = page.locator('details[data-tool-use-id="tu_edit"]');
  await edit.locator("> summary").click();
  const diff = edit.locator("pre.baton-diff");
  await diff.waitFor();
  assert.equal(await diff.locator(".baton-diff-add").count(), 4);
  assert.equal(await diff.locator(".baton-diff-del").count(), 1);
  assert.equal(await diff.getAttribute("aria-label"), "Edit utils.py (+4 -1): 4 lines added, 1 removed");
  assert.match(await diff.locator(".baton-diff-del").textContent(), /^removed: -def parse_date/);
  assert.match(await edit.locator(".baton-toolcall-result").innerText(), /Applied the edit/);

  // a result that arrives later draws the line again
  const pending = structuredClone(TOOL_MESSAGES.slice(0, 2));
  pending[1].toolCalls[0].status = "running";
  await toView(page, sessionUpdate({ messages: pending }));
  await page.locator('details[data-tool-use-id="tu_read"][data-status="running"]').waitFor();
  assert.match(await lineText(page, "tu_read"), /running/);
  await page.screenshot({ path: join(RESULTS, "tools-calls-dark.png"), fullPage: true });
});

test("the permission card shows the edit as a diff and answers with the option chosen", async (t) => {
  const page = await openView(t);
  await showTools(page);
  await toView(page, { type: "permission", request: EDIT_REQUEST });
  const card = page.locator('.baton-permission[data-tool-use-id="tu_ask"]');
  await card.waitFor();
  assert.match(await card.locator(".baton-permission-head").innerText(), /Apply this edit\?\s*Edit utils\.py \(\+4 -1\)/);
  assert.equal(await card.locator(".baton-permission-path").innerText(), "/ws/utils.py");
  assert.equal(await card.locator(".baton-diff-add").count(), 4);
  assert.deepEqual(await card.locator(".baton-permission-actions button").allInnerTexts(), ["Accept", "Allow for this session", "Reject"]);
  assert.equal(await card.getAttribute("role"), "alertdialog");
  const before = (await posted(page)).length;
  await card.locator('button[data-outcome="allowOnce"]').click();
  const answer = await waitPosted(page, (m) => m.type === "permissionAnswer", before);
  assert.deepEqual(answer, { type: "permissionAnswer", toolUseId: "tu_ask", outcome: "allowOnce" });
  await card.waitFor({ state: "detached" });
  assert.equal(await page.locator(".baton-permissions").isHidden(), true);

  // a read asks with its input and the server's labels; a withdrawn request takes its card away
  await toView(page, { type: "permission", request: { ...EDIT_REQUEST, toolUseId: "tu_read2", kind: "read", title: "Read secrets.txt", diff: undefined, input: { path: "secrets.txt" } } });
  const readCard = page.locator('.baton-permission[data-tool-use-id="tu_read2"]');
  assert.match(await readCard.locator(".baton-permission-input").innerText(), /"path": "secrets.txt"/);
  assert.deepEqual(await readCard.locator(".baton-permission-actions button").allInnerTexts(), ["Allow once", "Allow for this session", "Deny"]);
  await toView(page, { type: "permissionDone", toolUseId: "tu_read2" });
  await readCard.waitFor({ state: "detached" });
});

test("a permission card asked by a conversation not on show names it, until that conversation is on show", async (t) => {
  const page = await openView(t);
  await showTools(page);
  // the user opens another conversation while the first one's reply runs its tools
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await toView(page, { type: "permission", request: EDIT_REQUEST });
  const card = page.locator('.baton-permission[data-tool-use-id="tu_ask"]');
  await card.waitFor();
  const from = card.locator(".baton-permission-session");
  assert.equal(await from.isVisible(), true, "not this conversation's edit");
  assert.equal(await from.innerText(), "Asked in “Refactor the token meter”");
  // back on the conversation that asked: its own card, as any other
  await toView(page, sessionUpdate({ messages: TOOL_MESSAGES }));
  await from.waitFor({ state: "hidden" });
  // and away again: named again
  await toView(page, sessionUpdate({ session: OTHER_SESSION, messages: [] }));
  await from.waitFor({ state: "visible" });
});

test("an edit waiting for permission shows the request's numbered diff in its line, not the server's unnumbered one", async (t) => {
  const page = await openView(t);
  // a str_replace not yet run: the server does not know its line, so its hunk is unnumbered
  const waiting = structuredClone(TOOL_MESSAGES.slice(0, 1));
  waiting.push({
    id: "t_ask",
    role: "assistant",
    kind: "message",
    content: [{ type: "tool_use", id: "tu_ask", name: "str_replace_based_edit_tool", input: EDIT_REQUEST.input }],
    createdAt: "2026-12-01T10:00:05Z",
    tokens: 40,
    pinned: false,
    toolCalls: [
      {
        toolUseId: "tu_ask",
        tool: "str_replace_based_edit_tool",
        title: "Edit utils.py (+1 -1)",
        status: "running",
        path: "utils.py",
        diff: "--- a/utils.py\n+++ b/utils.py\n@@ @@\n-def parse_date\n+def parse_day\n",
      },
    ],
  });
  await toView(page, sessionUpdate({ messages: waiting }));
  await page.locator('details[data-tool-use-id="tu_ask"]').waitFor();
  await toView(page, { type: "permission", request: EDIT_REQUEST });
  await page.locator('.baton-permission[data-tool-use-id="tu_ask"]').waitFor();
  const hunk = () => page.locator('details[data-tool-use-id="tu_ask"] pre.baton-diff .baton-diff-hunk').allInnerTexts();
  await page.locator('details[data-tool-use-id="tu_ask"] > summary').click();
  await page.locator('details[data-tool-use-id="tu_ask"] pre.baton-diff').waitFor();
  assert.deepEqual(await hunk(), ["@@ -1,6 +1,9 @@"]);
  // answered, the call runs on: still the numbered diff until its result comes
  await page.locator('.baton-permission[data-tool-use-id="tu_ask"] button[data-outcome="allowOnce"]').click();
  await toView(page, { type: "permissionDone", toolUseId: "tu_ask" });
  const redrawn = structuredClone(waiting);
  redrawn[1].tokens = 41; // a changed message: its line is drawn anew
  await toView(page, sessionUpdate({ messages: redrawn }));
  await page.locator('details[data-tool-use-id="tu_ask"]:not([open])').waitFor();
  await page.locator('details[data-tool-use-id="tu_ask"] > summary').click();
  await page.locator('details[data-tool-use-id="tu_ask"][open] pre.baton-diff').waitFor();
  assert.deepEqual(await hunk(), ["@@ -1,6 +1,9 @@"]);
});

test("chips show what the next send attaches, and each can be removed", async (t) => {
  const page = await openView(t);
  await showTools(page);
  await toView(page, { type: "chips", chips: CHIPS });
  const chips = page.locator(".baton-chips .baton-attach-chip");
  await chips.first().waitFor();
  assert.deepEqual(await chips.locator(".baton-attach-label").allInnerTexts(), ["utils.py", "utils.py:3-5", "README.md"]);
  assert.equal(await chips.nth(1).getAttribute("title"), "the selection in utils.py, lines 3-5");
  const before = (await posted(page)).length;
  await page.locator('button[aria-label="Remove README.md"]').click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "removeChip", before), { type: "removeChip", id: "picked:/ws/README.md" });
  await toView(page, { type: "chips", chips: [] });
  await page.locator(".baton-chips").waitFor({ state: "hidden" });
});

test("@ opens the picker of files the host finds; Enter attaches the one chosen without sending", async (t) => {
  const page = await openView(t);
  await showTools(page);
  const input = page.locator("#baton-input");
  await input.click();
  await input.pressSequentially("look at @ut");
  const query = await waitPosted(page, (m) => m.type === "findFiles" && m.query === "ut");
  assert.equal(query.query, "ut");
  await toView(page, {
    type: "fileResults",
    query: "ut",
    items: [
      { path: "/ws/utils.py", name: "utils.py", open: true },
      { path: "/ws/lib/util_test.py", name: "lib/util_test.py", open: false },
    ],
  });
  const rows = page.locator(".baton-file-picker .baton-file-picker-row");
  await rows.first().waitFor();
  assert.equal(await rows.count(), 2);
  assert.equal(await rows.first().getAttribute("aria-selected"), "true");
  await page.screenshot({ path: join(RESULTS, "tools-picker-dark.png") });
  await input.press("ArrowDown");
  assert.equal(await rows.nth(1).getAttribute("aria-selected"), "true");
  const before = (await posted(page)).length;
  await input.press("Enter");
  assert.deepEqual(await waitPosted(page, (m) => m.type === "attachFile", before), { type: "attachFile", path: "/ws/lib/util_test.py" });
  assert.equal(await input.inputValue(), "look at ");
  assert.equal(await page.locator(".baton-file-picker").isHidden(), true);
  assert.equal((await posted(page)).some((m) => m.type === "send"), false, "Enter chose a file, it did not send");
  // results for a query the box has moved past are dropped; Escape closes the picker
  await input.pressSequentially("@x");
  await toView(page, { type: "fileResults", query: "ut", items: [{ path: "/ws/utils.py", name: "utils.py", open: true }] });
  assert.equal(await rows.count(), 0);
  await input.press("Escape");
  assert.equal(await page.locator(".baton-file-picker").isHidden(), true);
  // an e-mail address is no mention
  await input.fill("");
  await input.pressSequentially("mail me@home");
  await page.waitForTimeout(200);
  assert.equal((await posted(page)).filter((m) => m.type === "findFiles" && m.query === "home").length, 0);
});

test("a file dropped on the panel or pasted into the box attaches", async (t) => {
  const page = await openView(t);
  await showTools(page);
  const before = (await posted(page)).length;
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData("text/uri-list", "# dragged\r\nfile:///ws/app.py\r\nfile:///ws/utils.py");
    const target = document.querySelector(".baton-feed");
    target.dispatchEvent(new DragEvent("dragover", { dataTransfer: data, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
  });
  assert.deepEqual(await waitPosted(page, (m) => m.type === "attachUris", before), { type: "attachUris", uris: ["file:///ws/app.py", "file:///ws/utils.py"] });
  const next = (await posted(page)).length;
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData("text/plain", "file:///ws/README.md");
    document.querySelector("#baton-input").dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  });
  assert.deepEqual(await waitPosted(page, (m) => m.type === "attachUris", next), { type: "attachUris", uris: ["file:///ws/README.md"] });
  assert.equal(await page.locator("#baton-input").inputValue(), "", "the pasted URI did not land in the box");
});

test("a file attached to a prompt after a compaction is named as attached, not as the summary's restored file", async (t) => {
  const page = await openView(t);
  const text = (said) => [{ type: "text", text: said }];
  const base = { role: "user", createdAt: "2026-12-01T09:00:00Z", tokens: 10, pinned: false };
  const messages = [
    { ...base, id: "s1", kind: "summary", boundaryId: "bnd_1", content: text("The summary") },
    { ...base, id: "r1", kind: "attachment", boundaryId: "bnd_1", attachment: { path: "/ws/app.py", label: "Restored file" }, content: text("Restored file: /ws/app.py\nx") },
    { ...base, id: "at", kind: "attachment", attachment: { path: "/ws/utils.py", label: "Attached file", kind: "file" }, content: text("Attached file: /ws/utils.py\ny") },
    { ...base, id: "sel", kind: "attachment", attachment: { path: "/ws/utils.py", label: "Selection", kind: "selection", range: { startLine: 3, endLine: 5 } }, content: text("Selection: /ws/utils.py\nz") },
    { ...base, id: "u1", kind: "message", content: text("rename parse_date to parse_day in utils.py") },
  ];
  await toView(page, sessionUpdate({ messages }));
  await message(page, "u1").waitFor();
  assert.deepEqual(await message(page, "s1").locator(".baton-restored li").allTextContents(), ["app.py"]);
  assert.equal(await message(page, "at").locator("details.baton-attachment > summary").textContent(), "Attached file utils.py /ws");
  // the article is labelled by its (hidden) header, whose role names what it is
  const role = (id) => message(page, id).locator(".baton-role").textContent();
  assert.deepEqual([await role("r1"), await role("at"), await role("sel")], ["Restored", "Attached file", "Selection"]);
});

test("mid-turn, a view holding the prompt and a tool round drops the pending prompt; the streamed reply stays", async (t) => {
  const page = await openView(t);
  await toView(page, sessionUpdate({ messages: [] }));
  await page.locator("#baton-input").fill("rename parse_date to parse_day in utils.py");
  await page.locator("#baton-input").press("Enter");
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await toView(page, { type: "delta", sessionId: SESSION.sessionId, messageId: "t_next", text: "Now the edit." });
  await page.locator('article.baton-pending[data-pending-id="t_next"]').waitFor();
  // the server stored the prompt, the read and its result; the send goes on
  await toView(page, sessionUpdate({ messages: TOOL_MESSAGES }));
  await page.locator('article[data-message-id="t_results"]').waitFor();
  await page.waitForFunction(() => !document.querySelector("article.baton-pending.role-user"));
  assert.equal(await page.getByText("rename parse_date to parse_day in utils.py").count(), 1, "the prompt shows once");
  assert.equal(await page.locator('article.baton-pending[data-pending-id="t_next"]').count(), 1, "the reply still streaming stays");
});

const THEMES = [
  // [theme, inserted-line background, removed-line background]
  ["dark", "rgba(155, 185, 85, 0.2)", "rgba(255, 0, 0, 0.2)"],
  ["light", "rgba(155, 185, 85, 0.2)", "rgba(255, 0, 0, 0.2)"],
];
for (const [theme, added, removed] of THEMES) {
  test(`${theme}: the diff's lines take the theme's diff colours`, async (t) => {
    const page = await openView(t, theme, { width: 420, height: 1100 });
    await showTools(page);
    await toView(page, { type: "chips", chips: CHIPS });
    await toView(page, { type: "permission", request: EDIT_REQUEST });
    const card = page.locator(".baton-permission");
    await card.waitFor();
    const bg = (sel) => card.locator(sel).first().evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.equal(await bg(".baton-diff-add"), added);
    assert.equal(await bg(".baton-diff-del"), removed);
    await page.locator('details[data-tool-use-id="tu_edit"] > summary').click();
    await page.screenshot({ path: join(RESULTS, `tools-${theme}.png`) });
  });
}

test("high contrast: added and removed lines are told apart by their borders", async (t) => {
  const page = await openView(t, "hc", { width: 420, height: 1100 });
  await showTools(page);
  await toView(page, { type: "chips", chips: CHIPS });
  await toView(page, { type: "permission", request: EDIT_REQUEST });
  const card = page.locator(".baton-permission");
  await card.waitFor();
  const border = (sel) => card.locator(sel).first().evaluate((el) => [getComputedStyle(el).borderLeftColor, getComputedStyle(el).outlineStyle]);
  assert.deepEqual(await border(".baton-diff-add"), ["rgb(51, 255, 46)", "dashed"]);
  assert.deepEqual(await border(".baton-diff-del"), ["rgb(255, 0, 143)", "dotted"]);
  await page.locator('details[data-tool-use-id="tu_edit"] > summary').click();
  await page.screenshot({ path: join(RESULTS, "tools-high-contrast.png") });
});

test("a permission answered from the keyboard hands the focus on: to the next card, then back to the input box", async (t) => {
  const page = await openView(t);
  await showTools(page);
  const focus = () => page.evaluate(() => [document.activeElement?.tagName, document.activeElement?.id || document.activeElement?.className]);
  await page.locator("#baton-input").click();
  await page.locator("#baton-input").fill("a draft of the next question");
  await page.locator(".baton-feed").focus(); // the user left the box: the card takes the focus
  await toView(page, { type: "permission", request: EDIT_REQUEST });
  const read = { ...EDIT_REQUEST, toolUseId: "tu_read2", kind: "read", title: "Read secrets.txt", diff: undefined, input: { path: "secrets.txt" } };
  await toView(page, { type: "permission", request: read });
  await page.locator('.baton-permission[data-tool-use-id="tu_read2"]').waitFor();
  assert.deepEqual(await focus(), ["BUTTON", "baton-permission-allowOnce"]);
  await page.keyboard.press("Enter");
  await waitPosted(page, (m) => m.type === "permissionAnswer" && m.toolUseId === "tu_ask");
  // the next card's first option
  assert.equal(await page.evaluate(() => document.activeElement?.closest(".baton-permission")?.dataset.toolUseId), "tu_read2");
  await page.keyboard.press("Enter");
  await waitPosted(page, (m) => m.type === "permissionAnswer" && m.toolUseId === "tu_read2");
  // none left: back in the input box, the draft there as it was
  assert.deepEqual(await focus(), ["TEXTAREA", "baton-input"]);
  assert.equal(await page.locator("#baton-input").inputValue(), "a draft of the next question");
});
