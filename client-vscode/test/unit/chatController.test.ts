import assert from "node:assert/strict";
import { test } from "node:test";
import type { CancellationToken } from "vscode-languageserver-protocol";
import { ChatController, NO_SERVER, type ChatPorts } from "../../src/chatController";
import { CurrentSession } from "../../src/currentSession";
import type { Message, Session, Usage } from "../../src/protocol";
import type { CallOptions } from "../../src/rpc";
import type { ToWebview } from "../../src/webviewMessages";
import { message, session, usage } from "./fixtures";

/** A fake server holding sessions in memory, and a record of everything posted. */
class Fake {
  sessions = new Map<string, { session: Session; messages: Message[] }>();
  posted: ToWebview[] = [];
  commands: [string, string | undefined][] = [];
  selections: string[][] = [];
  running = true;
  key = false;
  sendFailure: unknown;
  sendGate: Promise<void> | undefined;
  sendToken: CancellationToken | undefined;
  created = 0;

  add(s: Session, messages: Message[] = []): void {
    this.sessions.set(s.sessionId, { session: s, messages });
  }

  ports(): ChatPorts {
    return {
      rpc: {
        listSessions: async () => [...this.sessions.values()].map((e) => e.session),
        getSession: async (id: string) => {
          const entry = this.sessions.get(id);
          if (entry === undefined) throw Object.assign(new Error("no such session"), { data: { code: "session_not_found" } });
          return { session: entry.session, messages: entry.messages, usage: usage({ sessionId: id }) };
        },
        createSession: async () => {
          const s = session(`new${++this.created}`, "2026-12-01T10:00:00Z");
          this.add(s);
          return s;
        },
        send: async (id: string, text: string | undefined, options: CallOptions = {}) => {
          this.sendToken = options.token;
          const entry = this.sessions.get(id)!;
          entry.messages.push(message(`u${entry.messages.length}`, "user", text ?? ""));
          if (this.sendGate) await this.sendGate;
          if (options.token?.isCancellationRequested) throw { code: -32800, message: "cancelled" };
          if (this.sendFailure) throw this.sendFailure;
          const reply = message(`a${entry.messages.length}`, "assistant", "Reply");
          entry.messages.push(reply);
          return { message: reply, usage: usage({ sessionId: id }) };
        },
      },
      post: (m) => this.posted.push(m),
      hasApiKey: async () => this.key,
      serverAvailable: () => this.running,
      sendWithProgress: (run) => run({ workDoneToken: "w" }),
      command: async (name, arg) => {
        this.commands.push([name, arg]);
      },
      selectionChanged: (ids) => this.selections.push([...ids]),
    };
  }

  sessionsPosted(): Extract<ToWebview, { type: "session" }>[] {
    return this.posted.filter((m): m is Extract<ToWebview, { type: "session" }> => m.type === "session");
  }

  lastSession(): Extract<ToWebview, { type: "session" }> {
    const all = this.sessionsPosted();
    assert.ok(all.length > 0, "a session update was posted");
    return all[all.length - 1]!;
  }
}

function setup(): { fake: Fake; current: CurrentSession; chat: ChatController } {
  const fake = new Fake();
  const current = new CurrentSession();
  return { fake, current, chat: new ChatController(fake.ports(), current, 0) };
}

test("on ready the view shows the most recently updated session, with its messages and usage", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("old", "2026-11-01T10:00:00Z"), [message("m1", "user", "old")]);
  fake.add(session("new", "2026-11-30T10:00:00Z"), [message("m2", "user", "hi"), message("m3", "assistant", "hello")]);
  await chat.receive({ type: "ready" });
  const shown = fake.lastSession();
  assert.equal(shown.session?.sessionId, "new");
  assert.deepEqual(shown.messages.map((m) => m.id), ["m2", "m3"]);
  assert.equal(shown.sessions.length, 2);
  assert.equal(shown.usage?.sessionId, "new");
  assert.equal(shown.hasApiKey, false);
  assert.equal(current.sessionId, "new");
});

test("with no sessions the view gets the welcome (session null) and nothing is current", async () => {
  const { fake, current, chat } = setup();
  await chat.receive({ type: "ready" });
  assert.deepEqual(fake.lastSession(), { type: "session", session: null, sessions: [], messages: [], usage: null, hasApiKey: false });
  assert.equal(current.sessionId, undefined);
});

test("a reloaded webview gets the session it was showing, not the newest", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-30T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  await chat.receive({ type: "ready" });
  assert.equal(fake.lastSession().session?.sessionId, "a");
});

test("when the session on show is deleted the view moves to the newest left", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-30T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "b" });
  fake.sessions.delete("b");
  await chat.onSessionChanged({ sessionId: "b", reason: "delete" });
  assert.equal(fake.lastSession().session?.sessionId, "a");
});

test("changes to other sessions are ignored unless one is created or deleted", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  const before = fake.posted.length;
  assert.equal(chat.onSessionChanged({ sessionId: "other", reason: "append" }), undefined);
  chat.onDelta({ sessionId: "other", messageId: "x", text: "t" });
  chat.onUsageChanged({ sessionId: "other", usage: usage({ sessionId: "other" }) });
  assert.equal(fake.posted.length, before);
  fake.add(session("c", "2026-12-01T10:00:00Z"));
  await chat.onSessionChanged({ sessionId: "c", reason: "create" });
  assert.equal(fake.lastSession().sessions.length, 2);
  assert.equal(fake.lastSession().session?.sessionId, "a", "a new session elsewhere does not take the view");
});

test("the current session's usage and deltas go to the webview and to the meter's state", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  const next: Usage = usage({ sessionId: "a", usedTokens: 9_000 });
  chat.onUsageChanged({ sessionId: "a", usage: next });
  chat.onDelta({ sessionId: "a", messageId: "r1", text: "Hel" });
  assert.deepEqual(fake.posted.slice(-2), [
    { type: "usage", sessionId: "a", usage: next },
    { type: "delta", sessionId: "a", messageId: "r1", text: "Hel" },
  ]);
  assert.equal(current.usage?.usedTokens, 9_000);
});

test("send with no session open creates one, shows busy, then the reply", async () => {
  const { fake, chat } = setup();
  fake.key = true;
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "Hello there" });
  const types = fake.posted.map((m) => m.type);
  assert.deepEqual(types.filter((t) => t === "busy").length, 2);
  assert.deepEqual(fake.posted.filter((m) => m.type === "busy"), [{ type: "busy", busy: true }, { type: "busy", busy: false }]);
  const shown = fake.lastSession();
  assert.equal(shown.session?.sessionId, "new1");
  assert.deepEqual(shown.messages.map((m) => m.role), ["user", "assistant"]);
  assert.equal(shown.hasApiKey, true);
});

test("Stop cancels the running send; no error is shown and the view is refreshed", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  let open!: () => void;
  fake.sendGate = new Promise((resolve) => (open = resolve));
  const sending = chat.receive({ type: "send", text: "long one" });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(chat.busy, true);
  // changes while the reply streams wait for its end
  assert.equal(chat.onSessionChanged({ sessionId: "a", reason: "append" }), undefined);
  await chat.receive({ type: "send", text: "a second send while busy is ignored" });
  await chat.receive({ type: "stop" });
  assert.equal(fake.sendToken?.isCancellationRequested, true);
  open();
  await sending;
  assert.equal(chat.busy, false);
  assert.equal(fake.posted.filter((m) => m.type === "error").length, 0);
  assert.deepEqual(fake.lastSession().messages.map((m) => m.id), ["u0"]);
});

test("a send without a key says how to set one", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.sendFailure = Object.assign(new Error("no API key"), { data: { code: "api_key_missing" } });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "hi" });
  const errors = fake.posted.filter((m) => m.type === "error");
  assert.equal(errors.length, 1);
  assert.match((errors[0] as { message: string }).message, /Set API Key/);
});

test("empty prompts are not sent", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "   " });
  assert.equal(fake.posted.filter((m) => m.type === "busy").length, 0);
});

test("the selection is kept for Compact Selected and cleared when another session opens", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  await chat.receive({ type: "selection", messageIds: ["m1", "m3"] });
  assert.deepEqual(chat.selection, ["m1", "m3"]);
  await chat.receive({ type: "selectSession", sessionId: "b" });
  assert.deepEqual(chat.selection, []);
  assert.deepEqual(fake.selections.slice(-2), [["m1", "m3"], []]);
});

test("buttons that stand for editor commands run them; failures show as one line", async () => {
  const { fake, chat } = setup();
  await chat.receive({ type: "import" });
  await chat.receive({ type: "setApiKey" });
  await chat.receive({ type: "undo", boundaryId: "b1" });
  await chat.receive({ type: "openSessionDocument" });
  await chat.receive({ type: "pickSession" });
  assert.deepEqual(fake.commands, [
    ["import", undefined],
    ["setApiKey", undefined],
    ["undo", "b1"],
    ["openSessionDocument", undefined],
    ["pickSession", undefined],
  ]);
  await chat.receive({ type: "selectSession", sessionId: "missing" });
  assert.deepEqual(fake.posted.at(-1), { type: "error", message: "no such session" });
});

test("without a server nothing is asked and the view says how to get one", async () => {
  const { fake, chat } = setup();
  fake.running = false;
  await chat.receive({ type: "ready" });
  assert.deepEqual(fake.posted, [{ type: "error", message: NO_SERVER }]);
});
