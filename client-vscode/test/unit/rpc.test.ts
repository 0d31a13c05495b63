import assert from "node:assert/strict";
import { test } from "node:test";
import { BatonRpc, dropUndefined, errorCode, errorMessage, isCancellation, RequestsInFlight, type RequestSender } from "../../src/rpc";
import { sessionDocumentPath, sessionIdFromUri } from "../../src/sessionUri";

function recorder(result: unknown = {}): { sender: RequestSender; calls: { method: string; params: unknown }[] } {
  const calls: { method: string; params: unknown }[] = [];
  return {
    calls,
    sender: {
      sendRequest: async <R>(method: string, ...rest: unknown[]): Promise<R> => {
        assert.equal(rest.length, 1, "no undefined token after the params");
        const params = rest[0];
        calls.push({ method, params });
        return result as R;
      },
    },
  };
}

test("right-click compactions run the server's pivot commands; the rest send baton/compact", async () => {
  const { sender, calls } = recorder();
  const rpc = new BatonRpc(sender);
  await rpc.compactUpTo("s1", "m3", { workDoneToken: "w1" });
  await rpc.compactFrom("s1", "m3");
  await rpc.compactRange("s1", "m2", "m4");
  await rpc.preview("s1");
  await rpc.compact("s1", { direction: "all", instructions: undefined });
  assert.deepEqual(calls, [
    {
      method: "workspace/executeCommand",
      params: { command: "baton.compactUpTo", arguments: [{ sessionId: "s1", pivotMessageId: "m3" }], workDoneToken: "w1" },
    },
    {
      method: "workspace/executeCommand",
      params: { command: "baton.compactFrom", arguments: [{ sessionId: "s1", pivotMessageId: "m3" }] },
    },
    {
      method: "workspace/executeCommand",
      params: { command: "baton.compactRange", arguments: [{ sessionId: "s1", pivotMessageId: "m2", endMessageId: "m4" }] },
    },
    { method: "baton/compact", params: { sessionId: "s1", direction: "all", dryRun: true } },
    { method: "baton/compact", params: { sessionId: "s1", direction: "all" } },
  ]);
});

test("send carries the prompt as content; no text continues; uncompact names a boundary only when given", async () => {
  const { sender, calls } = recorder({ sessions: [] });
  const rpc = new BatonRpc(sender);
  await rpc.send("s1", "hello");
  await rpc.send("s1", undefined);
  await rpc.uncompact("s1");
  await rpc.uncompact("s1", "b1");
  await rpc.importClaudeCode("/tmp/x.jsonl");
  await rpc.pin("s1", "m1", true);
  assert.deepEqual(await rpc.listSessions(), []);
  assert.deepEqual(calls.slice(0, 6), [
    { method: "baton/session/send", params: { sessionId: "s1", content: "hello" } },
    { method: "baton/session/send", params: { sessionId: "s1" } },
    { method: "baton/uncompact", params: { sessionId: "s1" } },
    { method: "baton/uncompact", params: { sessionId: "s1", boundaryId: "b1" } },
    { method: "baton/session/import", params: { path: "/tmp/x.jsonl", format: "claude-code" } },
    { method: "baton/session/pin", params: { sessionId: "s1", messageId: "m1", pinned: true } },
  ]);
  assert.deepEqual(calls[6], { method: "baton/session/list", params: {} });
});

test("dropUndefined keeps falsy values that were chosen", () => {
  assert.deepEqual(dropUndefined({ a: undefined, b: 0, c: "", d: false }), { b: 0, c: "", d: false });
});

test("errors: the stable code, one line of message, cancellation", () => {
  const error = Object.assign(new Error("Nothing to compact\nmore"), { code: -32602, data: { code: "nothing_to_compact" } });
  assert.equal(errorCode(error), "nothing_to_compact");
  assert.equal(errorMessage(error), "Nothing to compact");
  assert.equal(errorCode(new Error("plain")), undefined);
  assert.equal(isCancellation({ code: -32800, message: "cancelled" }), true);
  assert.equal(isCancellation(error), false);
});

test("a missing key is said with the extension's way to set one", () => {
  // the server's words name ANTHROPIC_API_KEY and initializationOptions, neither of which a
  // VS Code user edits: Compact Conversation with the anthropic summarizer showed them
  const said = "no Anthropic API key: set ANTHROPIC_API_KEY or initializationOptions.anthropicApiKey";
  const error = Object.assign(new Error(said), { code: -32001, data: { code: "api_key_missing" } });
  assert.equal(errorMessage(error), "no Anthropic API key: set one with Baton: Set API Key");
  assert.equal(errorMessage(Object.assign(new Error(said), { data: { code: "api_error" } })), said);
});

test("session document URIs name their session", () => {
  assert.equal(sessionIdFromUri({ scheme: "baton", path: sessionDocumentPath("abc-1") }), "abc-1");
  assert.equal(sessionIdFromUri({ scheme: "file", path: "/sessions/abc.md" }), undefined);
  assert.equal(sessionIdFromUri({ scheme: "baton", path: "/sessions/a/b.md" }), undefined);
});

test("a draft's usage and a model switch go out in the contract's shapes", async () => {
  const { sender, calls } = recorder();
  const rpc = new BatonRpc(sender);
  await rpc.draftUsage("s1", { text: "hello" });
  await rpc.draftUsage("s1", { text: "see", attachments: [{ type: "text", text: "file" }] });
  await rpc.setModel("s1", "claude-sonnet-4-5");
  assert.deepEqual(calls, [
    { method: "baton/usage", params: { sessionId: "s1", draft: { text: "hello" } } },
    { method: "baton/usage", params: { sessionId: "s1", draft: { text: "see", attachments: [{ type: "text", text: "file" }] } } },
    { method: "baton/session/setModel", params: { sessionId: "s1", model: "claude-sonnet-4-5" } },
  ]);
});

test("a restart that waits for the requests in flight waits for each, one sent meanwhile too, and for none when idle", async () => {
  const inFlight = new RequestsInFlight();
  await inFlight.settled(); // idle: at once
  const open = (): { promise: Promise<string>; resolve: () => void; reject: () => void } => {
    let resolve!: () => void;
    let reject!: () => void;
    const promise = new Promise<string>((done, fail) => {
      resolve = () => done("answered");
      reject = () => fail(new Error("refused"));
    });
    return { promise, resolve, reject };
  };
  const reply = open();
  assert.equal(await Promise.race([inFlight.track(reply.promise), Promise.resolve("pending")]), "pending");
  let settled = false;
  const waiting = inFlight.settled().then(() => (settled = true));
  const compaction = open();
  void inFlight.track(compaction.promise).catch(() => undefined); // sent while the restart waits
  reply.resolve();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(settled, false, "the compaction is still in flight");
  assert.equal(inFlight.count, 1);
  compaction.reject(); // a failure ends it too
  await waiting;
  assert.equal(inFlight.count, 0);
});
