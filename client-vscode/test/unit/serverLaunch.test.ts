import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { findOnPath, notFoundMessage, parseConfigured, resolveLaunch } from "../../src/serverLaunch";

function binDir(...names: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "baton-launch-"));
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
  const plain = mkdtempSync(join(tmpdir(), "baton-launch-"));
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
  const empty = mkdtempSync(join(tmpdir(), "baton-launch-"));
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
  assert.match(message, /python3 -m venv \.venv && \. \.venv\/bin\/activate && pip install -e \./);
});

test("without the Python extension the attempt says so", async () => {
  const empty = mkdtempSync(join(tmpdir(), "baton-launch-"));
  const result = await resolveLaunch({ configured: undefined, pythonPath: undefined, env: { PATH: empty }, platform: "linux" });
  assert.match((result as { tried: string[] }).tried[0] ?? "", /none selected, or the extension is not installed/);
});
