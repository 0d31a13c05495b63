// End to end in a real VS Code (code-server, headless Chromium): the chat panel's message
// actions and its size. A generated 1M-token session (about 3,700 messages) opens in the
// panel drawn a window at a time, scrolls from its last message to its first, and its find
// box reaches a message not drawn; then, in a new chat against the fake Messages API
// (fake_panel_api.py): a past prompt edited and sent again (the turns after it leave the
// view, stay in the transcript, and Undo Compaction brings them back), Retry on the last
// reply, Insert at Cursor from the new reply's code block into the open editor; and the
// walkthrough.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import { clientDir, frameWith, openFile, palette, pollUntil, resultsDir, startScriptedFake, startVsCode, steps, stopVsCode } from "./codeServer.mjs";

const WAIT = 30_000;
const MAX_ELEMENTS = 3000; // the bound on the panel's DOM, whatever the session's size
const CODE = "print(3 + 3)  # six";
let fx;
let fake;
const run = steps(() => fx?.page);
const step = run.step;

const until = (what, probe, ms = WAIT) => pollUntil(what, probe, ms);

async function shot(name) {
  await fx.page.screenshot({ path: join(resultsDir, `${name}.png`) });
}

/** The chat webview's frame, found by its input box. */
const chatFrame = () => frameWith(fx.page, "#baton-input", "the chat webview");

/** The drawn messages, in order: role and the text of the body (a short chat draws all). */
function feed(frame) {
  return frame.locator("article[data-message-id]").evaluateAll((els) =>
    els.map((el) => ({
      id: el.dataset.messageId,
      role: el.classList.contains("role-user") ? "user" : "assistant",
      text: (el.querySelector(".baton-message-body")?.textContent ?? "").replace(/\s+/g, " ").trim(),
    })),
  );
}

/** Waits until the feed's texts are `texts`, in order; returns the feed. */
function feedIs(frame, texts, what) {
  let last;
  return until(`${what}: the feed to read ${JSON.stringify(texts)} (last ${JSON.stringify(last)})`, async () => {
    const now = await feed(frame);
    last = now.map((m) => m.text);
    return JSON.stringify(last) === JSON.stringify(texts) ? now : undefined;
  }, 60_000);
}

async function send(frame, text) {
  const input = frame.locator("#baton-input");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
}

/** The transcript (the session's .jsonl in the data dir) that holds `text`. */
function transcriptWith(text) {
  const dir = join(fx.dataDir, "sessions");
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl"))) {
    const body = readFileSync(join(dir, name), "utf8");
    if (body.includes(text)) return body;
  }
  throw new Error(`no transcript in ${dir} holds ${JSON.stringify(text)}`);
}

/** The panel's element count, the drawn messages and the view's size (aria-setsize). */
const counts = (frame) =>
  frame.evaluate(() => ({
    elements: document.getElementsByTagName("*").length,
    drawn: document.querySelectorAll("article[data-message-id]").length,
    setSize: document.querySelector("article[data-message-id]")?.getAttribute("aria-setsize"),
  }));

describe("The chat panel in VS Code (code-server)", { concurrency: false }, () => {
  before(async () => {
    fake = await startScriptedFake("fake_panel_api.py");
    fx = await startVsCode({
      env: { ANTHROPIC_BASE_URL: fake.baseUrl, ANTHROPIC_API_KEY: "sk-ant-fake-e2e-key" },
      settings: { "baton.model": "claude-sonnet-4-5" },
      example: false, // the generated session is the only one, so the panel opens on it
      generate: 1_000_000,
    });
  });

  after(async () => {
    if (fx) {
      if (run.failed) await shot("e2e-panel-failure").catch(() => {});
      await stopVsCode(fx, run.failed);
    }
    await fake?.stop().catch(() => []);
  });


  step("a 1M-token session opens on its last message, a window of it drawn", async () => {
    const big = fx.generated;
    assert.ok(big.tokens >= 990_000 && big.messages > 3000, JSON.stringify(big));
    // the Baton icon in the activity bar opens the chat
    await fx.page.locator('.part.activitybar .action-item [aria-label^="Baton"], .part.activitybar .action-item[aria-label^="Baton"]').first().click({ timeout: 60_000 });
    await fx.page.mouse.move(700, 450); // off the icon: its tooltip would cover the panel
    const frame = await chatFrame();
    await frame.locator(`article[data-message-id="${big.lastMessageId}"]`).waitFor({ timeout: 60_000 });
    const opened = await until("the whole view's size on the drawn messages", async () => {
      const now = await counts(frame);
      return now.setSize === String(big.messages) ? now : undefined;
    });
    assert.ok(opened.elements <= MAX_ELEMENTS, JSON.stringify(opened));
    assert.ok(opened.drawn < 200, `${opened.drawn} of ${big.messages} messages drawn`);
    await shot("e2e-panel-1-1m-opened");
  });

  step("it scrolls end to start, the DOM bounded all the way, to its first message", async () => {
    const big = fx.generated;
    const frame = await chatFrame();
    const scroller = frame.locator(".baton-feed");
    // A screenful and a half at a time from the bottom: the panel draws where it is.
    let most = 0;
    let steps = 0;
    await until("the top of the feed", async () => {
      const top = await scroller.evaluate((el) => {
        el.scrollTop = Math.max(0, el.scrollTop - el.clientHeight * 40);
        return el.scrollTop;
      });
      steps += 1;
      await new Promise((r) => setTimeout(r, 50)); // a few frames for the feed to draw
      most = Math.max(most, (await counts(frame)).elements);
      return top === 0 ? true : undefined;
    }, 90_000);
    await until("the first message, drawn at the top", async () => {
      await scroller.evaluate((el) => (el.scrollTop = 0));
      return (await frame.locator(`article[data-message-id="${big.firstMessageId}"]`).count()) === 1 ? true : undefined;
    });
    const atTop = await counts(frame);
    assert.ok(steps > 5, `${steps} scroll steps`);
    assert.ok(Math.max(most, atTop.elements) <= MAX_ELEMENTS, `${most} elements at most while scrolling; ${JSON.stringify(atTop)}`);
    assert.equal(await frame.locator(`article[data-message-id="${big.lastMessageId}"]`).count(), 0, "the last message is no longer drawn");
    assert.equal(await frame.locator('article[data-message-id]').first().getAttribute("aria-posinset"), "1");
    await shot("e2e-panel-2-1m-at-the-top");
    // and back to the end
    await until("the last message, drawn again at the bottom", async () => {
      await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
      return (await frame.locator(`article[data-message-id="${big.lastMessageId}"]`).count()) === 1 ? true : undefined;
    });
  });

  step("the panel's find box reaches the first message from the bottom, where it is not drawn", async () => {
    const big = fx.generated;
    const frame = await chatFrame();
    assert.equal(await frame.locator(`article[data-message-id="${big.firstMessageId}"]`).count(), 0);
    await frame.locator(".baton-find-open").click();
    await frame.locator(".baton-find-input").fill("(request 1):"); // the first prompt's words
    await frame.locator(`article[data-message-id="${big.firstMessageId}"]`).waitFor({ timeout: WAIT });
    assert.match(await frame.locator(".baton-find-count").textContent(), /^1 of \d+ messages$/);
    assert.ok((await counts(frame)).elements <= MAX_ELEMENTS);
    await shot("e2e-panel-3-1m-found");
    await frame.locator(".baton-find-input").press("Escape");
  });

  step("a new chat: two turns with the model", async () => {
    await palette(fx.page, "Baton: New Chat");
    const frame = await chatFrame();
    await until("the new chat's empty feed", async () => ((await frame.locator("[data-message-id]").count()) === 0 ? true : undefined));
    await send(frame, "What is 2 + 2?");
    await feedIs(frame, ["What is 2 + 2?", "5"], "the first turn");
    await send(frame, "Are you sure?");
    await feedIs(frame, ["What is 2 + 2?", "5", "Are you sure?", "It is 4."], "the second turn");
  });

  let later = []; // the ids of the turns the edit takes out of the view
  step("Edit a past prompt and send it: the turns after it leave the view, kept in the transcript", async () => {
    const frame = await chatFrame();
    const before = await feed(frame);
    later = before.map((m) => m.id);
    const first = frame.locator(`article[data-message-id="${before[0].id}"]`);
    await first.hover();
    await first.locator(".baton-edit").click();
    const box = first.locator(".baton-edit-input");
    assert.equal(await box.inputValue(), "What is 2 + 2?");
    await box.fill("What is 3 + 3?");
    await shot("e2e-panel-4-editing");
    await first.locator(".baton-edit-send").click();
    const now = await feedIs(frame, ["What is 3 + 3?", "6"], "after the edit");
    for (const m of now) assert.ok(!later.includes(m.id), `${m.id} is a new message`);
    const transcript = transcriptWith("What is 3 + 3?");
    for (const id of later) assert.ok(transcript.includes(`"${id}"`), `${id} is still in the transcript`);
    assert.match(transcript, /"direction": ?"rewind"/, "one rewind boundary line");
    await frame.getByText(/4 messages left the view/).first().waitFor({ timeout: WAIT });
    await shot("e2e-panel-5-edited-and-sent");
  });

  step("Undo Compaction brings the turns back before the new one", async () => {
    const frame = await chatFrame();
    await palette(fx.page, "Baton: Undo Compaction");
    const now = await feedIs(
      frame,
      ["What is 2 + 2?", "5", "Are you sure?", "It is 4.", "What is 3 + 3?", "6"],
      "after the undo",
    );
    assert.deepEqual(now.slice(0, 4).map((m) => m.id), later, "the same messages, back");
    await fx.page.locator(".notifications-toasts .notification-list-item", { hasText: "the messages are back in the view" }).first().waitFor({ timeout: WAIT });
    await shot("e2e-panel-6-undone");
  });

  let replaced = "";
  step("Retry asks again for the last reply: the old one leaves the view, kept in the transcript", async () => {
    const frame = await chatFrame();
    const before = await feed(frame);
    replaced = before.at(-1).id;
    const lastReply = frame.locator(`article[data-message-id="${replaced}"]`);
    // Retry is offered on the last reply only
    assert.equal(await frame.locator(".baton-retry").count(), 1);
    await lastReply.hover();
    await lastReply.locator(".baton-retry").click();
    const now = await until("the new reply", async () => {
      const all = await feed(frame);
      return all.length === 6 && all.at(-1).text.startsWith("Six, as this prints") ? all : undefined;
    }, 60_000);
    assert.deepEqual(now.slice(0, 5).map((m) => m.id), before.slice(0, 5).map((m) => m.id), "the prompt is kept, not sent again");
    assert.ok(!now.some((m) => m.id === replaced), "the old reply left the view");
    assert.ok(transcriptWith(CODE).includes(`"${replaced}"`), "the old reply is still in the transcript");
    await shot("e2e-panel-7-retried");
  });

  step("Insert at Cursor puts the reply's code into the open editor", async () => {
    await openFile(fx.page, "README.md");
    const editor = fx.page.locator(".editor-instance .monaco-editor").first();
    const text = async () => (await editor.locator(".view-lines").first().innerText({ timeout: 2000 })).replace(/\u00a0/g, " ");
    const original = await until("README.md's text", async () => ((await text()).includes("Monthly report") ? text() : undefined));
    assert.ok(!original.includes(CODE));
    // the cursor at the end of the file
    await editor.locator(".view-lines").first().click();
    await fx.page.keyboard.press("Control+End");

    const frame = await chatFrame();
    const block = frame.locator("article[data-message-id] pre.baton-code:has(.baton-insert)").last();
    await block.waitFor({ timeout: WAIT });
    assert.equal((await block.locator("code").textContent()).trim(), CODE);
    await block.hover();
    await block.locator(".baton-insert").click();
    const changed = await until("the code in README.md", async () => {
      const now = await text();
      return now.includes(CODE) ? now : undefined;
    });
    const lines = changed.split("\n");
    assert.ok(lines.indexOf(CODE) > lines.findIndex((l) => l.includes("Monthly report")), `inserted at the end:\n${changed}`);
    await shot("e2e-panel-8-inserted-at-cursor");
  });

  step("the walkthrough opens with its four steps, and its first opens the chat", async () => {
    await palette(fx.page, "Welcome: Open Walkthrough...", { picks: true });
    const input = fx.page.locator('.quick-input-widget input[placeholder="Select a walkthrough to open"]');
    await input.waitFor({ state: "visible", timeout: WAIT });
    await input.fill("Get started with Baton");
    await fx.page.locator(".quick-input-list .monaco-list-row.focused", { hasText: "Get started with Baton" }).waitFor({ timeout: WAIT });
    await input.press("Enter");
    const page = fx.page.locator(".gettingStartedContainer");
    await page.getByText("Get started with Baton").first().waitFor({ timeout: WAIT });
    const steps = page.locator(".getting-started-step .step-title");
    await until("the walkthrough's steps", async () => ((await steps.count()) === 4 ? true : undefined));
    assert.deepEqual(
      (await steps.allInnerTexts()).map((t) => t.trim()),
      ["Open the chat", "Set an API key", "Import a Claude Code session", "Compact, and undo"],
    );
    await shot("e2e-panel-9-walkthrough");
    // the chat is closed first, so the link is what opens it
    const sideBar = fx.page.locator(".part.sidebar");
    await palette(fx.page, "View: Close Primary Side Bar");
    await sideBar.waitFor({ state: "hidden", timeout: WAIT });
    await page.getByRole("button", { name: "Show Chat" }).first().click();
    await sideBar.waitFor({ state: "visible", timeout: WAIT });
    await sideBar.locator(".title-label", { hasText: "Baton" }).first().waitFor({ timeout: WAIT });
    await chatFrame();
  });

  step("the model got the edited prompt without the turns it replaced, and Retry sent no prompt again", async () => {
    const requests = await fake.stop();
    fake = undefined;
    const said = (body) => JSON.stringify(body.messages);
    const edited = requests.find((r) => said(r).includes("What is 3 + 3?"));
    assert.ok(edited, "the edited prompt was sent");
    assert.ok(!said(edited).includes("Are you sure?") && !said(edited).includes("What is 2 + 2?"), said(edited));
    const retry = requests.at(-1);
    assert.match(said(retry), /What is 3 \+ 3\?/);
    assert.equal(said(retry).split("What is 3 + 3?").length - 1, 1, "the prompt is in the retry's request once");
    assert.ok(!said(retry).includes('"6"'), "nor the reply it replaces");
  });
});
