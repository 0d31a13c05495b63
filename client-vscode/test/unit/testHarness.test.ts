// The protocol tests' harness finds a Python that can run the server, or says in one line
// what to set; a server that ends before it answers initialize fails the start at once.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { findPython, Server } from "../protocol/harness";
import { scratchDir } from "../scratch";

/** An executable shell script at `path`. */
function script(path: string, body: string): string {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const TRACEBACK = `echo 'Traceback (most recent call last):' >&2; echo "ModuleNotFoundError: No module named 'pygls'" >&2; exit 1`;

test("no .venv and a python3 that cannot import the server: one line saying to set BATON_TEST_PYTHON", () => {
  const bin = scratchDir("baton-harness-bin-");
  script(join(bin, "python3"), TRACEBACK);
  const repo = scratchDir("baton-harness-repo-");
  assert.throws(
    () => findPython({ PATH: bin }, repo),
    (error: Error) => {
      assert.doesNotMatch(error.message, /\n/);
      assert.match(error.message, /set BATON_TEST_PYTHON/);
      assert.match(error.message, /tried .*\.venv\/bin\/python, python3/);
      return true;
    },
  );
});

test("BATON_TEST_PYTHON that cannot import the server is named, with the error it gave", () => {
  const bin = scratchDir("baton-harness-bin-");
  const bad = script(join(bin, "python"), TRACEBACK);
  assert.throws(() => findPython({ PATH: bin, BATON_TEST_PYTHON: bad }, scratchDir("baton-harness-repo-")), (error: Error) => {
    assert.equal(error.message.split("\n").length, 1);
    assert.match(error.message, new RegExp(`BATON_TEST_PYTHON=${bad} cannot run the tests \\(ModuleNotFoundError: No module named 'pygls'\\)`));
    return true;
  });
});

test("the first Python that imports the server is taken: the repository's .venv, else the active environment's", () => {
  const bin = scratchDir("baton-harness-bin-");
  script(join(bin, "python3"), TRACEBACK);
  const repo = scratchDir("baton-harness-repo-");
  const active = scratchDir("baton-harness-venv-");
  mkdirSync(join(active, "bin"));
  const activePython = script(join(active, "bin", "python"), "exit 0");
  assert.equal(findPython({ PATH: bin, VIRTUAL_ENV: active }, repo), activePython);
  mkdirSync(join(repo, ".venv", "bin"), { recursive: true });
  const venv = script(join(repo, ".venv", "bin", "python"), "exit 0");
  assert.equal(findPython({ PATH: bin, VIRTUAL_ENV: active }, repo), venv);
});

test("a server that ends before answering initialize fails the start with its last line of stderr", async (t) => {
  const bin = scratchDir("baton-harness-bin-");
  const before = process.env.BATON_SERVER_COMMAND;
  process.env.BATON_SERVER_COMMAND = script(join(bin, "baton"), `echo "baton: cannot start: no such setting" >&2; exit 3`);
  t.after(() => {
    if (before === undefined) delete process.env.BATON_SERVER_COMMAND;
    else process.env.BATON_SERVER_COMMAND = before;
  });
  await assert.rejects(Server.start(), /ended \(3\) before initialize was answered: baton: cannot start: no such setting/);
});
