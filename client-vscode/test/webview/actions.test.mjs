// A message's code blocks: Insert at Cursor and Apply to File (named when the block says
// which file) beside Copy, posted to the host; the header's Find opens the find box.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { SESSION, sessionUpdate } from "./fixture.mjs";
import { RESULTS, message, openView, posted, toView, useBrowser, waitPosted } from "./view.mjs";

useBrowser();

const text = (t) => ({ type: "text", text: t });
const MESSAGES = [
  { id: "q", role: "user", kind: "message", content: [text("Fix the parser, please.")], tokens: 12 },
  {
    id: "a",
    role: "assistant",
    kind: "message",
    content: [
      text(
        "Here it is:\n\n```python:src/parser.py\ndef parse(line):\n    return line.split(',')\n```\n\n" +
          "And a note:\n\n```\n// file: docs/notes.md\nRemember the header row.\n```\n\n" +
          "And a snippet:\n\n```js\nconsole.log(1);\n```\n",
      ),
    ],
    tokens: 80,
  },
];

async function show(t, theme = "dark") {
  const page = await openView(t, theme);
  await toView(page, sessionUpdate({ messages: MESSAGES, session: { ...SESSION, compactions: 0 } }));
  await message(page, "a").waitFor();
  return page;
}

test("a code block's Insert and Apply post its code, and Apply names the file the block names", async (t) => {
  const page = await show(t);
  const blocks = message(page, "a").locator("pre.baton-code");
  assert.equal(await blocks.count(), 3);
  const named = blocks.nth(0);
  assert.equal(await named.locator(".baton-apply").textContent(), "Apply to parser.py");
  assert.match(await named.locator(".baton-apply").getAttribute("title"), /src\/parser\.py/);
  assert.equal(await blocks.nth(1).locator(".baton-apply").textContent(), "Apply to notes.md");
  assert.equal(await blocks.nth(2).locator(".baton-apply").textContent(), "Apply");
  // The language is still the fence's (the file does not become the language).
  assert.equal(await named.getAttribute("data-lang"), "python");
  assert.ok((await named.locator(".hljs-keyword").count()) >= 1);

  let from = (await posted(page)).length;
  await named.hover();
  await named.locator(".baton-insert").click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "insertCode", from), {
    type: "insertCode",
    code: "def parse(line):\n    return line.split(',')\n",
  });
  from = (await posted(page)).length;
  await named.locator(".baton-apply").click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "applyCode", from), {
    type: "applyCode",
    code: "def parse(line):\n    return line.split(',')\n",
    file: "src/parser.py",
  });
  from = (await posted(page)).length;
  await blocks.nth(2).hover();
  await blocks.nth(2).locator(".baton-apply").click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "applyCode", from), { type: "applyCode", code: "console.log(1);\n" });
  // A click on a code action does not select the message.
  const selections = (await posted(page)).filter((m) => m.type === "selection");
  assert.deepEqual(selections.at(-1).messageIds, []);
});

test("the header's Find opens the find box", async (t) => {
  const page = await show(t);
  assert.equal(await page.locator(".baton-find").isHidden(), true);
  await page.locator(".baton-find-open").click();
  await page.locator(".baton-find-input").fill("header row");
  assert.equal(await page.locator(".baton-find-count").textContent(), "1 of 1 messages");
});

test("while a send runs no prompt offers Edit or Retry; a last prompt with no reply offers Retry", async (t) => {
  const page = await showTurns(t);
  await toView(page, { type: "busy", busy: true, sessionId: SESSION.sessionId });
  await page.waitForFunction(() => document.querySelectorAll(".baton-edit, .baton-retry").length === 0);
  await toView(page, { type: "busy", busy: false, sessionId: SESSION.sessionId });
  // the reply to the last prompt failed: the view ends with it
  await toView(page, sessionUpdate({ messages: TURNS.slice(0, 3), session: { ...SESSION, compactions: 0 } }));
  await message(page, "r2").waitFor({ state: "detached" });
  assert.equal(await page.locator(".baton-edit").count(), 2);
  const from = (await posted(page)).length;
  await message(page, "u2").hover();
  await message(page, "u2").locator(".baton-retry").click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "retry", from), { type: "retry", sessionId: "s_demo" });
});

for (const theme of ["dark", "light", "hc"]) {
  test(`code actions in the ${theme} theme`, async (t) => {
    const page = await show(t, theme);
    const block = message(page, "a").locator("pre.baton-code").first();
    await block.hover();
    const actions = block.locator(".baton-code-actions");
    assert.equal(await actions.evaluate((el) => getComputedStyle(el).opacity), "1", "shown on hover");
    const box = await actions.boundingBox();
    const pre = await block.boundingBox();
    assert.ok(box.x + box.width <= pre.x + pre.width + 1, "the actions stay inside the block");
    await page.screenshot({ path: join(RESULTS, `webview-code-actions-${theme}.png`) });
  });
}

const TURNS = [
  { id: "u1", role: "user", kind: "message", content: [text("What is 2 + 2?")], tokens: 10 },
  { id: "r1", role: "assistant", kind: "message", content: [text("5")], tokens: 5 },
  { id: "u2", role: "user", kind: "message", content: [text("Are you sure?")], tokens: 10 },
  { id: "r2", role: "assistant", kind: "message", content: [text("It is 4.")], tokens: 5 },
];

async function showTurns(t, theme = "dark", session = { ...SESSION, compactions: 0 }) {
  const page = await openView(t, theme);
  await toView(page, sessionUpdate({ messages: TURNS, session }));
  await message(page, "r2").waitFor();
  return page;
}

test("Edit turns a past prompt into an input box; Send posts the edit, Cancel puts it back", async (t) => {
  const page = await showTurns(t);
  // Edit on prompts only; Retry on the last reply only.
  assert.equal(await page.locator(".baton-edit").count(), 2);
  assert.equal(await message(page, "r1").locator(".baton-retry").count(), 0);
  assert.equal(await message(page, "r2").locator(".baton-retry").count(), 1);

  await message(page, "u1").hover();
  await message(page, "u1").locator(".baton-edit").click();
  const input = message(page, "u1").locator(".baton-edit-input");
  assert.equal(await input.inputValue(), "What is 2 + 2?");
  assert.equal(await input.evaluate((el) => el === document.activeElement), true);
  // The arrow keys move the caret in the box, not the focus to another message.
  await input.press("ArrowDown");
  assert.equal(await input.evaluate((el) => el === document.activeElement), true);
  await input.press("Escape");
  assert.equal(await message(page, "u1").locator(".baton-edit-input").count(), 0);
  assert.equal(await message(page, "u1").locator(".baton-message-body").isVisible(), true);

  await message(page, "u1").locator(".baton-edit").click();
  await input.fill("What is 3 + 3?");
  const from = (await posted(page)).length;
  await message(page, "u1").locator(".baton-edit-send").click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "edit", from), {
    type: "edit",
    messageId: "u1",
    text: "What is 3 + 3?",
    sessionId: "s_demo",
  });
  // A click on an action never selects the message.
  const selections = (await posted(page)).filter((m) => m.type === "selection");
  assert.deepEqual(selections.at(-1).messageIds, []);
});

test("Retry posts retry; Copy copies the message's text; a read-only view offers neither edit nor retry", async (t) => {
  const page = await showTurns(t);
  const from = (await posted(page)).length;
  await message(page, "r2").hover();
  await message(page, "r2").locator(".baton-retry").click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "retry", from), { type: "retry", sessionId: "s_demo" });
  await message(page, "u2").hover();
  await message(page, "u2").locator(".baton-copy-message").click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), "Are you sure?");

  const readOnly = await showTurns(t, "dark", { ...SESSION, compactions: 0, readOnly: true });
  assert.equal(await readOnly.locator(".baton-edit, .baton-retry").count(), 0);
  assert.equal(await readOnly.locator(".baton-copy-message").count(), 4);
});

for (const theme of ["dark", "light", "hc"]) {
  test(`message actions and the edit box in the ${theme} theme`, async (t) => {
    const page = await showTurns(t, theme);
    await message(page, "u2").hover();
    await message(page, "u2").locator(".baton-edit").click();
    await message(page, "r2").hover();
    const box = message(page, "u2").locator(".baton-edit-input");
    const style = await box.evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.notEqual(style, "rgba(0, 0, 0, 0)", "the edit box takes the input's background");
    await page.screenshot({ path: join(RESULTS, `webview-message-actions-${theme}.png`) });
  });
}

test("an Edit put away with Escape or Cancel gives the focus back to its Edit button", async (t) => {
  const page = await showTurns(t);
  const onEdit = () => page.evaluate(() => document.activeElement?.classList.contains("baton-edit") && document.activeElement.closest("article")?.dataset.messageId);
  await message(page, "u2").hover();
  await message(page, "u2").locator(".baton-edit").focus();
  await page.keyboard.press("Enter");
  const input = message(page, "u2").locator(".baton-edit-input");
  await input.waitFor();
  await page.keyboard.press("Escape");
  assert.equal(await input.count(), 0);
  assert.equal(await onEdit(), "u2");
  // and Enter opens it again; Cancel from the keyboard puts it away the same way
  await page.keyboard.press("Enter");
  await input.waitFor();
  await message(page, "u2").locator(".baton-edit-cancel").focus();
  await page.keyboard.press("Enter");
  assert.equal(await input.count(), 0);
  assert.equal(await onEdit(), "u2");
});
