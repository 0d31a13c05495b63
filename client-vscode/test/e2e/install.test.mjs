// One install, end to end: a fresh folder, only Debian's python3 (no virtual environment,
// no baton anywhere on PATH, no Baton setting), and this platform's baton-<target>.vsix
// installed into code-server. The panel starts the server the package carries and imports a
// Claude Code session with no other step.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { chromium } from "playwright-core";
import { clientDir, freePort, killOnExit, palette, pollUntil, resultsDir, steps, stopVsCode, waitForHealth } from "./codeServer.mjs";

const WAIT = 30_000;
const PYTHON = "/usr/bin/python3"; // Debian's, the only Python this test lets the extension see
const SYSTEM_PATH = "/usr/bin:/bin";
const TARGET = `${process.platform}-${process.arch}`;
const METER = '#workbench\\.parts\\.statusbar .statusbar-item[id$="baton.meter"]';
const repoRoot = resolve(clientDir, "..");
let fx;
const run = steps(() => fx?.page);
const step = run.step;

const until = (what, probe, ms = WAIT) => pollUntil(what, probe, ms);

/** Every file under `dir` (the workbench's logs). */
function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

/** The lines of the extension's Output log (Baton's log channel) that match `pattern`. */
function logLines(pattern) {
  return files(join(fx.root, "user-data", "logs"))
    .filter((f) => f.endsWith(".log"))
    .flatMap((f) => readFileSync(f, "utf8").split("\n"))
    .filter((line) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[info\] (starting|running) /.test(line))
    .filter((line) => pattern.test(line));
}

async function start() {
  const codeServer = process.env.BATON_CODE_SERVER;
  assert.ok(codeServer && existsSync(codeServer), "BATON_CODE_SERVER (scripts/test-vscode exports it)");
  const vsix = join(clientDir, `baton-${TARGET}.vsix`);
  assert.ok(existsSync(vsix), `${vsix} (npm run package builds it)`);
  const root = mkdtempSync(join(tmpdir(), "baton-install-"));
  const f = { root, proc: null, browser: null, page: null, log: join(root, "code-server.log") };
  fx = f;
  const home = join(root, "home");
  const xdg = join(root, "xdg");
  const userDir = join(root, "user-data");
  const extDir = join(root, "extensions");
  f.workspace = join(root, "workspace");
  for (const dir of [home, xdg, join(userDir, "User"), join(userDir, "Machine"), extDir, f.workspace]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(f.workspace, "README.md"), "# expenses\n");
  f.sessionFile = join(f.workspace, "claude-session.jsonl");
  cpSync(join(repoRoot, "server/baton/examples/session.jsonl"), f.sessionFile);
  // the whole environment the workbench (and so the extension and its server) gets
  const env = { PATH: SYSTEM_PATH, HOME: home, XDG_DATA_HOME: xdg, XDG_CONFIG_HOME: xdg, XDG_CACHE_HOME: xdg, LANG: "C.UTF-8" };
  f.env = env;
  const settings = {
    "workbench.startupEditor": "none",
    "chat.disableAIFeatures": true,
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "telemetry.telemetryLevel": "off",
    "workbench.tips.enabled": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "files.simpleDialog.enable": true,
  };
  writeFileSync(join(userDir, "User/settings.json"), JSON.stringify(settings, null, 2));
  writeFileSync(join(userDir, "Machine/settings.json"), JSON.stringify(settings, null, 2));
  f.port = await freePort();
  const config = join(root, "config.yaml");
  writeFileSync(config, `bind-addr: 127.0.0.1:${f.port}\nauth: none\ncert: false\n`);
  // code-server is a Node script: run it by this Node, so that PATH needs no node
  const script = realpathSync(codeServer);
  const common = [script, "--config", config, "--user-data-dir", userDir, "--extensions-dir", extDir];
  execFileSync(process.execPath, [...common, "--install-extension", vsix], { env, timeout: 120_000, stdio: "ignore" });
  const logFd = openSync(f.log, "a");
  f.proc = spawn(
    process.execPath,
    [...common, "--auth", "none", "--bind-addr", `127.0.0.1:${f.port}`, "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", f.workspace],
    { env, detached: true, stdio: ["ignore", logFd, logFd] },
  );
  f.exited = once(f.proc, "exit");
  killOnExit(f.proc.pid);
  await waitForHealth(f, 60_000);
  f.browser = await chromium.launch({
    executablePath: process.env.BATON_CHROMIUM || "/usr/bin/chromium",
    env: { ...process.env, XDG_CONFIG_HOME: xdg, XDG_CACHE_HOME: xdg },
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  f.page = await f.browser.newPage({ viewport: { width: 1400, height: 900 } });
  f.opened = Date.now();
  await f.page.goto(`http://127.0.0.1:${f.port}/?folder=${encodeURIComponent(f.workspace)}`);
  await f.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
}

describe("one install: the platform package brings its own server", { concurrency: false }, () => {
  before(async () => {
    // what makes this a fresh machine: nothing else could be the server that runs
    for (const dir of SYSTEM_PATH.split(":")) assert.ok(!existsSync(join(dir, "baton")), `${dir}/baton must not exist for this test`);
    assert.throws(() => execFileSync(PYTHON, ["-c", "import baton"], { stdio: "ignore", env: { PATH: SYSTEM_PATH } }), "Debian's python3 has no baton");
    await start();
  });

  after(async () => {
    if (fx) {
      if (run.failed) {
        mkdirSync(resultsDir, { recursive: true });
        await fx.page?.screenshot({ path: join(resultsDir, "install-failure.png") }).catch(() => {});
      }
      await stopVsCode(fx, run.failed);
    }
  });


  step("the extension starts the bundled server on python3 and says which one runs", async () => {
    const running = await until("the log line of the running server", async () => logLines(/running Baton /)[0], 90_000);
    const version = JSON.parse(readFileSync(join(clientDir, "package.json"), "utf8")).version;
    assert.match(running, new RegExp(`running Baton ${version.replaceAll(".", "\\.")} from the bundled server \\(Python 3\\.\\d+, ${PYTHON}\\)`));
    const starting = logLines(/starting .* -s -m baton serve/)[0];
    assert.ok(starting, "the log says what it starts");
    const stamp = (line) => Date.parse(line.slice(0, 23).replace(" ", "T"));
    console.log(`first start: ${stamp(running) - stamp(starting)} ms from spawn to initialized, ${Date.now() - fx.opened} ms since the page opened`);
    await fx.page.locator(METER).waitFor({ state: "visible", timeout: WAIT });
    await fx.page.locator(METER).hover();
    const hover = fx.page.locator(".monaco-hover, .workbench-hover", { hasText: "Server: Baton" }).first();
    await hover.waitFor({ state: "visible", timeout: WAIT });
    assert.match(await hover.innerText(), /from the bundled server/);
    await fx.page.mouse.move(10, 450);
  });

  step("Import Claude Code Session imports the file and the panel shows it", async () => {
    const input = fx.page.locator(".quick-input-widget input");
    await palette(fx.page, "Baton: Import Claude Code Session", { picks: true });
    // VS Code's own file dialog (a quick input holding a path): type the file's path
    await until("the open dialog", async () => ((await input.isVisible()) && (await input.inputValue()).startsWith("/") ? true : undefined));
    await input.fill(fx.sessionFile);
    await input.press("Enter");
    const frame = await until(
      "the chat webview showing the imported session",
      async () => {
        for (const frame of fx.page.frames()) {
          if ((await frame.locator("[data-message-id]").count().catch(() => 0)) > 0) return frame;
        }
        return undefined;
      },
      90_000,
    );
    // the feed draws the end of a long session first (virtualized): its last prompt shows
    await frame.getByText("What happens if a row has no category at all?").first().waitFor({ timeout: WAIT });
    await fx.page.locator(".notifications-toasts", { hasText: "Baton: imported" }).first().waitFor({ timeout: WAIT });
    const sessions = join(fx.env.XDG_DATA_HOME, "baton", "sessions");
    assert.ok(existsSync(sessions) && readdirSync(sessions).some((n) => n.endsWith(".jsonl") && statSync(join(sessions, n)).size > 0), `a transcript in ${sessions}`);
    mkdirSync(resultsDir, { recursive: true });
    await fx.page.screenshot({ path: join(resultsDir, "install-imported.png") });
  });
});
