// The fixture of the end-to-end test: a temporary data dir holding an imported session, a
// workspace, code-server with the built baton.vsix (and the API consumer) installed, and
// Debian's Chromium on its workbench. Everything lives in one temporary folder; code-server
// runs in its own process group and is always stopped with it.
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, openSync, cpSync, rmSync, writeFileSync, existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { chromium } from "playwright-core";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
export const clientDir = resolve(here, "../..");
const repoRoot = resolve(clientDir, "..");
export const resultsDir = join(clientDir, "test-results");

function need(name, path, hint) {
  if (!path || !existsSync(path)) throw new Error(`${name} not found (${path || "unset"}): ${hint}`);
  return path;
}

/** Where the tools are: scripts/test-vscode exports these; PATH is the fallback for baton. */
export async function locateTools() {
  const hint = "run scripts/test-vscode, which installs and exports it";
  let baton = process.env.BATON_SERVER_COMMAND;
  if (!baton) baton = (await run("sh", ["-c", "command -v baton"]).catch(() => ({ stdout: "" }))).stdout.trim();
  return {
    codeServer: need("code-server", process.env.BATON_CODE_SERVER, hint),
    chromium: need("chromium", process.env.BATON_CHROMIUM || "/usr/bin/chromium", "apt-get install chromium"),
    baton: need("baton", baton, "pip install -e . (the Python package) and put its venv on PATH"),
    vsix: need("baton.vsix", join(clientDir, "baton.vsix"), "npm run package in client-vscode"),
    vsce: need("vsce", join(repoRoot, "node_modules/.bin/vsce"), "npm ci at the repository root"),
  };
}

/** The dialogs and notifications the workbench shows: what a failed step's message adds. */
export async function onScreen(page) {
  const texts = await page.locator(".monaco-dialog-box, .notifications-toasts .notification-list-item").allInnerTexts();
  return texts.map((t) => t.replace(/\s+/g, " ").trim()).join(" | ");
}

/** The steps of one e2e file: `run.step(name, body)` is a test whose failure adds what the
 * workbench showed (`page()`, once it exists) and sets `run.failed`, so `after` keeps the
 * logs and a screenshot. */
export function steps(page) {
  const run = {
    failed: false,
    step: (name, body) =>
      test(name, async () => {
        try {
          await body();
        } catch (error) {
          run.failed = true;
          const current = page();
          const shown = current ? await onScreen(current).catch(() => "") : "";
          if (shown && error instanceof Error) error.message += `\non screen: ${shown}`;
          throw error;
        }
      }),
  };
  return run;
}

/** Types `text` into the quick input (opened with `key` when it is not open) until `then`
 * (given the input) succeeds within the same attempt. The quick input closes when focus
 * moves (an editor that is still opening takes it), so an attempt that loses it starts
 * over; `then` must be safe to repeat. Returns the input. */
async function typeInQuickInput(page, key, text, then, what, ms) {
  const input = page.locator(".quick-input-widget input");
  await pollUntil(what, async () => {
    if (!(await input.isVisible())) await page.keyboard.press(key);
    await input.waitFor({ state: "visible", timeout: 3000 });
    await input.fill(text, { timeout: 2000 });
    await then(input);
    return true;
  }, ms);
  return input;
}

/** The quick input's highlighted row, once it holds `text`. */
const focusedRow = (page, text, timeout) =>
  page.locator(".quick-input-list .monaco-list-row.focused", { hasText: text }).waitFor({ state: "visible", timeout });

/** Runs a palette command by its title: F1, type it, and once the highlighted row is that
 * command, Enter (once: the command must not run twice); then waits for the palette to
 * close, unless `picks` (the command asks with a quick pick of its own, left open for the
 * caller). */
export async function palette(page, title, { picks = false, ms = 30_000 } = {}) {
  const offered = () => focusedRow(page, title, 3000);
  const input = await typeInQuickInput(page, "F1", `>${title}`, offered, `the palette to offer "${title}"`, ms);
  await input.press("Enter");
  if (!picks) await input.waitFor({ state: "hidden", timeout: ms });
}

/** Opens the workspace file `name` through Quick Open (Ctrl+P) and waits for its tab to be
 * the active one. */
export async function openFile(page, name, ms = 30_000) {
  const offered = () => focusedRow(page, name, 5000);
  const input = await typeInQuickInput(page, "Control+P", name, offered, `Quick Open to offer ${name}`, ms);
  await input.press("Enter");
  await page.locator(".tabs-container .tab.active", { hasText: name }).waitFor({ state: "visible", timeout: ms });
}

/** Moves the active editor's cursor to `line` (1-based) through the palette's ":" (Go to
 * Line). */
export async function goToLine(page, line, ms = 30_000) {
  const go = (input) => input.press("Enter", { timeout: 2000 });
  await typeInQuickInput(page, "F1", `:${line}`, go, `the palette to take ":${line}"`, ms);
}

/** The first frame of `page` holding `selector` (a webview's DOM lives in a nested frame). */
export function frameWith(page, selector, what, ms = 30_000) {
  return pollUntil(what, async () => {
    for (const frame of page.frames()) {
      if ((await frame.locator(selector).count().catch(() => 0)) > 0) return frame;
    }
    return undefined;
  }, ms);
}

/** The Python that runs the e2e's fake APIs: BATON_TEST_PYTHON, else the clone's .venv's. */
export function testPython() {
  const venv = join(repoRoot, ".venv", "bin", "python");
  return process.env.BATON_TEST_PYTHON ?? (existsSync(venv) ? venv : "python3");
}

/** A scripted fake API (`script` in this folder, given a file to write its requests to):
 * its URL, `say(line)`, which writes a line to its input, and `stop()`, which answers the
 * Messages requests it got, in order. */
export async function startScriptedFake(script) {
  const requestsFile = join(mkdtempSync(join(tmpdir(), "baton-fake-")), "requests.json");
  const child = spawn(testPython(), [join(here, script), requestsFile], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((done) => child.once("exit", done));
  const baseUrl = await new Promise((resolveLine, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) => resolveLine(line.trim()));
    child.once("exit", (code) => reject(new Error(`the fake API exited (${code})`)));
  });
  return {
    baseUrl,
    say: (line) => child.stdin.write(`${line}\n`),
    stop: async () => {
      child.stdin.end();
      await exited;
      const requests = existsSync(requestsFile) ? JSON.parse(readFileSync(requestsFile, "utf8")) : [];
      rmSync(dirname(requestsFile), { recursive: true, force: true });
      return requests;
    },
  };
}

/** Probes until `probe` answers something other than undefined, every 250 ms for at most
 * `ms`; a timeout names `what` and the probe's last answer or error. */
export async function pollUntil(what, probe, ms) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last !== undefined) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, 250)); // poll interval between probes of the workbench
  }
}

export async function freePort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}

/**
 * Writes a generated session of about `tokens` (bench/sessions.py, the bench's generator)
 * into the data dir, with the Python that runs baton; returns its id and message count.
 */
export async function generateSession(fx, tokens) {
  const venvPython = join(dirname(fx.tools.baton), "python");
  const python = existsSync(venvPython) ? venvPython : "python3";
  const { stdout } = await run(python, [join(repoRoot, "bench", "sessions.py"), String(tokens), fx.dataDir], {
    cwd: repoRoot,
    timeout: 120_000,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1));
}

/** Imports the bundled example Claude Code session into a fresh data dir; returns its id and usage. */
async function importSession(baton, dataDir) {
  const example = join(repoRoot, "server/baton/examples/session.jsonl");
  const { stdout } = await run(baton, ["import", example], { env: { ...process.env, BATON_DATA_DIR: dataDir } });
  const id = /as session (\S+)/.exec(stdout);
  const usage = /Usage\s+([\d,]+) of ([\d,]+) tokens \(([\d.]+)% used/.exec(stdout);
  const count = /Messages\s+(\d+) in the view/.exec(stdout);
  if (!id || !usage || !count) throw new Error(`unexpected output of baton import:\n${stdout}`);
  const num = (s) => Number(s.replaceAll(",", ""));
  return {
    sessionId: id[1],
    usedTokens: num(usage[1]),
    contextWindow: num(usage[2]),
    percentUsed: Number(usage[3]),
    messages: Number(count[1]),
    transcript: join(dataDir, "sessions", `${id[1]}.jsonl`),
  };
}

/**
 * `options`: `env` added to code-server's (and so the server's) environment, `settings` added
 * to the user settings, `example: false` for a data dir without the imported example
 * session, `generate` (tokens) for a generated session of that size in it (`fx.generated`:
 * see generateSession), `seed` (a function given the data dir) for sessions a test writes
 * there itself before VS Code starts (`fx.seeded`: what it returns).
 */
export async function startVsCode(options = {}) {
  const tools = await locateTools();
  const root = mkdtempSync(join(tmpdir(), "baton-e2e-"));
  const fixture = { root, tools, options, proc: null, browser: null, page: null, log: join(root, "code-server.log") };
  try {
    await setUp(fixture);
  } catch (error) {
    await stopVsCode(fixture, true);
    throw error;
  }
  return fixture;
}

async function setUp(fx) {
  const { root, tools } = fx;
  const dataDir = join(root, "baton-data");
  const userDir = join(root, "user-data");
  const extDir = join(root, "extensions");
  const xdg = join(root, "xdg");
  fx.workspace = join(root, "workspace");
  fx.apiResult = join(root, "api-consumer-result.json");
  // test-results/ is shared by every test file (webview and e2e, run side by side): none
  // empties it; scripts/test-vscode does, once, before the run
  for (const dir of [dataDir, join(userDir, "User"), extDir, xdg, resultsDir]) mkdirSync(dir, { recursive: true });
  cpSync(join(repoRoot, "server/baton/examples/workspace"), fx.workspace, { recursive: true });
  writeFileSync(join(fx.workspace, "README.md"), "# expenses\n\nMonthly report from the bank's CSV export.\n");
  fx.dataDir = dataDir;
  if (fx.options.example !== false) fx.session = await importSession(tools.baton, dataDir);
  if (fx.options.generate) fx.generated = await generateSession(fx, fx.options.generate);
  if (fx.options.seed) fx.seeded = await fx.options.seed(dataDir);

  const consumerVsix = join(root, "api-consumer.vsix");
  await run(tools.vsce, ["package", "--no-dependencies", "--allow-missing-repository", "--skip-license", "-o", consumerVsix], {
    cwd: join(here, "api-consumer"),
  });

  fx.port = await freePort();
  const config = join(root, "config.yaml");
  writeFileSync(config, `bind-addr: 127.0.0.1:${fx.port}\nauth: none\ncert: false\n`);
  const env = { ...process.env, XDG_DATA_HOME: xdg, XDG_CONFIG_HOME: xdg, BATON_DATA_DIR: dataDir };
  delete env.ANTHROPIC_API_KEY;
  delete env.BATON_API_KEY;
  Object.assign(env, fx.options.env);
  const common = ["--config", config, "--user-data-dir", userDir, "--extensions-dir", extDir];
  await run(tools.codeServer, [...common, "--install-extension", tools.vsix, "--install-extension", consumerVsix], {
    env,
    timeout: 120_000,
  });
  const settings = {
    "workbench.startupEditor": "none",
    "chat.disableAIFeatures": true,
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "telemetry.telemetryLevel": "off",
    "workbench.tips.enabled": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "baton.server.command": [tools.baton, "serve"],
    "baton.dataDir": dataDir,
    "batonApiConsumer.resultFile": fx.apiResult,
    ...fx.options.settings,
  };
  writeFileSync(join(userDir, "User/settings.json"), JSON.stringify(settings, null, 2));
  // code-server's extension host is a remote one: machine-scoped settings such as
  // baton.server.command come from the remote's Machine settings, not the User ones.
  mkdirSync(join(userDir, "Machine"), { recursive: true });
  writeFileSync(join(userDir, "Machine/settings.json"), JSON.stringify(settings, null, 2));

  const logFd = openSync(fx.log, "a");
  fx.proc = spawn(
    tools.codeServer,
    [
      ...common,
      "--auth", "none", "--bind-addr", `127.0.0.1:${fx.port}`, "--disable-telemetry",
      "--disable-update-check", "--disable-workspace-trust", fx.workspace,
    ],
    { env, detached: true, stdio: ["ignore", logFd, logFd] },
  );
  fx.exited = once(fx.proc, "exit");
  killOnExit(fx.proc.pid);
  await waitForHealth(fx, 60_000);

  fx.browser = await chromium.launch({
    executablePath: tools.chromium,
    env: { ...process.env, XDG_CONFIG_HOME: xdg, XDG_CACHE_HOME: xdg }, // crash reports and caches stay in the fixture
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  fx.page = await fx.browser.newPage({ viewport: { width: 1400, height: 900 } });
  await fx.page.goto(`http://127.0.0.1:${fx.port}/?folder=${encodeURIComponent(fx.workspace)}`);
  await fx.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
}

/**
 * Changes user settings while VS Code runs, as the Settings editor would: `patch`'s keys set
 * in both settings files the fixture wrote (see setUp), which VS Code watches.
 */
export function changeSettings(fx, patch) {
  for (const file of ["User/settings.json", "Machine/settings.json"]) {
    const path = join(fx.root, "user-data", file);
    writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, "utf8")), ...patch }, null, 2));
  }
}

/** However this process ends (a test timeout, a signal), code-server's group goes with it. */
export function killOnExit(pid) {
  const kill = () => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // the group is already gone
    }
  };
  process.once("exit", kill);
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.once(signal, () => {
      kill();
      process.exit(128 + (signal === "SIGINT" ? 2 : 15));
    });
  }
}

export async function waitForHealth(fx, ms) {
  const deadline = Date.now() + ms;
  let exited = false;
  fx.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    try {
      const response = await fetch(`http://127.0.0.1:${fx.port}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200)); // poll interval of a server that has no readiness event
  }
  throw new Error(`code-server did not become healthy (${exited ? "it exited" : `${ms} ms`}); log:\n${tail(fx.log)}`);
}

export function tail(file, lines = 40) {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Stops the browser and code-server's whole process group; keeps the logs when asked. */
export async function stopVsCode(fx, keepLogs) {
  if (fx.browser) await fx.browser.close().catch(() => {});
  if (fx.proc && fx.proc.exitCode === null && fx.proc.signalCode === null) {
    const group = -fx.proc.pid;
    try {
      process.kill(group, "SIGTERM");
    } catch {
      // already gone
    }
    const stopped = await Promise.race([fx.exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]);
    if (!stopped) {
      try {
        process.kill(group, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  if (fx.proc) {
    // children of the group (extension host, baton serve) may outlive the main process
    try {
      process.kill(-fx.proc.pid, "SIGKILL");
    } catch {
      // the group is empty
    }
  }
  if (keepLogs) {
    mkdirSync(resultsDir, { recursive: true });
    if (existsSync(fx.log)) cpSync(fx.log, join(resultsDir, "code-server.log"), { force: true });
    const logs = join(fx.root, "user-data/logs");
    if (existsSync(logs)) cpSync(logs, join(resultsDir, "vscode-logs"), { recursive: true, force: true });
  }
  rmSync(fx.root, { recursive: true, force: true });
}
