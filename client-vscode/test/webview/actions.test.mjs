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
