// End to end in a real VS Code (code-server, headless Chromium): a compaction is of the
// conversation it was started for, though another extension opened another one meanwhile
// (the panel follows it): "Baton: Compact Conversation" while its input box waited, a
// draft's Apply from its card (whose tab names its conversation); the notification names
// the conversation compacted.
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
const transcript = (sessionId) => join(fx.dataDir, "sessions", `${sessionId}.jsonl`);
const boundaries = (file) =>
  existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter((line) => JSON.parse(line).type === "boundary").length : 0;
const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The chat webview's frame and its header's session button. */
async function chat() {
  const frame = await frameWith(fx.page, "#baton-input", "the chat webview");
  return { frame, header: frame.locator(".baton-session-button") };
}

/** Opens the session whose title `search` finds, through the panel's session picker; its title. */
async function open(search) {
  const { frame, header } = await chat();
  await until("a session in the panel", async () => ((await header.textContent().catch(() => "")) ? true : undefined));
  await header.click();
  const field = frame.getByRole("searchbox", { name: "Search sessions" });
  await field.fill(search);
  await frame.locator(".baton-session-row").first().waitFor({ timeout: WAIT });
  await field.press("Enter");
  await until(`the session "${search}" shown`, async () =>
    (await header.textContent()).toLowerCase().includes(search.toLowerCase()) &&
    (await frame.locator("[data-message-id]").count()) > 0 &&
    !(await frame.locator(".baton-session-picker").isVisible())
      ? true
      : undefined,
  );
  return (await header.textContent()).trim().replace(/\s*▾$/, "");
}

/** Has the test API consumer start a conversation now (the panel follows it); its id. */
async function startMeanwhile() {
  writeFileSync(`${fx.apiResult}.go`, "");
  const { header } = await chat();
  await until("the panel on the conversation started meanwhile", async () =>
    (await header.textContent()).includes(MEANWHILE) && existsSync(`${fx.apiResult}.created`) ? true : undefined,
  );
  return readFileSync(`${fx.apiResult}.created`, "utf8");
}

/** What the command says when it ends (not its progress). */
function told() {
  const toasts = fx.page.locator(".notifications-toasts .notification-list-item");
  return until("the command's notification", async () => {
    const texts = await toasts.allInnerTexts().catch(() => []);
    return texts.find((t) => /Baton: (?!compacting|writing|applying)/.test(t));
  }, 60_000);
}

async function dismissToasts() {
  await palette(fx.page, "Notifications: Clear All Notifications");
}

describe("a compaction of the conversation it was started for, in VS Code (code-server)", { concurrency: false }, () => {
  before(async () => {
    fx = await startVsCode({ generate: 20_000 });
  });

  after(async () => {
    if (fx) {
      if (run.failed) await fx.page.screenshot({ path: join(resultsDir, "e2e-compact-command-failure.png") }).catch(() => {});
      await stopVsCode(fx, run.failed);
    }
  });

  step("a draft applied while another conversation is on show compacts its own and says which", async () => {
    await fx.page.locator(METER).click({ timeout: 60_000 });
    const title = await open("March bank export");
    const before = boundaries(fx.session.transcript);
    await palette(fx.page, "Baton: Preview Compaction");
    const card = await until("the compaction draft's card", async () => {
      for (const frame of fx.page.frames()) {
        if ((await frame.locator(".figures[data-draft-id]").count().catch(() => 0)) > 0) return frame;
      }
      return undefined;
    });
    await dismissToasts();
    await palette(fx.page, "Baton API Consumer: Create a Conversation on Signal");
    const created = await startMeanwhile();
    // the card says whose draft it is, though another conversation is on show now
    const tab = fx.page.locator(".tabs-container .tab", { hasText: "Compaction Draft" });
    assert.equal((await tab.first().innerText()).trim(), `Baton: Compaction Draft of “${title}”`);
    await card.locator("#apply").click();
    const text = await told();
    await fx.page.screenshot({ path: join(resultsDir, "e2e-compact-command-1-draft.png") });
    assert.match(text, new RegExp(`Baton: compacted “${escaped(title)}”, the whole conversation: `), text);
    assert.equal(boundaries(fx.session.transcript), before + 1, "the draft's session was compacted");
    assert.equal(boundaries(transcript(created)), 0, "the one started meanwhile was not");
  });

  step("Compact Conversation compacts the conversation on show when it started, not one opened while its box waited", async () => {
    rmSync(`${fx.apiResult}.go`, { force: true });
    rmSync(`${fx.apiResult}.created`, { force: true });
    await dismissToasts();
    const title = await open("Benchmark");
    const target = transcript(fx.generated.sessionId);
    const before = boundaries(target);

    await palette(fx.page, "Baton API Consumer: Create a Conversation on Signal");
    await palette(fx.page, "Baton: Compact Conversation", { picks: true });
    const widget = fx.page.locator(".quick-input-widget");
    await widget.filter({ hasText: "Optional instructions for the summary" }).waitFor({ timeout: WAIT });
    const created = await startMeanwhile();
    assert.ok(await widget.isVisible(), "the input box still waits");
    await fx.page.screenshot({ path: join(resultsDir, "e2e-compact-command-2-waiting.png") });
    const input = widget.locator("input");
    await input.fill("keep the figures");
    await input.press("Enter");

    const text = await told();
    await fx.page.screenshot({ path: join(resultsDir, "e2e-compact-command-3-told.png") });
    assert.match(text, new RegExp(`Baton: compacted “${escaped(title)}”, the whole conversation: `), text);
    assert.equal(boundaries(target), before + 1, "the conversation on show when it started was compacted");
    assert.equal(boundaries(transcript(created)), 0, "the one started meanwhile was not");
    const { header } = await chat();
    assert.ok((await header.textContent()).includes(MEANWHILE), "the panel stays where the user has it");
  });
});
