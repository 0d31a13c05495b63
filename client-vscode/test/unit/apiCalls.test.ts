import assert from "node:assert/strict";
import { test } from "node:test";
import type { BatonApi } from "../../src/api";
import { batonApi, type ApiPorts } from "../../src/apiCalls";
import { errorCode } from "../../src/rpc";
import { session, usage } from "./fixtures";

/** The API over a fake server that records what reached it. */
function setup(): { api: BatonApi; calls: string[]; followed: string[] } {
  const calls: string[] = [];
  const followed: string[] = [];
  const ports: ApiPorts = {
    rpc: {
      createSession: async (options) => {
        calls.push(`create ${JSON.stringify(options)}`);
        return session("s1", "2026-12-01T10:00:00Z");
      },
      append: async (id) => {
        calls.push(`append ${id}`);
        return { messageIds: ["m1"], usage: usage({ sessionId: id }), repairs: [] };
      },
      getSession: async (id) => {
        calls.push(`get ${id}`);
        return { session: session(id, "2026-12-01T10:00:00Z"), messages: [], usage: usage({ sessionId: id }) };
      },
      usage: async (id) => {
        calls.push(`usage ${id}`);
        return usage({ sessionId: id });
      },
      compact: async (id, options) => {
        calls.push(`compact ${id} ${JSON.stringify(options)}`);
        const dryRun = options?.dryRun === true;
        return { boundaryId: "bnd_1", direction: "all", summary: dryRun ? null : "s", summarizedMessageIds: ["m1"], keptMessageIds: [], restoredFiles: [], skippedFiles: [], preTokens: 9, postTokens: 3, trigger: "manual", summarizer: "extractive", dryRun, warnings: [] };
      },
      uncompact: async (id) => {
        calls.push(`uncompact ${id}`);
        return { usage: usage({ sessionId: id }) };
      },
    },
    onDidChangeUsage: (...args: unknown[]) => {
      calls.push(`listen ${args.length}`);
      return { dispose: () => undefined };
    },
    compactWithProgress: (run) => run({}),
    follow: (id) => followed.push(id),
  };
  return { api: batonApi(ports), calls, followed };
}

/** Calls the API as a JavaScript caller may: with arguments its types do not allow. */
function untyped(api: BatonApi): Record<string, (...args: unknown[]) => unknown> {
  return api as unknown as Record<string, (...args: unknown[]) => unknown>;
}

test("bad arguments to the API are refused with an error that names them, nothing sent", async () => {
  const { api, calls, followed } = setup();
  const call = untyped(api);
  const refused: [string, unknown[], RegExp][] = [
    ["createSession", [null], /createSession: options must be an object/],
    ["createSession", ["My chat"], /createSession: options must be an object/],
    ["append", ["s1", "hello"], /append: messages must be an array/],
    ["append", ["", []], /append: sessionId must be a non-empty string/],
    ["append", ["s1", [], "ctx"], /append: clientContext must be an object/],
    ["getView", [42], /getView: sessionId must be a non-empty string/],
    ["getUsage", [undefined], /getUsage: sessionId must be a non-empty string/],
    ["compact", ["s1", null], /compact: options must be an object/],
    ["compact", ["s1", "all"], /compact: options must be an object/],
    ["uncompact", ["s1", 7], /uncompact: boundaryId must be a non-empty string/],
    // a key the server does not know it leaves out: misspelt, it went unsaid
    ["compact", ["s1", { dryrun: true }], /compact: options has no "dryrun" \(it takes direction, pivotMessageId, endMessageId, instructions, dryRun\)/],
    ["compact", ["s1", { direction: "all", sessionId: "s2" }], /compact: options has no "sessionId"/],
    ["createSession", [{ titel: "x", system: "y" }], /createSession: options has no "titel", "system" \(it takes title, systemPrompt, model, clientContext\)/],
    ["createSession", [{ clientContext: { systemPromptTokens: 10 } }], /createSession: clientContext has no "systemPromptTokens"/],
    ["createSession", [{ clientContext: 5 }], /createSession: clientContext must be an object/],
    ["append", ["s1", [], { toolTokens: 10 }], /append: clientContext has no "toolTokens" \(it takes systemTokens, toolsTokens, system, tools\)/],
  ];
  for (const [name, args, expected] of refused) {
    let outcome: unknown;
    try {
      // a refusal is a rejected promise, never a throw out of the call itself
      const pending = call[name]!(...args) as Promise<unknown>;
      await pending.then(() => assert.fail(`${name} took ${JSON.stringify(args)}`), (error: unknown) => (outcome = error));
    } catch (error) {
      assert.fail(`${name}(${JSON.stringify(args)}) threw instead of rejecting: ${String(error)}`);
    }
    assert.ok(outcome instanceof Error, name);
    assert.match(outcome.message, /^Baton API: /, name);
    assert.match(outcome.message, expected, name);
    assert.equal(errorCode(outcome), "invalid_params", name);
  }
  assert.deepEqual(calls, [], "nothing reached the server");
  assert.deepEqual(followed, []);
});

test("arguments JSON cannot carry are refused with an error that names them, nothing sent", async () => {
  // vscode-jsonrpc's writer fails on them with an error the LanguageClient takes for a broken
  // connection, and stops the server: one bad call from another extension stopped Baton
  const { api, calls, followed } = setup();
  const call = untyped(api);
  const cycle: Record<string, unknown> = { role: "user" };
  cycle.content = [cycle];
  const throwing = { toJSON: () => { throw new Error("not today"); } };
  const refused: [string, unknown[], RegExp][] = [
    ["append", ["s1", [{ role: "user", content: 1n }]], /append: messages cannot be sent as JSON \(Do not know how to serialize a BigInt\)/],
    ["append", ["s1", [cycle]], /append: messages cannot be sent as JSON \(Converting circular structure to JSON\)/],
    ["append", ["s1", [], { systemTokens: 10n }], /append: clientContext cannot be sent as JSON/],
    ["createSession", [{ title: throwing }], /createSession: options cannot be sent as JSON \(not today\)/],
    ["compact", ["s1", { instructions: 2n }], /compact: options cannot be sent as JSON/],
  ];
  // JSON has no NaN or Infinity: sent, each went as null, which the server takes for "not given"
  // (a tools size of NaN counted nothing, and nothing said so)
  const nonFinite: [string, unknown[], RegExp][] = [
    ["append", ["s1", [], { toolsTokens: Number.NaN }], /append: clientContext cannot be sent as JSON \("toolsTokens" is NaN, which JSON cannot carry\)/],
    ["createSession", [{ clientContext: { systemTokens: Infinity } }], /createSession: options cannot be sent as JSON \("systemTokens" is Infinity/],
    ["append", ["s1", [{ role: "user", content: [{ type: "image", width: -Infinity }] }]], /append: messages cannot be sent as JSON \("width" is -Infinity/],
  ];
  refused.push(...nonFinite);
  for (const [name, args, expected] of refused) {
    const error = await (call[name]!(...args) as Promise<unknown>).then(() => assert.fail(`${name} took its arguments`), (e: unknown) => e);
    assert.ok(error instanceof Error, name);
    assert.match(error.message, expected, name);
    assert.doesNotMatch(error.message, /\n/, name);
    assert.equal(errorCode(error), "invalid_params", name);
  }
  assert.deepEqual(calls, [], "nothing reached the server");
  assert.deepEqual(followed, []);
});

test("onDidChangeUsage refuses a listener that is no function, and passes a good one on with vscode.Event's arguments", () => {
  const { api, calls } = setup();
  const call = untyped(api);
  for (const bad of [undefined, 42, "listener", {}]) {
    assert.throws(
      () => call.onDidChangeUsage!(bad),
      (error: Error) => /^Baton API: onDidChangeUsage: listener must be a function, got /.test(error.message) && errorCode(error) === "invalid_params",
    );
  }
  assert.deepEqual(calls, []);
  const subscriptions: unknown[] = [];
  call.onDidChangeUsage!(() => undefined, undefined, subscriptions);
  api.onDidChangeUsage(() => undefined);
  assert.deepEqual(calls, ["listen 3", "listen 1"]);
});

test("a dry-run compaction changes nothing, so the meter and the view do not follow it; a compaction does", async () => {
  const { api, calls, followed } = setup();
  assert.equal((await api.compact("s2", { dryRun: true })).summary, null);
  assert.deepEqual(followed, []);
  await api.compact("s2", { direction: "all" });
  assert.deepEqual(followed, ["s2"]);
  assert.deepEqual(calls, ['compact s2 {"dryRun":true}', 'compact s2 {"direction":"all"}']);
});

test("the API's good calls go through, and the view follows the session changed", async () => {
  const { api, calls, followed } = setup();
  await api.createSession();
  await api.createSession({ title: "t", clientContext: { systemTokens: 10 } });
  await api.append("s1", [{ role: "user", content: "hi" }]);
  assert.equal((await api.getUsage("s1")).sessionId, "s1");
  assert.deepEqual(await api.getView("s1"), []);
  await api.uncompact("s1");
  assert.deepEqual(calls, ['create {}', 'create {"title":"t","clientContext":{"systemTokens":10}}', "append s1", "usage s1", "get s1", "uncompact s1"]);
  assert.deepEqual(followed, ["s1", "s1", "s1", "s1"]);
});
