import assert from "node:assert/strict";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { advertisedContract, bundlePythonPath, contractProblem, readBundle, serverName, type Bundle, type ServerHello } from "../../src/bundledServer";
import { CONTRACT_VERSION } from "../../src/protocol";
import { scratchDir } from "../scratch";
import { findOnPath, notFoundMessage, parseConfigured, resolveLaunch } from "../../src/serverLaunch";

function binDir(...names: string[]): string {
  const dir = scratchDir("baton-launch-");
  for (const name of names) {
    const path = join(dir, name);
    writeFileSync(path, "#!/bin/sh\nexit 0\n");
    chmodSync(path, 0o755);
  }
  return dir;
}

const never = async (): Promise<boolean> => false;
const always = async (): Promise<boolean> => true;

test("the setting must be an array of strings", () => {
  assert.deepEqual(parseConfigured(undefined), []);
  assert.deepEqual(parseConfigured([]), []);
  assert.deepEqual(parseConfigured(["/venv/bin/baton", "serve"]), ["/venv/bin/baton", "serve"]);
  assert.ok("error" in (parseConfigured("baton serve") as object));
  assert.ok("error" in (parseConfigured(["baton", 3]) as object));
  assert.ok("error" in (parseConfigured(["", "serve"]) as object));
});

test("findOnPath finds executables only, in PATH order", () => {
  const first = binDir("baton");
  const second = binDir("baton");
  const plain = scratchDir("baton-launch-");
  writeFileSync(join(plain, "baton"), "not executable");
  mkdirSync(join(plain, "dir-baton"));
  const env = { PATH: [plain, first, second].join(":") };
  assert.equal(findOnPath("baton", env, "linux"), join(first, "baton"));
  assert.equal(findOnPath("dir-baton", env, "linux"), undefined);
  assert.equal(findOnPath("baton", { PATH: plain }, "linux"), undefined);
});

test("a configured command wins and is resolved on PATH", async () => {
  const dir = binDir("my-baton", "baton");
  const result = await resolveLaunch({
    configured: ["my-baton", "serve", "--verbose"],
    pythonPath: "/usr/bin/python3",
    env: { PATH: dir },
    platform: "linux",
    pythonHasBaton: always,
  });
  assert.deepEqual(result, {
    ok: true,
    launch: { command: join(dir, "my-baton"), args: ["serve", "--verbose"], source: "the baton.server.command setting" },
  });
});

test("a configured command that is not there fails without falling back", async () => {
  const dir = binDir("baton");
  const result = await resolveLaunch({
    configured: ["/nowhere/baton", "serve"],
    pythonPath: "/usr/bin/python3",
    env: { PATH: dir },
    platform: "linux",
    pythonHasBaton: always,
  });
  assert.equal(result.ok, false);
  assert.match((result as { tried: string[] }).tried.join(), /\/nowhere\/baton is not an executable file/);
});

test("the Python extension's interpreter comes next, as python -m baton serve", async () => {
  const dir = binDir("baton");
  const result = await resolveLaunch({ configured: [], pythonPath: "/venv/bin/python", env: { PATH: dir }, platform: "linux", pythonHasBaton: always });
  assert.deepEqual(result, {
    ok: true,
    launch: { command: "/venv/bin/python", args: ["-m", "baton", "serve"], source: "the Python extension's interpreter" },
  });
});

test("an interpreter without baton falls back to baton on PATH", async () => {
  const dir = binDir("baton");
  const result = await resolveLaunch({ configured: [], pythonPath: "/venv/bin/python", env: { PATH: dir }, platform: "linux", pythonHasBaton: never });
  assert.deepEqual(result, { ok: true, launch: { command: join(dir, "baton"), args: ["serve"], source: "PATH" } });
});

test("when nothing works, the message lists every attempt and how to install", async () => {
  const empty = scratchDir("baton-launch-");
  const result = await resolveLaunch({ configured: [], pythonPath: "/venv/bin/python", env: { PATH: empty }, platform: "linux", pythonHasBaton: never });
  assert.equal(result.ok, false);
  const tried = (result as { tried: string[] }).tried;
  assert.equal(tried.length, 2);
  const message = notFoundMessage(tried);
  assert.match(message, /\/venv\/bin\/python -m baton serve/);
  assert.match(message, /no baton executable on PATH/);
  assert.match(message, /baton\.server\.command/);
  // no package index has Baton: the message says what works from a clone (README, Set-up)
  assert.doesNotMatch(message, /pip install baton-lsp/);
  assert.match(message, /clone/);
  assert.match(message, /Install the Baton package for your platform/);
  assert.match(message, /pipx install <clone>/);
});

test("without the Python extension the attempt says so", async () => {
  const empty = scratchDir("baton-launch-");
  const result = await resolveLaunch({ configured: undefined, pythonPath: undefined, env: { PATH: empty }, platform: "linux" });
  assert.match((result as { tried: string[] }).tried[0] ?? "", /none selected, or the extension is not installed/);
});

// ---- the bundled server of a platform package ----------------------------------------

const bundle: Bundle = { dir: "/ext/bundled", target: "linux-x64", batonVersion: "0.1.0", pythons: ["3.11", "3.12", "3.13", "3.14"] };
const versions =
  (table: Record<string, string>) =>
  async (python: string): Promise<string | undefined> =>
    table[python];

test("a platform package runs its bundled server on the selected interpreter, before PATH", async () => {
  const dir = binDir("baton", "python3");
  const result = await resolveLaunch({
    configured: [],
    pythonPath: "/venv/bin/python",
    env: { PATH: dir },
    platform: "linux",
    bundle,
    pythonHasBaton: always,
    pythonVersion: versions({ "/venv/bin/python": "3.12" }),
  });
  assert.deepEqual(result, {
    ok: true,
    launch: {
      command: "/venv/bin/python",
      args: ["-s", "-m", "baton", "serve"],
      env: { PYTHONPATH: "/ext/bundled/libs/cp312:/ext/bundled/libs/common", PYTHONNOUSERSITE: "1" },
      source: "the bundled server (Python 3.12, /venv/bin/python)",
    },
  });
});

test("the setting still wins over the bundled server", async () => {
  const dir = binDir("my-baton");
  const result = await resolveLaunch({ configured: ["my-baton", "serve"], pythonPath: undefined, env: { PATH: dir }, platform: "linux", bundle });
  assert.equal(result.ok && result.launch.source, "the baton.server.command setting");
});

test("a selected interpreter too old for the bundle gives way to python3 on PATH", async () => {
  const dir = binDir("python3");
  const python3 = join(dir, "python3");
  const result = await resolveLaunch({
    configured: [],
    pythonPath: "/old/bin/python",
    env: { PATH: dir },
    platform: "linux",
    bundle,
    pythonVersion: versions({ "/old/bin/python": "3.10", [python3]: "3.11" }),
  });
  assert.ok(result.ok);
  assert.equal(result.launch.command, python3);
  assert.equal(result.launch.env?.PYTHONPATH, "/ext/bundled/libs/cp311:/ext/bundled/libs/common");
});

test("with no Python the bundle can use, baton on PATH runs; without it the message says which Python is needed", async () => {
  const dir = binDir("python3", "baton");
  const python3 = join(dir, "python3");
  const probe = versions({ [python3]: "3.10" });
  const withBaton = await resolveLaunch({ configured: [], pythonPath: undefined, env: { PATH: dir }, platform: "linux", bundle, pythonVersion: probe });
  assert.deepEqual(withBaton.ok && withBaton.launch, { command: join(dir, "baton"), args: ["serve"], source: "PATH" });
  const bare = binDir("python3");
  const none = await resolveLaunch({
    configured: [],
    pythonPath: undefined,
    env: { PATH: bare },
    platform: "linux",
    bundle,
    pythonVersion: versions({ [join(bare, "python3")]: "3.10" }),
  });
  assert.equal(none.ok, false);
  const tried = (none as { tried: string[] }).tried;
  assert.match(tried[0] ?? "", /Python 3\.10; it needs Python 3\.11 to 3\.14/);
  const message = notFoundMessage(tried, true);
  assert.match(message, /Install Python 3\.11 or newer/);
  assert.match(message, /Restart Server/);
  assert.doesNotMatch(message, /pip install baton-lsp/);
});

test("on Windows the bundle's libraries are joined with ;", () => {
  assert.equal(bundlePythonPath({ ...bundle, dir: "C:\\ext\\bundled" }, "3.13", "win32").split(";").length, 2);
});

test("readBundle reads the platform package's bundle.json and nothing else", () => {
  const ext = scratchDir("baton-ext-");
  assert.equal(readBundle(ext), undefined);
  mkdirSync(join(ext, "bundled"));
  writeFileSync(join(ext, "bundled", "bundle.json"), "{not json");
  assert.equal(readBundle(ext), undefined);
  writeFileSync(join(ext, "bundled", "bundle.json"), JSON.stringify({ target: "linux-x64", batonVersion: "0.1.0", pythons: ["3.11"], wheels: {} }));
  assert.deepEqual(readBundle(ext), { dir: join(ext, "bundled"), target: "linux-x64", batonVersion: "0.1.0", pythons: ["3.11"] });
});

// ---- the contract check of whatever server started -------------------------------------

const hello = (contract: unknown): ServerHello => ({
  serverInfo: { name: "baton", version: "0.0.9" },
  capabilities: contract === undefined ? {} : { experimental: { baton: { contractVersion: contract } } },
});

test("a server at the extension's contract, or newer, is used", () => {
  assert.equal(contractProblem(hello(CONTRACT_VERSION), "PATH"), undefined);
  assert.equal(contractProblem(hello(CONTRACT_VERSION + 1), "PATH"), undefined);
});

test("an older server is refused with how to update it, by where it came from", () => {
  const old = contractProblem(hello(undefined), "the baton.server.command setting", 1);
  assert.match(old ?? "", /Baton 0\.0\.9 from the baton\.server\.command setting speaks contract 0; this extension needs contract 1/);
  assert.match(old ?? "", /clear baton\.server\.command to use the server this extension carries/);
  assert.match(contractProblem(hello(1), "PATH", 2) ?? "", /update the baton on PATH .*pipx install --force/);
  assert.match(contractProblem(hello("1"), "PATH", 1) ?? "", /speaks contract 0/);
  assert.equal(advertisedContract(undefined), 0);
  assert.equal(serverName({ serverInfo: { name: "baton" } }), "Baton (version unknown)");
});
