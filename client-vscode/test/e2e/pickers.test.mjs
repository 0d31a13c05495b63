// End to end in a real VS Code (code-server, headless Chromium), without an API key: the
// panel's model picker offers the configured models with their windows, and choosing one
// moves the meter and the draft's "after sending" figure to the new window (so does
// "Baton: Switch Model" from the palette, which lists the same models); the session
// picker lists the sessions with their size and source, searches them by title, renames one
// (a record appended to its transcript), deletes one after a confirmation (its file stays),
// and starts a New Chat.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import { frameWith, generateSession, palette, pollUntil, resultsDir, startVsCode, steps, stopVsCode } from "./codeServer.mjs";

const WAIT = 30_000;
const METER = '#workbench\\.parts\\.statusbar .statusbar-item[id$="baton.meter"]';
const RENAMED = "Benchmark, renamed in the picker";
let fx;
const run = steps(() => fx?.page);
const step = run.step;
let extra; // a second session, generated into the data dir: renamed, then deleted

const until = (what, probe, ms = WAIT) => pollUntil(what, probe, ms);

async function shot(name) {
  await fx.page.screenshot({ path: join(resultsDir, `${name}.png`) });
}

/** The chat webview's frame, found by its input box. */
const chatFrame = () => frameWith(fx.page, "#baton-input", "the chat webview");

const transcript = (sessionId) => join(fx.dataDir, "sessions", `${sessionId}.jsonl`);
const lastRecord = (sessionId) => JSON.parse(readFileSync(transcript(sessionId), "utf8").trim().split("\n").at(-1));

describe("the panel's model and session pickers in VS Code (code-server)", { concurrency: false }, () => {
  before(async () => {
    fx = await startVsCode({
      settings: { "baton.models": ["claude-opus-5", "claude-haiku-4-5"] },
      keepResults: true,
    });
    extra = await generateSession(fx, 20_000);
  });

  after(async () => {
    if (fx) {
      if (run.failed) await shot("e2e-pickers-failure").catch(() => {});
      await stopVsCode(fx, run.failed);
    }
  });


  step("the model picker offers the configured models with their windows, the current one marked", async () => {
    await fx.page.locator(METER).click({ timeout: 60_000 });
    const frame = await chatFrame();
    const opener = frame.locator(".baton-session-button");
    await until("a session in the panel", async () => ((await opener.textContent().catch(() => "")) ? true : undefined));
    await frame.getByRole("button", { name: /^Session:/ }).click();
    const search = frame.getByRole("searchbox", { name: "Search sessions" });
    await search.fill("March bank export");
    await frame.locator(".baton-session-row", { hasText: "Imported from session.jsonl" }).first().waitFor({ timeout: WAIT });
    await search.press("Enter");
    await until("the imported session shown", async () =>
      (await frame.locator(`[data-message-id]`).count()) > 0 && !(await frame.locator(".baton-session-picker").isVisible()) ? true : undefined,
    );
    // a draft, so its "after sending" figure is there to follow the switch
    await frame.locator("#baton-input").fill("How far is the report from done?");
    const draftLine = frame.locator(".baton-draft-usage");
    await until("the draft's figure against the 200K window", async () => ((await draftLine.innerText()).includes("200K") ? true : undefined));
    const model = frame.locator(".baton-model-button");
    assert.match(await model.textContent(), /· 200K$/);
    await model.click();
    const rows = frame.getByRole("menuitemradio");
    await rows.first().waitFor({ timeout: WAIT });
    const picker = frame.locator(".baton-model-picker");
    assert.match(await picker.innerText(), /Configured models: no Anthropic API key/);
    const ids = await frame.locator(".baton-model-row").evaluateAll((els) => els.map((e) => e.getAttribute("data-model")));
    // the session's own model first (no list names it), then the setting, then baton.model
    assert.deepEqual(ids.slice(1), ["claude-opus-5", "claude-haiku-4-5", "claude-sonnet-5-5"]);
    assert.equal(await frame.locator('.baton-model-row[aria-checked="true"]').getAttribute("data-model"), ids[0]);
    assert.match(await frame.locator('.baton-model-row[data-model="claude-opus-5"]').innerText(), /1M window/);
    assert.match(await frame.locator('.baton-model-row[data-model="claude-haiku-4-5"]').innerText(), /200K window/);
    await shot("e2e-pickers-1-models");
  });

  step("choosing a model moves the meter and the draft's figure to its window", async () => {
    const frame = await chatFrame();
    const before = (await fx.page.locator(METER).innerText()).trim();
    assert.match(before, /\/200K/);
    await frame.locator('.baton-model-row[data-model="claude-opus-5"]').click();
    await until("the header on the new model", async () =>
      (await frame.locator(".baton-model-button").textContent()) === "opus-5 · 1M" ? true : undefined,
    );
    const after = await until("the meter on the 1M window", async () => {
      const text = (await fx.page.locator(METER).innerText()).trim();
      return text.includes("/1M") ? text : undefined;
    });
    assert.notEqual(after, before);
    await until("the draft's figure on the 1M window", async () =>
      (await frame.locator(".baton-draft-usage").innerText()).includes("1M") ? true : undefined,
    );
    await frame.locator(".baton-model-button").click();
    await frame.getByRole("menuitemradio").first().waitFor({ timeout: WAIT });
    assert.equal(await frame.locator('.baton-model-row[aria-checked="true"]').getAttribute("data-model"), "claude-opus-5");
    await shot("e2e-pickers-2-switched");
    await fx.page.keyboard.press("Escape");
    await frame.locator(".baton-model-picker").waitFor({ state: "hidden", timeout: WAIT });
  });

  step("Baton: Switch Model from the palette offers the same models with their windows", async () => {
    const input = fx.page.locator(".quick-input-widget input");
    await palette(fx.page, "Baton: Switch Model", { picks: true });
    const haiku = fx.page.locator(".quick-input-list .monaco-list-row", { hasText: "claude-haiku-4-5" });
    await haiku.first().waitFor({ timeout: WAIT });
    assert.match(await haiku.first().innerText(), /200,000-token window/);
    const opus = fx.page.locator(".quick-input-list .monaco-list-row", { hasText: "claude-opus-5" });
    assert.match(await opus.first().innerText(), /1,000,000-token window \(current\)/);
    await shot("e2e-pickers-2b-palette");
    await input.fill("haiku");
    await haiku.first().waitFor({ timeout: WAIT });
    await input.press("Enter");
    const frame = await chatFrame();
    await until("the header on haiku", async () =>
      (await frame.locator(".baton-model-button").textContent()) === "haiku-4-5 · 200K" ? true : undefined,
    );
    await until("the meter on the 200K window", async () =>
      (await fx.page.locator(METER).innerText()).includes("/200K") ? true : undefined,
    );
  });

  step("the session picker lists sizes and sources, searches, and renames a session", async () => {
    const frame = await chatFrame();
    await frame.locator(".baton-session-button").click();
    const rows = frame.locator(".baton-session-row");
    const bench = rows.filter({ hasText: "Benchmark session" });
    await bench.first().waitFor({ timeout: WAIT });
    assert.ok((await rows.count()) >= 2);
    const imported = rows.filter({ hasText: "Imported from session.jsonl" });
    assert.match(await imported.innerText(), /[\d.]+K tokens/);
    assert.match(await bench.innerText(), /size unknown|[\d.]+K tokens/);
    await shot("e2e-pickers-3-sessions");
    const search = frame.getByRole("searchbox", { name: "Search sessions" });
    await search.fill("benchmark");
    await until("the search to leave one row", async () => ((await rows.count()) === 1 ? true : undefined));
    await frame.getByRole("button", { name: /^Rename "Benchmark session/ }).click();
    const title = frame.getByRole("textbox", { name: "New title" });
    await title.fill(RENAMED);
    await title.press("Enter");
    await until("the renamed row", async () => ((await rows.filter({ hasText: RENAMED }).count()) === 1 ? true : undefined));
    const record = lastRecord(extra.sessionId);
    assert.equal(record.type, "meta");
    assert.equal(record.title, RENAMED);
    await shot("e2e-pickers-4-renamed");
  });

  step("deleting asks first; the session leaves the list and its file stays", async () => {
    const frame = await chatFrame();
    const rows = frame.locator(".baton-session-row");
    const search = frame.getByRole("searchbox", { name: "Search sessions" });
    if (!(await search.isVisible())) await frame.locator(".baton-session-button").click();
    await search.fill("");
    await frame.getByRole("button", { name: `Delete "${RENAMED}"` }).click();
    const confirm = frame.locator(".baton-session-confirm");
    assert.match(await confirm.innerText(), /its transcript stays on disk/);
    await shot("e2e-pickers-5-confirm-delete");
    await confirm.getByRole("button", { name: "Delete" }).click();
    await frame.locator(".baton-session-button").click();
    await until("the list without it", async () =>
      (await rows.count()) > 0 && (await rows.filter({ hasText: RENAMED }).count()) === 0 ? true : undefined,
    );
    assert.ok(existsSync(transcript(extra.sessionId)), "the transcript stays on disk");
    assert.equal(lastRecord(extra.sessionId).type, "deleted");
  });

  step("New Chat from the picker opens an empty session", async () => {
    const frame = await chatFrame();
    const picker = frame.locator(".baton-session-picker");
    if (!(await picker.isVisible())) await frame.locator(".baton-session-button").click();
    await picker.getByRole("button", { name: "New Chat" }).click();
    await until("the new chat", async () =>
      (await frame.locator(".baton-session-button").textContent()) === "New conversation" &&
      (await frame.locator("[data-message-id]").count()) === 0
        ? true
        : undefined,
    );
    await frame.locator(".baton-session-button").click();
    await frame.locator(".baton-session-row", { hasText: "New conversation" }).first().waitFor({ timeout: WAIT });
    assert.match(await frame.locator('.baton-session-row[aria-current="true"]').innerText(), /New conversation/);
    await shot("e2e-pickers-6-new-chat");
    await fx.page.keyboard.press("Escape");
  });
});
