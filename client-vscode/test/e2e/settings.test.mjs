// End to end in a real VS Code (code-server, headless Chromium), against a fake Messages API
// (fake_key_api.py): settings changed while the panel shows a conversation. Another data dir:
// the panel and the meter follow the new folder at once (its newest conversation, or the
// welcome when it holds none, and the first folder's conversation again once the setting is
// back). A new API key set while a reply streams: the reply ends as the API wrote it, and the
// server restarts with the key after it; set while the reply waits for a permission card, the
// panel says the restart waits for the answer, and it comes once the card is answered.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import {
  changeSettings,
  frameWith,
  generateSession,
  palette,
  pollUntil,
  resultsDir,
  startScriptedFake,
  startVsCode,
  steps,
  stopVsCode,
} from "./codeServer.mjs";

const WAIT = 30_000;
const METER = '#workbench\\.parts\\.statusbar .statusbar-item[id$="baton.meter"]';
const EXAMPLE = "Fix expense report crash on March bank export";
const FIRST_KEY = "sk-ant-fake-e2e-key";
const NEW_KEY = "sk-ant-fake-e2e-new-key";
const THIRD_KEY = "sk-ant-fake-e2e-third-key";
const README_READ = "The README says the report comes from the bank's CSV export."; // fake_key_api.py's
const HELD = "Half of a reply, and the rest of it once released"; // fake_key_api.py's
let fx;
let fake;
const run = steps(() => fx?.page);
const step = run.step;
let otherDir; // a second data dir, holding a generated session
let other;

const until = (what, probe, ms = WAIT) => pollUntil(what, probe, ms);

async function shot(name) {
  await fx.page.screenshot({ path: join(resultsDir, `${name}.png`) });
}

/** The chat webview's frame, found by its input box. */
const chatFrame = () => frameWith(fx.page, "#baton-input", "the chat webview");

async function send(frame, text) {
  const input = frame.locator("#baton-input");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
}

/** Waits for the reply "OK" to `prompt`, the last two messages of the feed. */
function replied(frame, prompt) {
  return until(`the reply to ${prompt}`, async () => {
    const texts = await frame.locator("article[data-message-id] .baton-message-body").allInnerTexts();
    return texts.at(-2)?.trim() === prompt && texts.at(-1)?.trim() === "OK" ? true : undefined;
  });
}

/** Baton: Set API Key, from the palette. */
async function setApiKey(key) {
  await palette(fx.page, "Baton: Set API Key", { picks: true });
  const box = fx.page.locator(".quick-input-widget input[type=password]");
  await box.fill(key);
  await box.press("Enter");
}

/** What the panel and the meter show: the conversation's title ("" for the welcome), the meter's text. */
async function shown(frame) {
  const header = frame.locator(".baton-session-button");
  const title = (await header.isVisible()) ? (await header.innerText()).trim() : "";
  const welcome = await frame.getByRole("button", { name: "Import Claude Code Session" }).isVisible();
  return { title, welcome, meter: (await fx.page.locator(METER).innerText()).trim() };
}

/** Waits until the panel and the meter show what `wanted` says (each key given). */
async function showing(frame, wanted, what) {
  let last;
  try {
    return await until(what, async () => {
      last = await shown(frame);
      return Object.entries(wanted).every(([key, value]) => (value instanceof RegExp ? value.test(last[key]) : last[key] === value)) ? last : undefined;
    });
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; on show: ${JSON.stringify(last)}`);
  }
}

describe("settings changed while the panel is open, in VS Code (code-server)", { concurrency: false }, () => {
  before(async () => {
    fake = await startScriptedFake("fake_key_api.py");
    fx = await startVsCode({
      env: { ANTHROPIC_BASE_URL: fake.baseUrl, ANTHROPIC_API_KEY: FIRST_KEY },
      settings: { "baton.tools.permissions.read_file": "ask" }, // a read asks with a card
      keepResults: true,
    });
    otherDir = join(fx.root, "other-data");
    mkdirSync(otherDir);
    other = await generateSession({ ...fx, dataDir: otherDir }, 20_000);
  });

  after(async () => {
    if (fx) {
      if (run.failed) await shot("e2e-settings-failure").catch(() => {});
      await stopVsCode(fx, run.failed);
    }
    await fake?.stop().catch(() => []);
  });

  step("another data dir: the panel and the meter show its newest conversation", async () => {
    await fx.page.locator(METER).click({ timeout: 60_000 });
    const frame = await chatFrame();
    await showing(frame, { title: EXAMPLE, meter: /^12% 23\.9K\/200K$/ }, "the example conversation");
    changeSettings(fx, { "baton.dataDir": otherDir });
    await showing(frame, { title: /^Benchmark session/, meter: /^\d+% 20(\.\d)?K\// }, `the other folder's conversation (${other.tokens} tokens) in the panel and the meter`);
    await until("its messages in the feed", async () => ((await frame.locator("[data-message-id]").count()) > 0 ? true : undefined));
    await shot("e2e-settings-1-other-dir");
  });

  step("a data dir holding no conversation: the welcome, and the meter on none", async () => {
    const frame = await chatFrame();
    const empty = join(fx.root, "empty-data");
    mkdirSync(empty);
    changeSettings(fx, { "baton.dataDir": empty });
    await showing(frame, { welcome: true, meter: "Baton" }, "the welcome and an empty meter");
    await shot("e2e-settings-2-empty-dir");
  });

  step("the first data dir again: its conversation", async () => {
    const frame = await chatFrame();
    changeSettings(fx, { "baton.dataDir": fx.dataDir });
    await showing(frame, { title: EXAMPLE, welcome: false, meter: /^12% 23\.9K\/200K$/ }, "the example conversation again");
  });

  step("a new API key set while a reply streams: the reply ends as written, then the server restarts with the key", async () => {
    const frame = await chatFrame();
    await send(frame, "Hold this reply");
    await frame.locator("article.baton-pending", { hasText: "Half of" }).waitFor({ timeout: WAIT });
    await setApiKey(NEW_KEY);
    const notice = fx.page.locator(".notifications-toasts .notification-list-item", { hasText: "API key saved" });
    await notice.first().waitFor({ timeout: WAIT });
    const said = await notice.first().innerText();
    fake.say("release");
    const reply = frame.locator("article[data-message-id]", { hasText: HELD });
    await reply.waitFor({ timeout: WAIT });
    assert.doesNotMatch(await reply.innerText(), /interrupted/);
    assert.equal(await frame.locator(".baton-banner").isVisible(), false, "no word of a server that stopped");
    assert.match(said, /restarts with it once the reply or compaction in progress ends/);
    await shot("e2e-settings-3-key-after-reply");
  });

  step("the next prompt goes with the new key", async () => {
    const frame = await chatFrame();
    await send(frame, "Which key now?");
    await replied(frame, "Which key now?");
  });

  step("a new API key set while the reply waits for a permission card: the panel says the restart waits for the answer; answered, the reply ends, then the server restarts", async () => {
    const frame = await chatFrame();
    fake.say("tool"); // the next turn reads README.md, which asks first
    await send(frame, "Read the README");
    const card = frame.locator(".baton-permission");
    await card.waitFor({ timeout: WAIT });
    await setApiKey(THIRD_KEY);
    const line = frame.locator(".baton-permission-restart");
    await line.waitFor({ state: "visible", timeout: WAIT });
    assert.match(
      await line.innerText(),
      /^Baton's server restarts for the changed API key once the reply in progress ends, and that reply waits for your answer here\. Stop ends it now\.$/,
    );
    await shot("e2e-settings-4-key-waits-for-card");
    await card.locator('button[data-outcome="allowOnce"]').click();
    await frame.locator("article[data-message-id]", { hasText: README_READ }).waitFor({ timeout: WAIT });
    assert.equal(await line.isVisible(), false, "the line went with the card");
    assert.equal(await frame.locator(".baton-banner").isVisible(), false, "no word of a server that stopped");
  });

  step("the prompt after it goes with the newest key; each earlier request went with the key of its time", async () => {
    const frame = await chatFrame();
    await send(frame, "And now?");
    await replied(frame, "And now?");
    const requests = await fake.stop();
    fake = undefined;
    const which = (prompt) =>
      ["Hold this reply", "Which key now?", "Read the README", "And now?"].find((p) => prompt.includes(p)) ?? (prompt === "" ? "tool result" : "other");
    const keys = requests.map((r) => [which(r.prompt), r.key]).filter(([what]) => what !== "other");
    assert.deepEqual(keys, [
      ["Hold this reply", FIRST_KEY],
      ["Which key now?", NEW_KEY],
      ["Read the README", NEW_KEY],
      ["tool result", NEW_KEY], // the reply the card held went on with the key it began with
      ["And now?", THIRD_KEY],
    ]);
  });
});
