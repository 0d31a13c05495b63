// End to end in a real VS Code (code-server's web workbench, headless Chromium): the built
// baton.vsix against the real `baton serve`, on a data dir holding an imported session.
// The checks run in order on one workbench; each leaves a screenshot in test-results/.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { frameWith, palette, pollUntil, resultsDir, startVsCode, steps, stopVsCode } from "./codeServer.mjs";

const WAIT = 30_000;
let fx;
const run = steps(() => fx?.page);
const step = run.step;
let meterBefore;

const METER = '#workbench\\.parts\\.statusbar .statusbar-item[id$="baton.meter"]';
const METER_TEXT = /(\d+)% (\d+(?:\.\d+)?)K\/(\d+)K/;

async function shot(name) {
  await fx.page.screenshot({ path: join(resultsDir, `${name}.png`) });
}

/** Polls `probe` until it returns a value that is not undefined; bounded by `ms`. */
const until = (what, probe, ms = WAIT) => pollUntil(what, probe, ms);

async function meter() {
  const text = (await fx.page.locator(METER).innerText()).trim();
  const m = METER_TEXT.exec(text);
  assert.ok(m, `meter text ${JSON.stringify(text)} is not like "12% 24K/200K"`);
  return { text, percent: Number(m[1]), kTokens: Number(m[2]), kWindow: Number(m[3]) };
}

/** The webview frame that shows the chat, found by its message elements. */
const chatFrame = () => frameWith(fx.page, "[data-message-id]", "the chat webview's messages");

describe("Baton in VS Code (code-server)", { concurrency: false }, () => {
  before(async () => {
    fx = await startVsCode();
  });

  after(async () => {
    if (fx) {
      if (run.failed) await shot("e2e-failure").catch(() => {});
      await stopVsCode(fx, run.failed);
    }
  });


  step("the status-bar meter shows the imported session's usage", async () => {
    await fx.page.locator(METER).waitFor({ state: "visible", timeout: 60_000 });
    meterBefore = await until("the meter's figures", () => meter());
    const { session } = fx;
    assert.equal(meterBefore.percent, Math.round(session.percentUsed), meterBefore.text);
    assert.ok(Math.abs(meterBefore.kTokens - session.usedTokens / 1000) <= 1, meterBefore.text);
    assert.equal(meterBefore.kWindow, session.contextWindow / 1000, meterBefore.text);
  });

  step("a click on the meter reveals the chat view rendering the session", async () => {
    await fx.page.locator(METER).click();
    const frame = await chatFrame();
    const messages = frame.locator("[data-message-id]");
    // The feed draws the messages near the viewport; each says where it sits in the view.
    await until("the view's messages", async () =>
      (await messages.first().getAttribute("aria-setsize")) === String(fx.session.messages) ? true : undefined,
    );
    const transcript = readFileSync(fx.session.transcript, "utf8");
    for (const id of await messages.evaluateAll((els) => els.map((e) => e.dataset.messageId))) {
      assert.ok(transcript.includes(`"${id}"`), `message ${id} is not in the session's transcript`);
    }
    const first = frame.getByText("The monthly report crashes on the March bank export").first();
    await until("the first prompt, drawn once scrolled to", async () => {
      await frame.locator(".baton-feed").evaluate((el) => (el.scrollTop = 0));
      return (await first.count()) > 0 ? true : undefined;
    });
    await shot("e2e-1-meter-and-chat");
  });

  step("right-click Compact Up To Here puts a summary boundary in and lowers the meter", async () => {
    const frame = await chatFrame();
    // The panel's find box draws a message wherever it is.
    await frame.locator(".baton-find-open").click();
    await frame.locator(".baton-find-input").fill("Please add tests for the parsing helpers");
    // the user's second prompt, mid-conversation: a safe cut, so the pivot is not moved
    const pivot = frame.locator("article[data-message-id]", { hasText: "Please add tests for the parsing helpers" }).first();
    await pivot.waitFor({ timeout: WAIT });
    const at = Number(await pivot.getAttribute("aria-posinset")) - 1;
    const total = Number(await pivot.getAttribute("aria-setsize"));
    assert.ok(at > 0 && at < total - 1, `pivot at ${at} of ${total}`);
    await frame.locator(".baton-find-input").press("Escape");
    await pivot.click({ button: "right" });
    const item = fx.page.locator(".context-view .monaco-menu .action-item", { hasText: "Compact Up To Here" });
    await item.first().waitFor({ state: "visible", timeout: WAIT });
    await shot("e2e-2-context-menu");
    // The menu hides before it runs the chosen action, so while it stays open the click was not
    // taken (the workbench can drop one that lands as the menu settles) and another is safe.
    for (let attempt = 1; ; attempt++) {
      await item.first().click();
      const hidden = await item
        .first()
        .waitFor({ state: "hidden", timeout: 5_000 })
        .then(() => true, () => false);
      if (hidden) break;
      assert.ok(attempt < 4, "the context menu stayed open after four clicks on Compact Up To Here");
    }
    const summary = (await chatFrame()).locator(".baton-summary").first();
    await until("the summary, first in the view", async () => {
      await (await chatFrame()).locator(".baton-feed").evaluate((el) => (el.scrollTop = 0));
      return (await summary.count()) > 0 ? true : undefined;
    }, 60_000);
    const after = await until("a lower meter", async () => {
      const now = await meter();
      return now.kTokens < meterBefore.kTokens ? now : undefined;
    });
    assert.ok(after.percent <= meterBefore.percent, `${meterBefore.text} -> ${after.text}`);
    meterBefore = after;
    // The summary took the place of the first at + 1 messages; the rest are kept after it.
    const head = (await chatFrame()).locator("article[data-message-id]").first();
    assert.match((await head.getAttribute("class")) ?? "", /kind-summary/);
    const size = Number(await head.getAttribute("aria-setsize"));
    assert.ok(size < total && size >= total - (at + 1) + 1, `${total} messages became ${size}`);
    // Under the summary, the messages it replaced, read from the transcript once opened, greyed.
    await head.locator("details.baton-replaced > summary").click();
    const replaced = head.locator(".baton-replaced-message");
    await until("the summarized messages under the summary", async () => ((await replaced.count()) > 0 ? true : undefined));
    const shown = await replaced.count();
    assert.equal(shown, Math.min(at + 1, 40), `${shown} of the ${at + 1} summarized messages drawn (a page is 40)`);
    assert.match(await head.locator("details.baton-replaced > summary").innerText(), new RegExp(`${at + 1} messages`));
    await summary.scrollIntoViewIfNeeded();
    await shot("e2e-3-compacted");
  });

  step("Open Session Document lists the context-usage diagnostic in Problems", async () => {
    await palette(fx.page, "Baton: Open Session Document");
    const tab = fx.page.locator(".tabs-container .tab", { hasText: fx.session.sessionId });
    await tab.first().waitFor({ state: "visible", timeout: WAIT });
    await palette(fx.page, "View: Focus Problems");
    const row = fx.page.locator(".markers-panel .monaco-list-row", { hasText: /Context \d+% used/ }).first();
    await row.waitFor({ state: "visible", timeout: WAIT });
    const text = await row.innerText();
    assert.match(text, new RegExp(`Context ${meterBefore.percent}% used`), text);
    assert.match(text, /context-usage/, text);
    await shot("e2e-4-problems");
  });

  step("a second extension drives the session through Baton's API", async () => {
    await palette(fx.page, "Baton API Consumer: Run");
    const item = fx.page.locator('#workbench\\.parts\\.statusbar .statusbar-item[id$="batonApiConsumer.result"]');
    const text = await until("the API consumer's result", async () => {
      const t = (await item.innerText()).trim();
      return /^Baton API: (ok|failed)/.test(t) ? t : undefined;
    }, 60_000);
    await shot("e2e-5-api-consumer");
    const r = JSON.parse(readFileSync(fx.apiResult, "utf8"));
    assert.equal(r.ok, true, `${text}: ${r.error}`);
    assert.equal(r.apiVersion, 1);
    assert.equal(r.appended, r.inputMessages);
    assert.deepEqual(r.viewIds, r.appendedIds, "the view is the appended conversation");
    assert.ok(r.usedBefore > 0);
    assert.ok(r.events.length >= 1, "onDidChangeUsage fired for the session");
    assert.ok(r.compact.postTokens < r.compact.preTokens, JSON.stringify(r.compact));
    assert.equal(r.compact.summarized, 8, "up_to the 8th message summarizes eight");
    assert.ok(r.viewAfterCompact.includes("summary"), `view after compact: ${r.viewAfterCompact}`);
    assert.ok(r.usedAfterCompact < r.usedBefore);
    assert.equal(r.compact.postTokens, r.usedAfterCompact, "the compaction reports the meter's figure");
    assert.ok(r.declared.system > 20 && r.declared.tools === 2500, JSON.stringify(r.declared));
    assert.equal(r.toolsAfterCompact, 2500, "the declared tools still count after a compaction");
    assert.deepEqual(r.viewAfterUndo, r.appendedIds, "undo brings the whole conversation back");
    assert.equal(r.usedAfterUndo, r.usedBefore);
  });
  step("a session document tab open at reload opens again, from the server", async () => {
    const tab = fx.page.locator(".tabs-container .tab", { hasText: fx.session.sessionId });
    await tab.first().waitFor({ state: "visible", timeout: WAIT });
    await palette(fx.page, "Developer: Reload Window");
    await fx.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    await tab.first().waitFor({ state: "visible", timeout: 60_000 });
    await tab.first().click();
    const editor = fx.page.locator(".editor-instance .monaco-editor").first();
    // the rendering, not VS Code's "The editor could not be opened" placeholder
    await until("the session document's text after the reload", async () => {
      // the editor draws spaces as no-break spaces
      const text = (await editor.locator(".view-lines").first().innerText({ timeout: 2000 })).replace(/\u00a0/g, " ");
      return text.includes(`Session ${fx.session.sessionId}`) ? text : undefined;
    }, 60_000);
    assert.equal(await fx.page.getByText("The editor could not be opened").count(), 0);
    await shot("e2e-6-reloaded-session-document");
  });
});
