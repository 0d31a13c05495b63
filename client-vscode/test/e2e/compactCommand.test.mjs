// End to end in a real VS Code (code-server, headless Chromium): "Baton: Compact Conversation"
// compacts the conversation on show when it was started, though another extension opened
// another one while its input box waited, and its notification names the one it compacted.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import { frameWith, palette, pollUntil, resultsDir, startVsCode, steps, stopVsCode } from "./codeServer.mjs";

const WAIT = 30_000;
const METER = '#workbench\\.parts\\.statusbar .statusbar-item[id$="baton.meter"]';
const MEANWHILE = "API consumer, started meanwhile";
let fx;
const run = steps(() => fx?.page);
const step = run.step;

const until = (what, probe, ms = WAIT) => pollUntil(what, probe, ms);
const records = (file) => readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line));

describe("Baton: Compact Conversation in VS Code (code-server)", { concurrency: false }, () => {
  before(async () => {
    fx = await startVsCode();
  });

  after(async () => {
    if (fx) {
      if (run.failed) await fx.page.screenshot({ path: join(resultsDir, "e2e-compact-command-failure.png") }).catch(() => {});
      await stopVsCode(fx, run.failed);
    }
  });

  step("a conversation opened while its input box waits is not the one compacted; the notification names it", async () => {
    await fx.page.locator(METER).click({ timeout: 60_000 });
    const frame = await frameWith(fx.page, "#baton-input", "the chat webview");
    const header = frame.locator(".baton-session-button");
    await until("the imported session in the panel", async () => ((await frame.locator("[data-message-id]").count()) > 0 ? true : undefined));
    const title = (await header.textContent()).trim();
    const before = records(fx.session.transcript).filter((r) => r.type === "boundary").length;

    // another extension starts a conversation (the panel follows it) once signalled
    await palette(fx.page, "Baton API Consumer: Create a Conversation on Signal");
    await palette(fx.page, "Baton: Compact Conversation", { picks: true });
    const widget = fx.page.locator(".quick-input-widget");
    await widget.filter({ hasText: "Optional instructions for the summary" }).waitFor({ timeout: WAIT });
    writeFileSync(`${fx.apiResult}.go`, "");
    await until("the panel on the conversation started meanwhile", async () =>
      (await header.textContent()).includes(MEANWHILE) ? true : undefined,
    );
    const created = readFileSync(`${fx.apiResult}.created`, "utf8");
    assert.ok(await widget.isVisible(), "the input box still waits");
    await fx.page.screenshot({ path: join(resultsDir, "e2e-compact-command-1-waiting.png") });
    const input = widget.locator("input");
    await input.fill("keep the March export's figures");
    await input.press("Enter");

    // what the command says when it ends (not its progress)
    const toasts = fx.page.locator(".notifications-toasts .notification-list-item");
    const text = await until("the command's notification", async () => {
      const texts = await toasts.allInnerTexts().catch(() => []);
      return texts.find((t) => /Baton: /.test(t) && !/Baton: compacting/.test(t));
    }, 60_000);
    await fx.page.screenshot({ path: join(resultsDir, "e2e-compact-command-2-told.png") });
    assert.match(text, new RegExp(`Baton: compacted “${title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}”, the whole conversation: `), text);
    assert.equal(records(fx.session.transcript).filter((r) => r.type === "boundary").length, before + 1, "the imported session was compacted");
    const other = join(fx.dataDir, "sessions", `${created}.jsonl`);
    assert.ok(!existsSync(other) || records(other).every((r) => r.type !== "boundary"), "the one started meanwhile was not");
    assert.ok((await header.textContent()).includes(MEANWHILE), "the panel stays where the user has it");
  });
});
