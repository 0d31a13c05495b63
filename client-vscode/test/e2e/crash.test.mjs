// End to end in a real VS Code (code-server, headless Chromium): Baton's server is killed
// while a reply is being written (fake_crash_api.py holds it). The editor restarts it; the
// panel says what happened in words a person can act on, its prompt (stored before the
// server went) is not given back to be sent twice, and the next prompt gets its reply; one
// sent while the editor restarts the server waits for it.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import { frameWith, palette, pollUntil, resultsDir, startScriptedFake, startVsCode, steps, stopVsCode } from "./codeServer.mjs";

const WAIT = 60_000;
let fx;
let fake;
const run = steps(() => fx?.page);
const step = run.step;

const chatFrame = () => frameWith(fx.page, "#baton-input", "the chat webview");

/** The drawn messages' texts, in order. */
const texts = (frame) =>
  frame.locator("article[data-message-id]").evaluateAll((els) =>
    els.map((el) => (el.querySelector(".baton-message-body")?.textContent ?? "").replace(/\s+/g, " ").trim()),
  );

/** The `baton serve` processes code-server (started by this test) runs: their pids. */
function batonServers() {
  const rows = execFileSync("ps", ["-eo", "pid=,pgid=,args="], { encoding: "utf8" }).split("\n");
  return rows
    .map((row) => row.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m) => m !== null && Number(m[2]) === fx.proc.pid && / serve\b/.test(m[3]) && m[3].includes(fx.tools.baton))
    .map((m) => Number(m[1]));
}

describe("The chat panel when Baton's server crashes mid-reply (code-server)", { concurrency: false }, () => {
  before(async () => {
    fake = await startScriptedFake("fake_crash_api.py");
    fx = await startVsCode({
      env: { ANTHROPIC_BASE_URL: fake.baseUrl, ANTHROPIC_API_KEY: "sk-ant-fake-e2e-key" },
      settings: { "baton.model": "claude-sonnet-4-5" },
      example: false,
    });
  });

  after(async () => {
    if (fx) {
      if (run.failed) await fx.page?.screenshot({ path: join(resultsDir, "e2e-crash-failure.png") }).catch(() => {});
      await stopVsCode(fx, run.failed);
    }
    await fake?.stop().catch(() => []);
  });

  let killed;
  step("the server is killed while a reply is being written", async () => {
    // the Baton icon in the activity bar opens the chat (no conversation yet: its welcome)
    await fx.page.locator('.part.activitybar .action-item [aria-label^="Baton"], .part.activitybar .action-item[aria-label^="Baton"]').first().click({ timeout: WAIT });
    await fx.page.mouse.move(700, 450); // off the icon: its tooltip would cover the panel
    await palette(fx.page, "Baton: New Chat", { ms: WAIT });
    const frame = await chatFrame();
    const input = frame.locator("#baton-input");
    await input.click();
    await input.fill("Hold this reply");
    await input.press("Enter");
    await frame.getByText("Half of a").first().waitFor({ timeout: WAIT });
    const servers = batonServers();
    assert.equal(servers.length, 1, `one baton serve runs: ${servers.join(", ")}`);
    killed = servers[0];
    process.kill(killed, "SIGKILL");
  });

  step("the panel says the server stopped before it answered, and the stored prompt is not back in the box", async () => {
    const frame = await chatFrame();
    // the editor restarts it
    await pollUntil("a new baton serve", async () => (batonServers().some((pid) => pid !== killed) ? true : undefined), WAIT);
    await frame.getByRole("button", { name: "Send" }).waitFor({ timeout: WAIT });
    // the half reply was never stored: once the restarted server is read, it goes
    await frame.locator("article.baton-pending").last().waitFor({ state: "detached", timeout: WAIT });
    await pollUntil("the stored prompt in the feed", async () => ((await texts(frame)).includes("Hold this reply") ? true : undefined), WAIT);
    const banner = frame.locator(".baton-banner");
    await fx.page.screenshot({ path: join(resultsDir, "e2e-crash-after.png") });
    assert.equal(await frame.locator("#baton-input").inputValue(), "", "the prompt is in the conversation: not given back to be sent twice");
    assert.equal(await banner.isVisible(), true, "the send's failure is still said once the server is back");
    assert.match(await banner.innerText(), /Baton's server stopped before it answered/);
  });

  step("the next prompt gets its reply from the restarted server", async () => {
    const frame = await chatFrame();
    const input = frame.locator("#baton-input");
    await input.click();
    await input.fill("Are you back?");
    await input.press("Enter");
    await pollUntil("the reply after the restart", async () => {
      const now = await texts(frame);
      return now.at(-2) === "Are you back?" && now.at(-1) === "OK" ? true : undefined;
    }, WAIT);
    assert.equal(await frame.locator(".baton-banner").isVisible(), false, "the banner goes with the next send");
  });

  step("a prompt sent while the editor restarts the server waits for it, and gets its reply", async () => {
    const frame = await chatFrame();
    const before = batonServers();
    assert.equal(before.length, 1);
    process.kill(before[0], "SIGKILL");
    const input = frame.locator("#baton-input");
    await input.click();
    await input.fill("Sent during the restart");
    await input.press("Enter");
    await pollUntil("the reply from the restarted server", async () => {
      const now = await texts(frame);
      return now.at(-2) === "Sent during the restart" && now.at(-1) === "OK" ? true : undefined;
    }, WAIT);
    assert.equal(await input.inputValue(), "");
    assert.equal(await frame.locator(".baton-banner").isVisible(), false, "no \"not running\" banner: it waited");
  });
});
