// A chat extension with a panel of its own, reduced to what it asks of Baton: it hands Baton
// a conversation through the API and reads back the view, the usage and its changes, and a
// compaction and its undo. "Baton API Consumer: Run" does it once and reports what each call
// returned in a JSON file (setting batonApiConsumer.resultFile) and in a status bar item.
"use strict";
const fs = require("fs");
const vscode = require("vscode");

const TOPICS = [
  "the CSV importer rejecting rows whose amount uses a comma as the decimal separator",
  "a currency column that is empty for transfers between the user's own accounts",
  "dates written day first in the March export and month first in February's",
  "a trailing summary row the bank appends with the statement's closing balance",
  "categories that should come from a rules file instead of a hard-coded table",
  "the monthly report's totals that must match the bank's closing balance to the cent",
];

const SYSTEM_PROMPT =
  "You are the bookkeeping assistant of a small business. Answer about its bank statements, " +
  "its CSV imports and its monthly reports; say when a figure cannot be checked.";

function conversation() {
  const messages = [];
  TOPICS.forEach((topic, i) => {
    const detail = Array.from(
      { length: 12 },
      (_, k) => `Point ${k + 1} about ${topic}: the parser, its tests and the report agree.`,
    ).join(" ");
    messages.push({ role: "user", content: `Question ${i + 1}: what should we do about ${topic}? ${detail}` });
    messages.push({ role: "assistant", content: `Answer ${i + 1}: for ${topic}, change the parser. ${detail}` });
  });
  return messages;
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function run(item) {
  const result = { ok: false };
  item.text = "Baton API: running";
  const events = [];
  let subscription;
  try {
    const baton = vscode.extensions.getExtension("baton.baton");
    if (!baton) throw new Error("extension baton.baton is not installed");
    const api = baton.isActive ? baton.exports : await baton.activate();
    result.apiVersion = api.version;
    // this chat sends its model a system prompt and tools of its own: Baton counts them
    const clientContext = { system: SYSTEM_PROMPT, toolsTokens: 2500 };
    const session = await api.createSession({ title: "API consumer", clientContext });
    result.sessionId = session.sessionId;
    let firstEvent;
    const gotEvent = new Promise((resolve) => (firstEvent = resolve));
    subscription = api.onDidChangeUsage((change) => {
      if (change.sessionId !== session.sessionId) return;
      events.push(change.usage.usedTokens);
      firstEvent();
    });
    const input = conversation();
    const appended = await api.append(session.sessionId, input);
    result.appended = appended.messageIds.length;
    result.inputMessages = input.length;
    await withTimeout(gotEvent, 15000, "onDidChangeUsage after append");
    const view = await api.getView(session.sessionId);
    result.viewIds = view.map((m) => m.id);
    result.appendedIds = appended.messageIds;
    const usage = await api.getUsage(session.sessionId);
    result.usedBefore = usage.usedTokens;
    result.declared = { system: usage.breakdown.system, tools: usage.breakdown.tools };
    const pivot = appended.messageIds[7];
    const compacted = await api.compact(session.sessionId, { direction: "up_to", pivotMessageId: pivot });
    result.compact = {
      preTokens: compacted.preTokens,
      postTokens: compacted.postTokens,
      summarized: compacted.summarizedMessageIds.length,
      kept: compacted.keptMessageIds.length,
      boundaryId: compacted.boundaryId,
    };
    const afterCompact = await api.getView(session.sessionId);
    result.viewAfterCompact = afterCompact.map((m) => m.kind);
    const afterUsage = await api.getUsage(session.sessionId);
    result.usedAfterCompact = afterUsage.usedTokens;
    result.toolsAfterCompact = afterUsage.breakdown.tools;
    const undone = await api.uncompact(session.sessionId);
    result.usedAfterUndo = undone.usage.usedTokens;
    result.viewAfterUndo = (await api.getView(session.sessionId)).map((m) => m.id);
    result.ok = true;
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
  } finally {
    if (subscription) subscription.dispose();
  }
  result.events = events;
  const file = vscode.workspace.getConfiguration("batonApiConsumer").get("resultFile");
  if (file) fs.writeFileSync(file, JSON.stringify(result, null, 2));
  item.text = result.ok
    ? `Baton API: ok ${result.compact.preTokens}>${result.compact.postTokens} tokens, ${events.length} usage events`
    : `Baton API: failed: ${result.error}`;
  return result;
}

/**
 * Starts a conversation once the file `<resultFile>.go` exists (a test writes it while a
 * Baton command waits for its input): the panel follows it, as it follows any API caller's.
 */
async function createOnSignal() {
  const file = vscode.workspace.getConfiguration("batonApiConsumer").get("resultFile");
  const baton = vscode.extensions.getExtension("baton.baton");
  const api = baton.isActive ? baton.exports : await baton.activate();
  while (!fs.existsSync(`${file}.go`)) await new Promise((resolve) => setTimeout(resolve, 100));
  const session = await api.createSession({ title: "API consumer, started meanwhile" });
  fs.writeFileSync(`${file}.created`, session.sessionId);
}

function activate(context) {
  const item = vscode.window.createStatusBarItem("batonApiConsumer.result", vscode.StatusBarAlignment.Left, 0);
  item.name = "Baton API consumer";
  item.text = "Baton API: idle";
  item.show();
  context.subscriptions.push(
    item,
    vscode.commands.registerCommand("batonApiConsumer.run", () => run(item)),
    vscode.commands.registerCommand("batonApiConsumer.createOnSignal", () => void createOnSignal()),
  );
}

module.exports = { activate, deactivate() {} };
