// End to end in a real VS Code (code-server, headless Chromium): Preview Compaction opens
// the draft's summary in an editor beside its card; the summary is edited, measured again,
// applied from the card, and the meter drops to the figure the card showed. A draft's card
// and a session document open as baton.dataDir changes (to a copy of the folder, where the
// same conversation and its draft are) close: neither acts on the new folder's.
import assert from "node:assert/strict";
import { cpSync, existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { changeSettings, onScreen, palette, pollUntil, resultsDir, startVsCode, stopVsCode } from "./codeServer.mjs";

const WAIT = 30_000;
const METER = '#workbench\\.parts\\.statusbar .statusbar-item[id$="baton.meter"]';
const METER_TEXT = /(\d+)% (\d+(?:\.\d+)?)K\/(\d+)K/;
const EDITED = "Edited in VS Code: the user had the monthly report fixed for the March bank export.";
let fx;
let failed = false;

const until = (what, probe, ms = WAIT) => pollUntil(what, probe, ms);

async function meter() {
  const text = (await fx.page.locator(METER).innerText()).trim();
  const m = METER_TEXT.exec(text);
  assert.ok(m, `meter text ${JSON.stringify(text)} is not like "12% 24K/200K"`);
  return { text, kTokens: Number(m[2]) };
}

/** The card's webview frame and its figures. */
async function card() {
  return until("the compaction draft's card", async () => {
    for (const frame of fx.page.frames()) {
      const figures = frame.locator(".figures[data-draft-id]");
      if ((await figures.count().catch(() => 0)) > 0) {
        return {
          frame,
          draftId: await figures.getAttribute("data-draft-id"),
          postTokens: Number(await figures.getAttribute("data-post-tokens")),
          measured: (await figures.getAttribute("data-measured")) === "true",
          cost: await frame.locator(".baton-draft-cost").innerText(),
        };
      }
    }
    return undefined;
  });
}

describe("Compaction drafts in VS Code (code-server)", { concurrency: false }, () => {
  before(async () => {
    fx = await startVsCode();
  });
  after(async () => {
    if (fx) {
      if (failed) await fx.page.screenshot({ path: join(resultsDir, "drafts-failure.png") }).catch(() => {});
      await stopVsCode(fx, failed);
    }
  });

  test("preview, edit, apply: the meter drops to the previewed figure", async () => {
    try {
      await fx.page.locator(METER).waitFor({ state: "visible", timeout: 60_000 });
      const before = await until("the meter's figures", () => meter());
      await palette(fx.page, "Baton: Preview Compaction");
      const first = await card();
      assert.ok(first.postTokens > 0 && first.postTokens / 1000 < before.kTokens, `${first.postTokens} vs ${before.text}`);
      assert.match(first.cost, /The next request sends [\d,]+ tokens instead of [\d,]+/);
      const transcript = readFileSync(fx.session.transcript, "utf8");
      await fx.page.screenshot({ path: join(resultsDir, "drafts-1-preview.png") });

      // the summary's editor: the untitled Markdown document in the first group
      const editor = fx.page.locator(".editor-group-container").first().locator(".monaco-editor .view-lines").first();
      await editor.click();
      await fx.page.keyboard.press("Control+A");
      await fx.page.keyboard.type(EDITED, { delay: 5 });
      const edited = await until("the card to show the edited summary's figures", async () => {
        const now = await card();
        return now.measured && now.draftId !== first.draftId ? now : undefined;
      });
      assert.ok(edited.postTokens < first.postTokens, `${edited.postTokens} < ${first.postTokens}`);
      assert.equal(readFileSync(fx.session.transcript, "utf8"), transcript, "nothing was committed yet");
      await fx.page.screenshot({ path: join(resultsDir, "drafts-2-edited.png") });

      await edited.frame.locator("#apply").click();
      const afterApply = await until("the meter at the previewed figure", async () => {
        const now = await meter();
        return Math.abs(now.kTokens - edited.postTokens / 1000) <= 0.1 ? now : undefined;
      });
      assert.ok(afterApply.kTokens < before.kTokens, `${before.text} -> ${afterApply.text}`);
      assert.ok(readFileSync(fx.session.transcript, "utf8").includes(EDITED), "the edited summary is committed");
      const told = fx.page.locator(".notifications-toasts .notification-list-item", { hasText: "Summarized" });
      await told.first().waitFor({ timeout: WAIT });
      await fx.page.screenshot({ path: join(resultsDir, "drafts-3-applied.png") });
    } catch (error) {
      failed = true;
      const shown = await onScreen(fx.page).catch(() => "");
      if (shown && error instanceof Error) error.message += `\non screen: ${shown}`;
      throw error;
    }
  });

  test("Apply of a draft the server no longer has says so in words and drops the card", async () => {
    try {
      await palette(fx.page, "Baton: Preview Compaction");
      await card();
      // another window or client discarded it: the session's draft record is gone
      const record = fx.session.transcript.replace(/\.jsonl$/, ".draft.json");
      assert.ok(existsSync(record), record);
      rmSync(record);
      const transcript = readFileSync(fx.session.transcript, "utf8");
      const shown = await card();
      await shown.frame.locator("#apply").click();
      const told = fx.page.locator(".notifications-toasts .notification-list-item", { hasText: "no longer there" });
      await told.first().waitFor({ timeout: WAIT });
      assert.match(await told.first().innerText(), /Nothing was compacted; run Preview Compaction again/);
      assert.doesNotMatch(await onScreen(fx.page), /draft_not_found|has no draft/);
      await until("the stale card to go", async () => {
        for (const frame of fx.page.frames()) {
          if ((await frame.locator(".figures[data-draft-id]").count().catch(() => 0)) > 0) return undefined;
        }
        return true;
      });
      assert.equal(readFileSync(fx.session.transcript, "utf8"), transcript, "nothing was committed");
    } catch (error) {
      failed = true;
      const shown = await onScreen(fx.page).catch(() => "");
      if (shown && error instanceof Error) error.message += `\non screen: ${shown}`;
      throw error;
    }
  });

  test("another data dir: the draft's card and the session document of the one before close, and nothing of the new one is touched", async () => {
    try {
      const sessionId = fx.session.sessionId;
      await palette(fx.page, "Baton: Open Session Document");
      const docTab = fx.page.locator(".tabs-container .tab", { hasText: sessionId });
      await docTab.first().waitFor({ timeout: WAIT });
      await palette(fx.page, "Baton: Preview Compaction");
      await card();
      const draftTab = fx.page.locator(".tabs-container .tab", { hasText: "Compaction Draft" });
      // a copy of the folder, the draft's record with it: the card's Apply there would compact the copy
      const copyDir = `${fx.root}/copy-data`;
      cpSync(fx.dataDir, copyDir, { recursive: true });
      const copied = `${copyDir}/sessions/${sessionId}.jsonl`;
      assert.ok(existsSync(copied.replace(/\.jsonl$/, ".draft.json")), "the copy holds the draft");
      const before = readFileSync(copied, "utf8");
      changeSettings(fx, { "baton.dataDir": copyDir });
      await until("the draft's card and the session document to close", async () =>
        (await draftTab.count()) === 0 && (await docTab.count()) === 0 ? true : undefined,
      );
      const told = fx.page.locator(".notifications-toasts .notification-list-item", { hasText: "data dir used before" });
      await told.first().waitFor({ timeout: WAIT });
      assert.match(await told.first().innerText(), /the compaction draft of “.+” and 1 conversation document of the data dir used before closed/);
      await fx.page.screenshot({ path: join(resultsDir, "drafts-4-data-dir-closed.png") });
      await palette(fx.page, "Baton: Open Session Document");
      await docTab.first().waitFor({ timeout: WAIT }); // the copy's, read anew
      assert.equal(readFileSync(copied, "utf8"), before, "the copy's transcript is as it was");
    } catch (error) {
      failed = true;
      const shown = await onScreen(fx.page).catch(() => "");
      if (shown && error instanceof Error) error.message += `\non screen: ${shown}`;
      throw error;
    }
  });
});
