// The extension's requests, in the exact shapes src/rpc.ts sends, against a real `baton serve`.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { CancellationTokenSource, WorkDoneProgress } from "vscode-languageserver-protocol/node";
import type { MessageInput } from "../../src/protocol";
import { errorCode, isCancellation } from "../../src/rpc";
import { REPO, Server, startFakeApi } from "./harness";

function conversation(turns: number, words = 60): MessageInput[] {
  const messages: MessageInput[] = [];
  for (let n = 0; n < turns; n++) {
    const filler = Array.from({ length: words }, (_, i) => `word${n}x${i}`).join(" ");
    messages.push({ role: "user", content: `Question ${n}: please explain part ${n}. ${filler}` });
    messages.push({ role: "assistant", content: [{ type: "text", text: `Answer ${n}: part ${n} works like this. ${filler}` }] });
  }
  return messages;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("the request should have failed");
}

let server: Server;

before(async () => {
  server = await Server.start();
});

after(async () => {
  if (server !== undefined) await server.stop(); // none when it could not start
});

test("sessions: create, append, list, get, usage, render, pin", async () => {
  const mark = server.notes.length;
  const session = await server.rpc.createSession({ title: "Protocol test" });
  assert.equal(session.title, "Protocol test");
  assert.equal(session.uri, `baton:/sessions/${session.sessionId}.md`);
  await server.notification("baton/sessionChanged", (p) => p.sessionId === session.sessionId && p.reason === "create", mark);

  const appended = await server.rpc.append(session.sessionId, conversation(3));
  assert.equal(appended.messageIds.length, 6);
  assert.deepEqual(appended.repairs, []);
  // the create's own usage counts the default system prompt: wait for the one with the messages
  const changed = await server.notification("baton/usageChanged", (p) => p.sessionId === session.sessionId && p.usage.breakdown.messages > 0, mark);
  assert.equal(changed.params.usage.usedTokens, appended.usage.usedTokens);

  assert.ok((await server.rpc.listSessions()).some((s) => s.sessionId === session.sessionId));
  const view = await server.rpc.getSession(session.sessionId);
  assert.deepEqual(view.messages.map((m) => m.id), appended.messageIds);
  assert.equal(view.session.sessionId, session.sessionId);
  const usage = await server.rpc.usage(session.sessionId);
  assert.equal(usage.usedTokens, appended.usage.usedTokens);
  assert.ok(usage.percentUsed > 0 && usage.percentUsed < 100);

  const rendered = await server.rpc.render(session.sessionId);
  assert.deepEqual(rendered.messages.map((m) => m.messageId), appended.messageIds);
  assert.match(rendered.text, /Question 0/);

  const pinned = await server.rpc.pin(session.sessionId, appended.messageIds[2]!, true);
  assert.equal(pinned.pinned, true);
  await server.notification("baton/sessionChanged", (p) => p.sessionId === session.sessionId && p.reason === "pin", mark);
  assert.notEqual((await server.rpc.pin(session.sessionId, appended.messageIds[2]!, false)).pinned, true);
});

test("the session's task list is the latest TodoWrite list, on the session's view", async () => {
  const session = await server.rpc.createSession({ title: "Tasks" });
  assert.equal((await server.rpc.getSession(session.sessionId)).todos, undefined);
  const todos = [
    { content: "Read the spec", status: "completed" as const, activeForm: "Reading the spec" },
    { content: "Write the code", status: "in_progress" as const, activeForm: "Writing the code" },
  ];
  await server.rpc.append(session.sessionId, [
    { role: "user", content: "Plan it, then do it." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_t1", name: "TodoWrite", input: { todos } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_t1", content: "Task list saved." }] },
  ]);
  assert.deepEqual((await server.rpc.getSession(session.sessionId)).todos, todos);
});

test("right-click compactions with client progress, undo, preview, range and from", async () => {
  const session = await server.rpc.createSession({ title: "Compaction" });
  const ids = (await server.rpc.append(session.sessionId, conversation(4, 400))).messageIds;
  const before = await server.rpc.usage(session.sessionId);

  const preview = await server.rpc.preview(session.sessionId);
  assert.equal(preview.summary, null);
  assert.ok(preview.summarizedMessageIds.length > 0);
  assert.deepEqual((await server.rpc.getSession(session.sessionId)).messages.map((m) => m.id), ids, "a dry run changes nothing");

  const kinds: string[] = [];
  const listener = server.connection.onProgress(WorkDoneProgress.type, "vscode-test-1", (value) => {
    kinds.push(value.kind);
  });
  const mark = server.notes.length;
  const result = await server.rpc.compactUpTo(session.sessionId, ids[3]!, { workDoneToken: "vscode-test-1" });
  listener.dispose();
  assert.equal(result.direction, "up_to");
  assert.deepEqual(result.summarizedMessageIds, ids.slice(0, 4));
  assert.deepEqual(result.keptMessageIds, ids.slice(4));
  assert.ok(result.postTokens < result.preTokens);
  assert.deepEqual([kinds[0], kinds[kinds.length - 1]], ["begin", "end"]);
  await server.notification("baton/sessionChanged", (p) => p.sessionId === session.sessionId && p.reason === "compact", mark);
  const lower = await server.notification("baton/usageChanged", (p) => p.sessionId === session.sessionId && p.usage.usedTokens < before.usedTokens, mark);
  assert.ok(lower.params.usage.usedTokens < before.usedTokens);
  const compacted = await server.rpc.getSession(session.sessionId);
  assert.equal(compacted.messages[0]?.kind, "summary");
  assert.equal(compacted.session.compactions, 1);

  // what it replaced, a page at a time, as the summary card reads it
  const first = await server.rpc.replaced(session.sessionId, result.boundaryId, 0, 3);
  assert.deepEqual([first.offset, first.totalMessages], [0, 4]);
  assert.deepEqual(first.messages.map((m) => m.id), ids.slice(0, 3));
  const rest = await server.rpc.replaced(session.sessionId, result.boundaryId, 3, 3);
  assert.deepEqual(rest.messages.map((m) => m.id), ids.slice(3, 4));
  assert.equal(errorCode(await failure(server.rpc.replaced(session.sessionId, "cmp_none", 0, 3))), "invalid_params");

  const undone = await server.rpc.uncompact(session.sessionId, result.boundaryId);
  assert.equal(undone.usage.usedTokens, before.usedTokens);
  assert.deepEqual((await server.rpc.getSession(session.sessionId)).messages.map((m) => m.id), ids);

  const range = await server.rpc.compactRange(session.sessionId, ids[2]!, ids[5]!);
  assert.deepEqual(range.summarizedMessageIds, ids.slice(2, 6));
  await server.rpc.uncompact(session.sessionId);
  const from = await server.rpc.compactFrom(session.sessionId, ids[4]!);
  assert.deepEqual(from.keptMessageIds.slice(0, 4), ids.slice(0, 4));
  assert.ok(from.summarizedMessageIds.includes(ids[4]!));

  const all = await server.rpc.compact(session.sessionId, { direction: "all", instructions: "keep the part numbers" });
  assert.equal(all.direction, "all");
});

test("a settings change reaches the server as the client sends it, and moves the usage", async () => {
  const session = await server.rpc.createSession({ title: "Settings" });
  await server.rpc.append(session.sessionId, conversation(1));
  const window = (await server.rpc.usage(session.sessionId)).contextWindow;
  assert.notEqual(window, 100_000);
  const mark = server.notes.length;
  await server.changeSettings({ contextWindow: 100_000 });
  await server.notification("baton/usageChanged", (p) => p.sessionId === session.sessionId && p.usage.contextWindow === 100_000, mark);
  assert.equal((await server.rpc.usage(session.sessionId)).contextWindow, 100_000);
  const back = server.notes.length;
  await server.changeSettings({ contextWindow: null });
  await server.notification("baton/usageChanged", (p) => p.sessionId === session.sessionId && p.usage.contextWindow === window, back);
});

test("a bad setting is shown once as a warning, not again while it stays, and again once fixed and set again", async () => {
  const session = await server.rpc.createSession({ title: "Bad setting" });
  await server.rpc.append(session.sessionId, conversation(1));
  const shown = (since: number) => server.notes.slice(since).filter((n) => n.method === "window/showMessage");
  const mark = server.notes.length;
  await server.changeSettings({ contextWindow: "huge" });
  const warning = await server.notification("window/showMessage", () => true, mark);
  assert.equal(warning.params.type, 2); // Warning: the LanguageClient shows it as a notification
  assert.match(warning.params.message, /^Baton: baton\.contextWindow: invalid value 'huge' .*using the default$/);
  // the whole section again (another key changed), the bad value still in it: nothing more
  await server.changeSettings({ compactInstructions: "Keep file names." });
  await server.changeSettings({ contextWindow: 100_000 });
  await server.notification("baton/usageChanged", (p) => p.sessionId === session.sessionId && p.usage.contextWindow === 100_000, mark);
  assert.equal(shown(mark).length, 1);
  await server.changeSettings({ contextWindow: "huge" });
  const again = await server.notification("window/showMessage", () => shown(mark).length === 2, mark);
  assert.equal(again.params.message, warning.params.message);
  await server.changeSettings({ contextWindow: null, compactInstructions: "" });
});

test("editor files: a file the client opened and focused comes back after a compaction", async () => {
  const path = join(server.workspace, "parser.py");
  const text = "def parse(text):\n    return text.split()\n";
  writeFileSync(path, text);
  const uri = `file://${path}`;
  await server.connection.sendNotification("textDocument/didOpen", {
    textDocument: { uri, languageId: "python", version: 1, text },
  });
  await server.connection.sendNotification("baton/activeEditor", { uri });
  const session = await server.rpc.createSession({ title: "Files" });
  const ids = (await server.rpc.append(session.sessionId, conversation(3))).messageIds;
  const result = await server.rpc.compactUpTo(session.sessionId, ids[3]!);
  assert.ok(result.restoredFiles.some((file) => file.uri === uri), JSON.stringify(result.restoredFiles));
  await server.connection.sendNotification("baton/activeEditor", { uri: null });
});

test("the session document gets its diagnostics when opened", async () => {
  const session = await server.rpc.createSession({ title: "Diagnostics" });
  await server.rpc.append(session.sessionId, conversation(1));
  const rendered = await server.rpc.render(session.sessionId);
  const mark = server.notes.length;
  await server.connection.sendNotification("textDocument/didOpen", {
    textDocument: { uri: rendered.uri, languageId: "markdown", version: 1, text: rendered.text },
  });
  const published = await server.notification(
    "textDocument/publishDiagnostics",
    (p) => p.uri === rendered.uri && p.diagnostics.some((d: { code?: string }) => d.code === "context-usage"),
    mark,
  );
  assert.equal(published.params.uri, session.uri);
});

test("import of a Claude Code session, and errors carry their stable codes", async () => {
  const example = join(REPO, "server", "baton", "examples", "session.jsonl");
  const imported = await server.rpc.importClaudeCode(example, { workDoneToken: "vscode-import-1" });
  assert.ok(imported.title.length > 0);
  assert.ok((await server.rpc.getSession(imported.sessionId)).messages.length > 0);

  assert.equal(errorCode(await failure(server.rpc.getSession("no-such-session"))), "session_not_found");
  assert.equal(errorCode(await failure(server.rpc.compactUpTo(imported.sessionId, "no-such-message"))), "message_not_found");
  assert.equal(errorCode(await failure(server.rpc.send(imported.sessionId, "hello"))), "api_key_missing");
  assert.equal(errorCode(await failure(server.rpc.importClaudeCode(join(REPO, "no-such-file.jsonl")))), "invalid_params");
});

test("send streams deltas with the key from initializationOptions, and Stop cancels", async () => {
  const fake = await startFakeApi();
  const keyed = await Server.start({ key: "sk-ant-protocol-test", env: { ANTHROPIC_BASE_URL: fake.baseUrl } });
  try {
    const session = await keyed.rpc.createSession({ title: "Chat" });
    const mark = keyed.notes.length;
    const reply = await keyed.rpc.send(session.sessionId, "Say hello", { workDoneToken: "vscode-send-1" });
    const text = reply.message.content.map((b) => (b as { text?: string }).text ?? "").join("");
    assert.equal(text, "Hello from the fake API, streamed in pieces.");
    const deltas = keyed.notes.slice(mark).filter((n) => n.method === "baton/session/delta" && n.params.sessionId === session.sessionId);
    assert.ok(deltas.length > 1, "the reply arrives in pieces");
    assert.equal(deltas.map((n) => n.params.text).join(""), text);
    assert.ok(deltas.every((n) => n.params.messageId === reply.message.id));

    const cancel = new CancellationTokenSource();
    const second = keyed.notes.length;
    const pending = keyed.rpc.send(session.sessionId, "And again", { token: cancel.token });
    await keyed.notification("baton/session/delta", (p) => p.sessionId === session.sessionId, second);
    cancel.cancel();
    assert.ok(isCancellation(await failure(pending)));
    await keyed.notification("baton/sessionChanged", (p) => p.sessionId === session.sessionId && p.reason === "reply", second);
    const messages = (await keyed.rpc.getSession(session.sessionId)).messages;
    assert.equal(messages.at(-1)?.stopReason, "interrupted");
    assert.equal(messages.at(-2)?.role, "user");
  } finally {
    await keyed.stop();
    await fake.stop();
  }
});

test("a draft's usage once sent, and a model switch that leaves the conversation over the limit", async () => {
  // with the default system prompt: the anchored 300K beyond the estimate is the
  // conversation's, not a share of it on the system prompt that no compaction removes
  const session = await server.rpc.createSession({ title: "Draft and model", model: "claude-sonnet-4-5[1m]" });
  const real = { inputTokens: 300_000, outputTokens: 20 };
  await server.rpc.append(session.sessionId, [
    { role: "user", content: "read the whole repository" },
    { role: "assistant", content: [{ type: "text", text: "done" }], usage: real },
  ]);
  const now = await server.rpc.usage(session.sessionId);
  const pending = await server.rpc.draftUsage(session.sessionId, { text: "and now the parser, please" });
  assert.equal(pending.draft?.usedBefore, now.usedTokens);
  assert.equal(pending.usedTokens, now.usedTokens + (pending.draft?.tokens ?? 0));
  assert.equal(pending.draft?.verdict, "fits");
  assert.equal((await server.rpc.getSession(session.sessionId)).messages.length, 2, "a draft writes nothing");

  const mark = server.notes.length;
  const switched = await server.rpc.setModel(session.sessionId, "claude-sonnet-4-5");
  assert.equal(switched.session.model, "claude-sonnet-4-5");
  assert.equal(switched.usage.contextWindow, 200_000);
  assert.equal(switched.usage.state, "blocking");
  assert.match(switched.warning ?? "", /over its limit .*: (the next send compacts first|compact before the next send)\.$/);
  await server.notification("baton/sessionChanged", (p) => p.sessionId === session.sessionId && p.reason === "model", mark);
  await server.notification("baton/usageChanged", (p) => p.sessionId === session.sessionId && p.usage.state === "blocking", mark);
  const next = await server.rpc.draftUsage(session.sessionId, { text: "next" });
  assert.ok(next.draft?.verdict === "autoCompact" || next.draft?.verdict === "compactFirst", next.draft?.verdict);
  // the warning says what the verdict says the send does
  const compactsFirst = next.draft?.verdict === "autoCompact";
  assert.equal(switched.warning?.endsWith(compactsFirst ? "the next send compacts first." : "compact before the next send."), true, switched.warning);
  assert.equal(errorCode(await failure(server.rpc.setModel(session.sessionId, "  "))), "invalid_params");
});

test("a declared client context counts on create and append; the usage carries its words", async () => {
  const session = await server.rpc.createSession({
    title: "Own prompt and tools",
    clientContext: { system: "You answer in one line. ".repeat(20), toolsTokens: 2000 },
  });
  const appended = await server.rpc.append(session.sessionId, conversation(2));
  assert.equal(appended.usage.breakdown.tools, 2000);
  assert.ok(appended.usage.breakdown.system > 50);
  assert.equal(appended.usage.basis, "estimate");
  assert.match(appended.usage.text.headline, /^Context \d+% used \(/);
  assert.equal(appended.usage.text.meter.split(" ")[0], `~${Math.round(appended.usage.percentUsed)}%`);
  const again = await server.rpc.append(session.sessionId, conversation(1), { toolsTokens: 3000 });
  assert.equal(again.usage.breakdown.tools, 3000);
});

test("edit and resend, then retry: rewind takes the turns out of the view, a send or a continuation follows, undo brings them back", async () => {
  const fake = await startFakeApi("protocol", ["plain"]); // every reply finishes: nothing here cancels
  const keyed = await Server.start({ key: "sk-ant-protocol-test", env: { ANTHROPIC_BASE_URL: fake.baseUrl } });
  try {
    const { sessionId } = await keyed.rpc.createSession({ title: "Edits" });
    await keyed.rpc.send(sessionId, "First question");
    await keyed.rpc.send(sessionId, "A question with a typo");
    const before = (await keyed.rpc.getSession(sessionId)).messages;
    assert.equal(before.length, 4);
    const typo = before[2]!;

    // Edit and resend: the prompt and its reply leave the view, the edited prompt goes.
    const rewound = await keyed.rpc.rewind(sessionId, typo.id);
    assert.deepEqual(rewound.rewoundMessageIds, before.slice(2).map((m) => m.id));
    await keyed.rpc.send(sessionId, "The question, fixed");
    const edited = (await keyed.rpc.getSession(sessionId)).messages;
    assert.deepEqual(edited.slice(0, 2).map((m) => m.id), before.slice(0, 2).map((m) => m.id));
    assert.equal(edited.length, 4);
    assert.equal((edited[2]!.content[0] as { text?: string }).text ?? edited[2]!.content, "The question, fixed");

    // Retry: the last reply leaves the view and a continuation writes a new one.
    const lastReply = edited[3]!;
    await keyed.rpc.rewind(sessionId, lastReply.id);
    const retried = await keyed.rpc.send(sessionId, undefined);
    assert.notEqual(retried.message.id, lastReply.id);
    const after = (await keyed.rpc.getSession(sessionId)).messages;
    assert.deepEqual(after.map((m) => m.id), [...edited.slice(0, 3).map((m) => m.id), retried.message.id]);

    // The first rewind undone: the old prompt and reply come back before the edited turn.
    await keyed.rpc.uncompact(sessionId, rewound.boundaryId);
    const restored = (await keyed.rpc.getSession(sessionId)).messages.map((m) => m.id);
    assert.deepEqual(restored.slice(0, 4), before.map((m) => m.id));
    assert.equal((await keyed.rpc.getSession(sessionId)).session.compactions, 0);
  } finally {
    await keyed.stop();
    await fake.stop();
  }
});
