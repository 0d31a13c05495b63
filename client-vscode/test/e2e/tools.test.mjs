// End to end in a real VS Code (code-server, headless Chromium): the workspace tools with the
// fake Messages API scripted to answer with tool calls. "rename parse_date to parse_day in
// utils.py": the model reads the file, the edit is offered as a diff in the panel, Accept
// applies it in the editor, undo restores it; a second rename is rejected and the file stays
// as it was, and the model is told.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import { clientDir, frameWith, goToLine, openFile, pollUntil, resultsDir, startScriptedFake, startVsCode, steps, stopVsCode } from "./codeServer.mjs";

const WAIT = 30_000;
const PROBE = 10_000; // one probe of the editor; `until` asks again after a failed one
let fx;
let fake;
const run = steps(() => fx?.page);
const step = run.step;
let original;

async function shot(name) {
  await fx.page.screenshot({ path: join(resultsDir, `${name}.png`) });
}

/** Polls `probe` until it returns a value that is not undefined; bounded by `ms`. */
const until = (what, probe, ms = WAIT) => pollUntil(what, probe, ms);

/** The chat webview's frame, found by its input box. */
const chatFrame = () => frameWith(fx.page, "#baton-input", "the chat webview");

/** The text of utils.py's line `line` as the editor shows it (Go to Line first). Each
 * wait is short: a probe that loses the palette to a focus change fails and is asked again. */
async function editorLine(line) {
  await fx.page.locator(".tabs-container .tab", { hasText: "utils.py" }).first().click({ timeout: PROBE });
  await goToLine(fx.page, line, PROBE);
  const editor = fx.page.locator(".editor-instance .monaco-editor").first();
  const current = editor.locator(".view-overlays .current-line").first();
  await current.waitFor({ timeout: PROBE });
  // the line under the cursor: the view line at the current-line overlay's height
  return editor.evaluate((el) => {
    const overlay = el.querySelector(".view-overlays .current-line")?.parentElement;
    const top = overlay?.style.top;
    const row = [...el.querySelectorAll(".view-lines .view-line")].find((v) => v.style.top === top);
    return (row?.textContent ?? "").replace(/\u00a0/g, " ");
  });
}

async function send(frame, text) {
  const input = frame.locator("#baton-input");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
}

describe("Baton's workspace tools in VS Code (code-server)", { concurrency: false }, () => {
  before(async () => {
    fake = await startScriptedFake("fake_tools_api.py");
    fx = await startVsCode({
      env: { ANTHROPIC_BASE_URL: fake.baseUrl, ANTHROPIC_API_KEY: "sk-ant-fake-e2e-key" },
      // auto-save off, as in desktop VS Code (the web workbench saves after a delay, and its
      // save racing the undo left the disk on the accepted edit with the editor clean)
      settings: { "baton.model": "claude-sonnet-4-5", "files.autoSave": "off" },
    });
    original = readFileSync(join(fx.workspace, "utils.py"), "utf8");
  });

  after(async () => {
    if (fx) {
      if (run.failed) await shot("e2e-tools-failure").catch(() => {});
      await stopVsCode(fx, run.failed);
    }
    await fake?.stop().catch(() => []);
  });


  let line = 0; // parse_date's line in utils.py, 1-based

  step("the active file shows as a chip on a new chat", async () => {
    line = original.split("\n").findIndex((l) => l.startsWith("def parse_date(")) + 1;
    assert.ok(line > 0, "utils.py defines parse_date");
    await openFile(fx.page, "utils.py");
    await fx.page.locator('#workbench\\.parts\\.statusbar .statusbar-item[id$="baton.meter"]').click({ timeout: 60_000 });
    const frame = await chatFrame();
    await frame.getByRole("button", { name: "New Chat" }).click();
    await until("the new chat's empty feed", async () => ((await frame.locator("[data-message-id]").count()) === 0 ? true : undefined));
    await frame.locator(".baton-attach-chip", { hasText: "utils.py" }).first().waitFor({ timeout: WAIT });
    await shot("e2e-tools-1-chip");
  });

  step("asked to rename, the model reads the file and the edit is offered as a diff", async () => {
    const frame = await chatFrame();
    await send(frame, "rename parse_date to parse_day in utils.py");
    const card = frame.locator(".baton-permission.kind-edit");
    await card.waitFor({ timeout: 60_000 });
    assert.match(await card.locator(".baton-permission-head").innerText(), /utils\.py/);
    assert.match(await card.locator(".baton-diff-del").first().textContent(), /-def parse_date\(/);
    assert.match(await card.locator(".baton-diff-add").first().textContent(), /\+def parse_day\(/);
    assert.deepEqual((await card.locator(".baton-permission-actions button").allInnerTexts())[0], "Accept");
    // while the edit waits, the feed already shows the file attached to the prompt and the
    // read, done, as one line
    await frame.locator("article.kind-attachment details.baton-attachment", { hasText: "Attached file utils.py" }).first().waitFor({ timeout: WAIT });
    const read = frame.locator("details.baton-toolcall", { hasText: /Read utils\.py/ }).first();
    await read.waitFor({ timeout: WAIT });
    assert.equal(await read.getAttribute("data-status"), "done");
    assert.match(await read.locator("> summary").innerText(), /Read utils\.py\s*\(\d+ lines\)/);
    // the view holds the prompt: its pending copy is gone, it shows once
    await until("the pending prompt to go", async () => ((await frame.locator("article.baton-pending.role-user").count()) === 0 ? true : undefined));
    assert.equal(await frame.locator("article.role-user", { hasText: "rename parse_date to parse_day in utils.py" }).count(), 1);
    await shot("e2e-tools-2-edit-offered");
  });

  step("Accept applies the edit in the editor", async () => {
    const frame = await chatFrame();
    await frame.locator('.baton-permission button[data-outcome="allowOnce"]').click();
    const text = await until("the edit in the editor", async () => {
      const t = await editorLine(line);
      return t.startsWith("def parse_day(") ? t : undefined;
    }, 60_000);
    assert.match(text, /^def parse_day\(text: str\) -> date:/);
    await shot("e2e-tools-3-editor-changed");
  });

  step("the feed shows the read and the edit as lines, the edit opening on its diff", async () => {
    const frame = await chatFrame();
    await frame.getByText("Renamed parse_date to parse_day in utils.py.").first().waitFor({ timeout: 60_000 });
    const read = frame.locator("details.baton-toolcall", { hasText: /Read utils\.py/ }).first();
    const edit = frame.locator("details.baton-toolcall", { hasText: /Edit utils\.py/ }).first();
    await read.waitFor({ timeout: WAIT });
    assert.equal(await edit.getAttribute("data-status"), "done");
    await edit.locator("> summary").click();
    await edit.locator(".baton-diff").waitFor({ timeout: WAIT });
    await shot("e2e-tools-4-feed");
  });

  step("undo in the editor restores the file", async () => {
    const editor = fx.page.locator(".editor-instance .monaco-editor").first();
    await editor.locator(".view-lines").first().click();
    await fx.page.locator(".editor-instance .monaco-editor.focused").first().waitFor({ timeout: WAIT });
    await fx.page.keyboard.press("Control+Z");
    await until("the undo", async () => ((await editorLine(line)).startsWith("def parse_date(") ? true : undefined), 60_000);
    await shot("e2e-tools-5-undone");
  });

  step("a rejected edit leaves the file untouched", async () => {
    const frame = await chatFrame();
    await send(frame, "rename parse_date to parse_when in utils.py");
    const card = frame.locator(".baton-permission.kind-edit");
    await card.waitFor({ timeout: 60_000 });
    assert.match(await card.locator(".baton-diff-add").first().textContent(), /\+def parse_when\(/);
    await card.locator('button[data-outcome="deny"]').click();
    await frame.getByText("Understood: utils.py stays as it is.").first().waitFor({ timeout: 60_000 });
    assert.ok((await until("the editor's line", () => editorLine(line))).startsWith("def parse_date("), "the editor still has parse_date");
    assert.equal(readFileSync(join(fx.workspace, "utils.py"), "utf8"), original, "the file on disk is as it was");
    await shot("e2e-tools-6-rejected");
    const denied = frame.locator('details.baton-toolcall[data-status="denied"]');
    await denied.first().waitFor({ timeout: WAIT });
  });

  step("the model got the editor's file, the read's result, and was told the edit was denied", async () => {
    const all = await fake.stop();
    fake = undefined;
    // the requests that carry the new chat's prompt (one sent to another session fails below)
    const requests = all.filter((body) => JSON.stringify(body.messages).includes("rename parse_date to parse_day"));
    assert.ok(requests.length >= 5, `${requests.length} of ${all.length} Messages requests are the new chat's`);
    const [first, second] = requests;
    assert.ok(first.tools?.some((t) => t.name === "read_file"), "the workspace tools are offered");
    const resultFor = (body, id) =>
      body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === "tool_result" && b.tool_use_id === id);
    assert.match(JSON.stringify(resultFor(second, "toolu_read1")?.content ?? ""), /parse_date/, "the read's result holds the file");
    const last = requests.at(-1);
    const told = resultFor(last, "toolu_edit2");
    assert.ok(told, "the rejected edit was answered");
    assert.match(JSON.stringify(told.content ?? ""), /den|reject|refus/i);
    assert.match(JSON.stringify(first.messages), /def parse_date\(text: str\)/, "the active file went with the prompt");
    assert.doesNotMatch(JSON.stringify(first.messages), /Uncategorized/, "the prompt went to the new chat, not the imported session");
  });
});
