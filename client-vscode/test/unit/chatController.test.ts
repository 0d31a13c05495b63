import assert from "node:assert/strict";
import { test } from "node:test";
import { CancellationTokenSource, type CancellationToken } from "vscode-languageserver-protocol";
import { ChatController } from "../../src/chatController";
import { REPLACED_PAGE, VIEW_PAGE } from "../../src/chatPages";
import { NO_SERVER, type ChatPorts } from "../../src/chatPorts";
import { SERVER_GONE, ServerNotRunning } from "../../src/rpc";
import { CurrentSession } from "../../src/currentSession";
import type { CompactResult, Draft, DraftInfo, DraftUsage, Message, Range, Session, TodoEntry, Usage } from "../../src/protocol";
import type { CallOptions } from "../../src/rpc";
import type { ToWebview } from "../../src/webviewMessages";
import { message, session, usage } from "./fixtures";

/** A fake server holding sessions in memory, and a record of everything posted. */
class Fake {
  sessions = new Map<string, { session: Session; messages: Message[]; todos?: TodoEntry[] }>();
  /** What each compaction replaced (`baton/session/replaced`), and the pages asked for. */
  replacedBy = new Map<string, Message[]>();
  replacedCalls: [string, string, number, number][] = [];
  posted: ToWebview[] = [];
  commands: [string, string | undefined][] = [];
  /** The session each undo named (the one on show), in order. */
  undoSessions: (string | undefined)[] = [];
  code: [string, string, string | undefined][] = [];
  /** The pages of `baton/session/render` asked for, and the session documents shown (and where). */
  renderCalls: [string, number | null | undefined, number | null | undefined][] = [];
  documentsShown: [string, Range | undefined][] = [];
  running = true;
  key = false;
  sendFailure: unknown;
  /** What the send fails with once its prompt is stored (its server gone, say). */
  sendLost: unknown;
  /** A reply the server set aside (the API refused it): the send's answer says so. */
  refused = false;
  sendGate: Promise<void> | undefined;
  /** Holds the next getSession (once) until it resolves. */
  getGate: Promise<void> | undefined;
  /** The next getSession fails (once), after its gate if it has one. */
  getFailure: unknown;
  sendToken: CancellationToken | undefined;
  /** What the send's progress says while it runs, in order (the server's reports). */
  progressSays: string[] = [];
  created = 0;
  /** What `baton/usage` with a draft answers: the usage and the verdict it carries. */
  draftAnswer: (id: string, draft: Draft) => DraftUsage = (id, draft) =>
    ({ ...usage({ sessionId: id, usedTokens: 124_300 + draft.text!.length }), draft: info("fits") });
  draftCalls: [string, string][] = [];
  draftGate: Promise<void> | undefined;
  compactFailure: unknown;
  /** Holds the next compaction (once) until it resolves. */
  compactGate: Promise<void> | undefined;
  /** The Cancel of the compaction's progress notification. */
  compactProgress = new CancellationTokenSource();
  calls: string[] = [];
  /** What each rewind took out of a view, by its boundary (an undo puts it back). */
  rewoundBy = new Map<string, { id: string; taken: Message[] }>();
  rewinds = 0;
  /** Ids a rewind took out of a view: never given again (the server's ids are unique). */
  retired = new Set<string>();
  modelWarning: string | undefined;
  modelsFailure: unknown;
  /** The next session list fails (once). */
  listFailure: unknown;
  /** Holds the next session list (once) until it resolves. */
  listGate: Promise<void> | undefined;
  /** The session lists asked for. */
  listed = 0;
  /** Holds the next session made (once) until it resolves. */
  createGate: Promise<void> | undefined;
  /** What a code block's Apply fails with (it does not fail when undefined). */
  applyFailure: unknown;

  add(s: Session, messages: Message[] = []): void {
    this.sessions.set(s.sessionId, { session: s, messages });
  }

  ports(): ChatPorts {
    return {
      rpc: {
        listSessions: async () => {
          this.listed++;
          const gate = this.listGate;
          this.listGate = undefined;
          if (gate) await gate;
          const failure = this.listFailure;
          this.listFailure = undefined;
          if (failure !== undefined) throw failure;
          return [...this.sessions.values()].map((e) => e.session);
        },
        getSession: async (id: string) => {
          const gate = this.getGate;
          this.getGate = undefined;
          const failure = this.getFailure;
          this.getFailure = undefined;
          if (gate) await gate;
          if (failure !== undefined) throw failure;
          const entry = this.sessions.get(id);
          if (entry === undefined) throw Object.assign(new Error("no such session"), { data: { code: "session_not_found" } });
          const view = { session: entry.session, messages: entry.messages, usage: usage({ sessionId: id }) };
          return entry.todos === undefined ? view : { ...view, todos: entry.todos };
        },
        createSession: async () => {
          const gate = this.createGate;
          this.createGate = undefined;
          if (gate) await gate;
          const s = session(`new${++this.created}`, "2026-12-01T10:00:00Z");
          this.add(s);
          return s;
        },
        send: async (id: string, text: string | undefined, options: CallOptions = {}) => {
          this.calls.push(text === undefined ? "send (continue)" : "send");
          this.sendToken = options.token;
          const entry = this.sessions.get(id)!;
          // refused before the prompt is stored (no key, say): the server keeps nothing
          if (this.sendFailure && !hasPromptId(this.sendFailure)) throw this.sendFailure;
          if (text !== undefined) entry.messages.push(message(this.newId("u", entry.messages.length), "user", text));
          if (this.sendGate) await this.sendGate;
          if (this.sendLost !== undefined) throw this.sendLost;
          if (options.token?.isCancellationRequested) throw { code: -32800, message: "cancelled" };
          if (this.sendFailure) throw this.sendFailure;
          const reply = message(this.newId("a", entry.messages.length), "assistant", "Reply");
          if (this.refused) {
            const setAside = { boundaryId: "bnd_refused", messageIds: [reply.id], reason: "refusal" as const };
            return { message: reply, usage: usage({ sessionId: id }), setAside };
          }
          entry.messages.push(reply);
          return { message: reply, usage: usage({ sessionId: id }) };
        },
        draftUsage: async (id: string, draft: Draft) => {
          this.draftCalls.push([id, draft.text ?? ""]);
          if (this.draftGate) await this.draftGate;
          return this.draftAnswer(id, draft);
        },
        compact: async (id: string, _params: unknown, options: CallOptions = {}) => {
          this.calls.push("compact");
          const gate = this.compactGate;
          this.compactGate = undefined;
          if (gate) await gate;
          if (options.token?.isCancellationRequested) throw { code: -32800, message: "cancelled" };
          if (this.compactFailure) throw this.compactFailure;
          return compactResult(id);
        },
        rewind: async (id: string, messageId: string) => {
          this.calls.push(`rewind ${messageId}`);
          const entry = this.sessions.get(id)!;
          const at = entry.messages.findIndex((m) => m.id === messageId);
          if (at < 0) throw Object.assign(new Error("not in the view"), { data: { code: "invalid_params" } });
          const taken = entry.messages.splice(at);
          const rewound = taken.map((m) => m.id);
          for (const gone of rewound) this.retired.add(gone);
          this.rewoundBy.set(`bnd_rw${++this.rewinds}`, { id, taken });
          return { boundaryId: `bnd_rw${this.rewinds}`, rewoundMessageIds: rewound, usage: usage({ sessionId: id }) };
        },
        uncompact: async (id: string, boundaryId?: string) => {
          this.calls.push(`uncompact ${boundaryId ?? "-"}`);
          const rewind = boundaryId === undefined ? undefined : this.rewoundBy.get(boundaryId);
          if (rewind === undefined || rewind.id !== id) throw Object.assign(new Error("no such compaction"), { data: { code: "invalid_params" } });
          this.sessions.get(id)!.messages.push(...rewind.taken);
          return { usage: usage({ sessionId: id }) };
        },
        listModels: async (id?: string) => {
          this.calls.push(`models ${id ?? "-"}`);
          if (this.modelsFailure) throw this.modelsFailure;
          const current = id === undefined ? undefined : this.sessions.get(id)?.session.model;
          const ids = ["claude-sonnet-4-5", "claude-opus-5"];
          const models = ids.map((m) => ({
            id: m,
            displayName: m,
            contextWindow: m === "claude-opus-5" ? 1_000_000 : 200_000,
            maxOutput: 64_000,
            windowFrom: "table" as const,
            current: m === current,
          }));
          return { models, source: "configured" as const, reason: "no Anthropic API key" };
        },
        renameSession: async (id: string, title: string) => {
          this.calls.push(`rename ${id} ${title}`);
          const entry = this.sessions.get(id);
          if (entry === undefined) throw Object.assign(new Error("no session"), { data: { code: "session_not_found" } });
          entry.session = { ...entry.session, title };
          return entry.session;
        },
        deleteSession: async (id: string) => {
          this.calls.push(`delete ${id}`);
          this.sessions.delete(id);
        },
        // each message of the view is ten lines of the document, after a header of three
        render: async (id: string, page?: { offset?: number | null; limit?: number | null }) => {
          this.renderCalls.push([id, page?.offset, page?.limit]);
          const all = this.sessions.get(id)!.messages;
          const offset = page?.offset ?? 0;
          const shown = all.slice(offset, offset + (page?.limit ?? all.length));
          const line = (at: number) => ({ line: at, character: 0 });
          const ranges = shown.map((m, i) => ({ messageId: m.id, range: { start: line(3 + (offset + i) * 10), end: line(12 + (offset + i) * 10) } }));
          return { uri: `baton:/sessions/${id}.md`, text: "", version: 1, messages: ranges, offset, totalMessages: all.length, startLine: 3 + offset * 10 };
        },
        replaced: async (id: string, boundaryId: string, offset: number, limit: number) => {
          this.replacedCalls.push([id, boundaryId, offset, limit]);
          const all = this.replacedBy.get(boundaryId);
          if (all === undefined) throw Object.assign(new Error(`no compaction ${boundaryId}`), { data: { code: "invalid_params" } });
          return { boundaryId, messages: all.slice(offset, offset + limit), offset, totalMessages: all.length };
        },
        setModel: async (id: string, model: string) => {
          const entry = this.sessions.get(id)!;
          entry.session = { ...entry.session, model };
          const next = usage({ sessionId: id, model, state: this.modelWarning ? "blocking" : "ok" });
          return this.modelWarning === undefined
            ? { session: entry.session, usage: next }
            : { session: entry.session, usage: next, warning: this.modelWarning };
        },
      },
      post: (m) => this.posted.push(m),
      hasApiKey: async () => this.key,
      serverAvailable: () => this.running,
      sendWithProgress: (run, said) => {
        for (const message of this.progressSays) said?.(message);
        return run({ workDoneToken: "w" });
      },
      compactWithProgress: (run) => run({ workDoneToken: "c", token: this.compactProgress.token }),
      command: async (name, arg, sessionId) => {
        this.commands.push([name, arg]);
        if (name === "undo") this.undoSessions.push(sessionId);
      },
      insertCode: async (code) => {
        this.code.push(["insert", code, undefined]);
      },
      showSessionDocument: async (id, range) => {
        this.documentsShown.push([id, range]);
      },
      applyCode: async (code, file) => {
        if (this.applyFailure !== undefined) throw this.applyFailure;
        this.code.push(["apply", code, file]);
      },
    };
  }

  sessionsPosted(): Extract<ToWebview, { type: "session" }>[] {
    return this.posted.filter((m): m is Extract<ToWebview, { type: "session" }> => m.type === "session");
  }

  newId(prefix: string, at: number): string {
    let id = `${prefix}${at}`;
    while (this.retired.has(id)) id += "'";
    return id;
  }

  lastSession(): Extract<ToWebview, { type: "session" }> {
    const all = this.sessionsPosted();
    assert.ok(all.length > 0, "a session update was posted");
    return all[all.length - 1]!;
  }
}

function setup(draftDelayMs = 0): { fake: Fake; current: CurrentSession; chat: ChatController } {
  const fake = new Fake();
  const current = new CurrentSession();
  return { fake, current, chat: new ChatController(fake.ports(), current, 0, draftDelayMs) };
}

function info(verdict: DraftInfo["verdict"], message?: string): DraftInfo {
  const base = { tokens: 40, usedBefore: 124_300, verdict };
  return message === undefined ? base : { ...base, message };
}

function hasPromptId(error: unknown): boolean {
  return typeof (error as { data?: { promptMessageId?: unknown } }).data?.promptMessageId === "string";
}

function compactResult(sessionId: string): CompactResult {
  void sessionId;
  return {
    boundaryId: "bnd_1",
    direction: "all",
    summary: "the summary",
    summarizedMessageIds: ["m1", "m2"],
    keptMessageIds: [],
    restoredFiles: [],
    skippedFiles: [],
    preTokens: 180_000,
    postTokens: 20_000,
    trigger: "manual",
    summarizer: "extractive",
    dryRun: false,
    warnings: [],
  };
}

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function ofType<T extends ToWebview["type"]>(posted: ToWebview[], type: T): Extract<ToWebview, { type: T }>[] {
  return posted.filter((m): m is Extract<ToWebview, { type: T }> => m.type === type);
}

/** A send whose reply the fake holds until `open()`: it runs meanwhile. */
async function heldSend(fake: Fake, chat: ChatController, text: string): Promise<{ open: () => void; sending: Promise<void> }> {
  let open!: () => void;
  fake.sendGate = new Promise((resolve) => (open = resolve));
  const sending = chat.receive({ type: "send", text });
  await tick();
  return { open, sending };
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

test("a session list that fails while a session opens leaves the panel on the session now current", async () => {
  const { fake, current, chat } = setup();
  fake.key = true;
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  fake.listFailure = Object.assign(new Error("the server is busy"), { data: { code: "internal" } });
  await chat.receive({ type: "selectSession", sessionId: "b" });
  assert.equal(current.sessionId, "b");
  assert.equal(fake.lastSession().session?.sessionId, "b", "the panel shows the session the meter and a send follow");
  assert.equal(fake.lastSession().sessions.length, 2, "the list as last read");
  await chat.receive({ type: "send", text: "for b" });
  assert.equal(fake.sessions.get("a")!.messages.length, 0);
  assert.deepEqual(fake.sessions.get("b")!.messages.map((m) => m.role), ["user", "assistant"]);
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
  assert.deepEqual(fake.posted.filter((m) => m.type === "busy"), [{ type: "busy", busy: true, sessionId: "new1" }, { type: "busy", busy: false, sessionId: "new1" }]);
  const shown = fake.lastSession();
  assert.equal(shown.session?.sessionId, "new1");
  assert.deepEqual(shown.messages.map((m) => m.role), ["user", "assistant"]);
  assert.equal(shown.hasApiKey, true);
});

test("what the send's progress says (a wait to ask the API again) goes to the session's view as its status", async () => {
  const { fake, chat } = setup();
  fake.key = true;
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.progressSays = ["Waiting for the model", "Rate limited by the API: trying again in 30 s (attempt 2 of 3)"];
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "Hello there" });
  const told = fake.posted.filter((m) => m.type === "status" || m.type === "busy");
  assert.deepEqual(told, [
    { type: "busy", busy: true, sessionId: "a" },
    { type: "status", sessionId: "a", message: "Waiting for the model" },
    { type: "status", sessionId: "a", message: "Rate limited by the API: trying again in 30 s (attempt 2 of 3)" },
    { type: "busy", busy: false, sessionId: "a" },
  ]);
});

test("New Chat during the first refresh stays chosen when that refresh ends", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  let open!: () => void;
  fake.getGate = new Promise((resolve) => (open = resolve));
  const ready = chat.receive({ type: "ready" }); // picks the newest, "a": its view is on its way
  await new Promise((resolve) => setImmediate(resolve));
  await chat.receive({ type: "newChat" });
  assert.equal(current.sessionId, "new1");
  open();
  await ready;
  assert.equal(current.sessionId, "new1");
  assert.equal(fake.lastSession().session?.sessionId, "new1");
});

test("a session chosen while New Chat's session is being made stays on show: it was chosen last", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  let made!: () => void;
  fake.createGate = new Promise((resolve) => (made = resolve));
  const creating = chat.receive({ type: "newChat" });
  await tick();
  await chat.receive({ type: "selectSession", sessionId: "b" });
  assert.equal(fake.lastSession().session?.sessionId, "b");
  made();
  await creating;
  assert.equal(current.sessionId, "b");
  assert.equal(fake.lastSession().session?.sessionId, "b");
  assert.ok(fake.sessions.has("new1"), "the new chat is made, for the list");
});

test("a refresh while New Chat's session is on its way shows the new chat, not the one before", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  assert.equal(current.sessionId, "a");
  let open!: () => void;
  fake.getGate = new Promise((resolve) => (open = resolve));
  const chosen = chat.receive({ type: "newChat" }); // created; its view is on its way
  await new Promise((resolve) => setImmediate(resolve));
  const refreshed = chat.onSessionChanged({ sessionId: "new1", reason: "create" }); // the server's word of it
  await refreshed;
  open();
  await chosen;
  assert.equal(current.sessionId, "new1");
  assert.equal(fake.lastSession().session?.sessionId, "new1");
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
  // a change while the send runs (the prompt stored, a tool round) shows at once
  const before = fake.sessionsPosted().length;
  await chat.onSessionChanged({ sessionId: "a", reason: "append" });
  assert.equal(chat.busy, true);
  assert.equal(fake.sessionsPosted().length, before + 1);
  assert.deepEqual(fake.lastSession().messages.map((m) => m.id), ["u0"], "the stored prompt, before the reply");
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

test("a send whose key the API refused says how to set another", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  const said = "Anthropic API error 401 (authentication_error): invalid x-api-key. Check the Anthropic API key (set a valid one), then try again.";
  fake.sendFailure = Object.assign(new Error(said), { data: { code: "api_error", status: 401, promptMessageId: "u1" } });

test("a send whose key cannot be sent says how to set another", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  const said = "the Anthropic API key cannot be sent: it holds a line break inside it. Check the Anthropic API key (set a valid one), then try again.";
  fake.sendFailure = Object.assign(new Error(said), { data: { code: "api_error", status: null, type: "authentication_error" } });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "hi" });
  const errors = fake.posted.filter((m) => m.type === "error");
  assert.equal(errors.length, 1);
  assert.equal((errors[0] as { message: string }).message, `${said} (Baton: Set API Key)`);
});
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "hi" });
  const errors = fake.posted.filter((m) => m.type === "error");
  assert.equal(errors.length, 1);
  assert.equal((errors[0] as { message: string }).message, `${said} (Baton: Set API Key)`);
});

test("a prompt past the context limit says what to do in the panel's words", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  const said =
    "the prompt is too long for the model: prompt is too long: 250000 tokens > 200000 maximum. Compact the conversation (baton/compact, or the 'Compact conversation' action) or start a new session, then send again with no content to continue.";
  fake.sendFailure = Object.assign(new Error(said), { data: { code: "prompt_too_long", actual: 250_000, limit: 200_000, promptMessageId: "u1" } });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "hi" });
  const errors = fake.posted.filter((m) => m.type === "error");
  assert.equal(errors.length, 1);
  assert.equal(
    (errors[0] as { message: string }).message,
    "The conversation is past the model's context limit (250,000 tokens, the limit 200,000): compact it (Baton: Compact Conversation) or start a New Chat, then Retry the prompt.",
  );
});

test("a request over the API's 32 MB names its images, not the context limit", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  const said = "the request would be 33,600,452 bytes, over the API's limit of 33,554,432 (32 MB) on a whole request ...";
  const data = { code: "prompt_too_long", requestBytes: 33_600_452, images: 7, documents: 0, mediaBytes: 33_598_880, promptMessageId: "u1" };
  fake.sendFailure = Object.assign(new Error(said), { data });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "hi" });
  const errors = fake.posted.filter((m) => m.type === "error");
  assert.equal(errors.length, 1);
  assert.equal(
    (errors[0] as { message: string }).message,
    "Its 7 images make the request 33,600,452 bytes, over the 33,554,432 (32 MB) the API takes in one, however few its tokens: compact the part holding them (Baton: Compact Conversation; a summary keeps no image or document) or start a New Chat, then Retry the prompt.",
  );
});

test("the API's own 413 for a request's bytes names its image, not the context limit", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  const said = "the API refused the request for its size in bytes (request_too_large), however few its tokens: ...";
  const data = { code: "prompt_too_long", status: 413, type: "request_too_large", images: 1, documents: 0, mediaBytes: 4_799_840 };
  fake.sendFailure = Object.assign(new Error(said), { data: { ...data, promptMessageId: "u1" } });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "hi" });
  const errors = fake.posted.filter((m) => m.type === "error");
  assert.equal(
    (errors[0] as { message: string }).message,
    "Its 1 image makes the request over the 33,554,432 (32 MB) the API takes in one, however few its tokens: compact the part holding them (Baton: Compact Conversation; a summary keeps no image or document) or start a New Chat, then Retry the prompt.",
  );
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
  assert.deepEqual(fake.posted.at(-1), { type: "error", message: "no such session", scope: "session", opening: true });
});

test("a long text's Open in editor shows the session document at the message's lines, read as a page of one", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"), [message("m1", "user", "hi"), message("m2", "assistant", "a long log"), message("m3", "user", "thanks")]);
  await chat.receive({ type: "selectSession", sessionId: "a" });
  await chat.receive({ type: "openMessage", messageId: "m2" });
  assert.deepEqual(fake.renderCalls, [["a", 1, 1]], "only the message's own page is rendered");
  assert.deepEqual(fake.documentsShown, [["a", { start: { line: 13, character: 0 }, end: { line: 22, character: 0 } }]]);
  // a message the view does not hold (a summarized one): the document, from its top
  await chat.receive({ type: "openMessage", messageId: "gone" });
  assert.deepEqual(fake.renderCalls.length, 1);
  assert.deepEqual(fake.documentsShown.at(-1), ["a", undefined]);
});

test("only the failure of the session the panel waits for ends its wait: an Apply failing meanwhile does not", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  let open!: () => void;
  fake.getGate = new Promise((resolve) => (open = resolve));
  const opening = chat.receive({ type: "selectSession", sessionId: "gone" });
  await tick();
  fake.applyFailure = new Error("no editor to apply to");
  await chat.receive({ type: "applyCode", code: "x = 1\n" });
  assert.deepEqual(fake.posted.at(-1), { type: "error", message: "no editor to apply to", scope: "session" });
  open();
  await opening;
  assert.deepEqual(fake.posted.at(-1), { type: "error", message: "no such session", scope: "session", opening: true });
  // a failure of a session asked for before the latest one: the panel waits for the latest
  fake.getGate = new Promise((resolve) => (open = resolve));
  const earlier = chat.receive({ type: "selectSession", sessionId: "gone" });
  await tick();
  await chat.receive({ type: "selectSession", sessionId: "b" });
  assert.equal(fake.lastSession().session?.sessionId, "b");
  open();
  await earlier;
  assert.deepEqual(fake.posted.at(-1), { type: "error", message: "no such session", scope: "session" });
});

test("a refresh while a session is being opened reads it after the open: the open shows it even if that read fails", async () => {
  // the refresh read b in the open's place and dropped the open's answer: when its own read
  // failed, the error was no answer to the open and the panel waited for b with none to come
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  let open!: () => void;
  fake.getGate = new Promise((resolve) => (open = resolve));
  const opening = chat.receive({ type: "selectSession", sessionId: "b" }); // b's view on its way
  await tick();
  fake.getFailure = Object.assign(new Error("connection lost"), { data: { code: "internal_error" } });
  const listed = fake.listed;
  const refreshed = chat.onSessionChanged({ sessionId: "c", reason: "create" });
  while (fake.listed === listed) await tick();
  open();
  await Promise.all([opening, refreshed]);
  while (!fake.posted.some((m) => m.type === "error")) await tick();
  assert.equal(fake.lastSession().session?.sessionId, "b", "the panel shows the session it asked for");
  assert.equal(current.sessionId, "b");
  assert.deepEqual(fake.posted.at(-1), { type: "error", message: "connection lost", scope: "session" }, "the read after it failed");
});

test("a conversation another window holds is read again when this window gets the focus back", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z", { readOnly: true }), [message("a1", "user", "first")]);
  await chat.receive({ type: "ready" });
  // the other window, which holds it, goes on writing to it
  fake.sessions.get("a")!.messages.push(message("a2", "assistant", "written elsewhere"));
  fake.sessions.get("a")!.session = { ...fake.sessions.get("a")!.session, title: "Renamed elsewhere" };
  await chat.windowFocused();
  assert.deepEqual(fake.lastSession().messages.map((m) => m.id), ["a1", "a2"]);
  assert.equal(current.session?.title, "Renamed elsewhere", "the meter's tooltip too");
});

test("a conversation this window holds is not read again on focus: nothing else writes it", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  const listed = fake.listed;
  await chat.windowFocused();
  assert.equal(fake.listed, listed);
});

test("another data dir: the panel and the meter leave a conversation it does not hold for its newest, or the welcome", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  // the server now reads another folder: "a" is not in it, "b" is
  fake.sessions.clear();
  fake.add(session("b", "2026-10-01T10:00:00Z"));
  await chat.dataDirChanged();
  assert.equal(fake.lastSession().session?.sessionId, "b");
  assert.equal(current.sessionId, "b", "the meter's session");
  fake.sessions.clear();
  await chat.dataDirChanged();
  assert.equal(fake.lastSession().session, null, "the welcome");
  assert.equal(current.session, undefined, "the meter on none");
});

test("without a server nothing is asked and the view says how to get one", async () => {
  const { fake, chat } = setup();
  fake.running = false;
  await chat.receive({ type: "ready" });
  assert.deepEqual(fake.posted, [{ type: "error", message: NO_SERVER, scope: "server" }]);
});

test("a read that fails as the server restarts says the server is not running only until it answers again", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  // the server crashed: the client restarts it, and a read meanwhile finds none running
  fake.listFailure = new ServerNotRunning();
  await chat.refresh();
  assert.deepEqual(fake.posted.at(-1), { type: "error", message: NO_SERVER, scope: "server" });
  // the client's own words for a request it could not send, or whose answer never came
  for (const code of [-32096, -32097]) {
    fake.listFailure = { code, message: code === -32096 ? "Client is not running" : "Pending response rejected since connection got disposed" };
    await chat.refresh();
    assert.deepEqual(fake.posted.at(-1), { type: "error", message: SERVER_GONE, scope: "server" });
  }
});

test("a send whose server stopped before it answered says so, and the prompt it had stored is not given back to send twice", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.key = true;
  await chat.receive({ type: "ready" });
  let open!: () => void;
  fake.sendGate = new Promise((resolve) => (open = resolve));
  // the prompt stored, the server is gone before its reply: the request's answer never comes
  fake.sendLost = { code: -32097, message: "Pending response rejected since connection got disposed" };
  const sending = chat.receive({ type: "send", text: "explain the parser" });
  await tick();
  open();
  await sending;
  assert.deepEqual(ofType(fake.posted, "error"), [{ type: "error", message: SERVER_GONE, scope: "session" }]);
  assert.equal(fake.posted.at(-1)?.type, "error", "said after the view read again");
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: true, text: "explain the parser", sessionId: "a" }]);
});

test("a send whose server stopped says so last: the read after it, while no server runs, does not take its place", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.key = true;
  await chat.receive({ type: "ready" });
  let open!: () => void;
  fake.sendGate = new Promise((resolve) => (open = resolve));
  fake.sendLost = { code: -32097, message: "Pending response rejected since connection got disposed" };
  const sending = chat.receive({ type: "send", text: "explain the parser" });
  await tick();
  fake.running = false; // the editor has not restarted it yet
  open();
  await sending;
  assert.deepEqual(ofType(fake.posted, "error"), [
    { type: "error", message: NO_SERVER, scope: "server" },
    { type: "error", message: SERVER_GONE, scope: "session" },
  ]);
  // the server back: the panel is read again, and the send's banner stays (it is the session's)
  fake.running = true;
  await chat.refresh();
  assert.equal(ofType(fake.posted, "error").length, 2);
});

// ---- a send keeps the prompt until the session holds it ----------------------------------

test("a send refused before the prompt is stored gives the text back and scopes its banner to the key", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.sendFailure = Object.assign(new Error("no API key"), { data: { code: "api_key_missing" } });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "keep these words" });
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: false, text: "keep these words", sessionId: "a" }]);
  assert.equal(ofType(fake.posted, "error")[0]?.scope, "apiKey");
  assert.deepEqual(fake.lastSession().messages, []);
});

test("a send that stored the prompt lets the draft go, even when the reply then fails", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.key = true;
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "first" });
  fake.sendFailure = Object.assign(new Error("overloaded"), { data: { code: "api_error", promptMessageId: "u2" } });
  await chat.receive({ type: "send", text: "second" });
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [
    { type: "sendOutcome", stored: true, text: "first", sessionId: "a" },
    { type: "sendOutcome", stored: true, text: "second", sessionId: "a" },
  ]);
  assert.deepEqual(ofType(fake.posted, "error"), [{ type: "error", message: "overloaded", scope: "session" }]);
});

test("a Stop after the prompt was stored counts as stored", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  const { open, sending } = await heldSend(fake, chat, "long one");
  await chat.receive({ type: "stop" });
  open();
  await sending;
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: true, text: "long one", sessionId: "a" }]);
});

test("a Stop after switching sessions reads the sent session's view for whether the prompt was stored", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"), [message("b1", "user", "elsewhere")]);
  await chat.receive({ type: "selectSession", sessionId: "a" });
  const { open, sending } = await heldSend(fake, chat, "long one");
  await chat.receive({ type: "stop", sessionId: "a" });
  await chat.receive({ type: "selectSession", sessionId: "b" });
  open();
  await sending;
  assert.deepEqual(fake.sessions.get("a")!.messages.map((m) => m.content), [[{ type: "text", text: "long one" }]]);
  // "a" holds the prompt: the text must not come back into the box to be sent twice
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: true, text: "long one", sessionId: "a" }]);
  assert.equal(fake.lastSession().session?.sessionId, "b", "the view stays on the session chosen");
});

test("a Stop during a tool round counts the prompt as stored: the view ends with the tools' results", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  const { open, sending } = await heldSend(fake, chat, "fix the parser");
  // the turn ran a tool round: its call and its result are stored after the prompt
  const view = fake.sessions.get("a")!.messages;
  view.push(
    message("a1", "assistant", "", { content: [{ type: "tool_use", id: "t1", name: "read_file", input: { path: "p.py" } }] }),
    message("u2", "user", "", { content: [{ type: "tool_result", tool_use_id: "t1", content: "1: import re" }] }),
  );
  await chat.receive({ type: "stop" });
  open();
  await sending;
  // the session holds the prompt: it must not come back into the box to be sent twice
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: true, text: "fix the parser", sessionId: "a" }]);
});

// ---- the draft's weight and the verdict before Send ---------------------------------------

test("the draft's usage once sent is asked for when the box rests, and only the latest is shown", async () => {
  const { fake, chat } = setup(30);
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "draft", text: "h" });
  await chat.receive({ type: "draft", text: "he" });
  await chat.receive({ type: "draft", text: "hello" });
  assert.deepEqual(fake.draftCalls, [], "nothing asked while typing");
  await tick(60);
  assert.deepEqual(fake.draftCalls, [["a", "hello"]]);
  const lines = ofType(fake.posted, "draftUsage");
  assert.deepEqual(lines.at(-1), {
    type: "draftUsage",
    sessionId: "a",
    draft: { text: "After sending: ~124K / 200K (62%)", verdict: "fits" },
  });
  await chat.receive({ type: "draft", text: "  " });
  assert.deepEqual(ofType(fake.posted, "draftUsage").at(-1), { type: "draftUsage", sessionId: "a", draft: null });
});

test("the draft's line is weighed again when the session's usage changes by itself (a new window, an exact count)", async () => {
  const { fake, chat } = setup(0);
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  await chat.receive({ type: "draft", text: "hello" });
  const lines = (): unknown[] => ofType(fake.posted, "draftUsage").flatMap((m) => (m.draft === null ? [] : [m.draft]));
  await tick(); // the box's rest (0 ms here) is a timer set before this one: its ask has been answered
  assert.deepEqual(lines().at(-1), { text: "After sending: ~124K / 200K (62%)", verdict: "fits" });
  // the context window setting went up: the usage alone changes, the session's messages do not
  fake.draftAnswer = (id, draft) => ({ ...usage({ sessionId: id, usedTokens: 124_300 + draft.text!.length, contextWindow: 1_000_000, percentUsed: 12 }), draft: info("fits") });
  const asked = fake.draftCalls.length;
  chat.onUsageChanged({ sessionId: "a", usage: usage({ sessionId: "a", contextWindow: 1_000_000 }) });
  chat.onUsageChanged({ sessionId: "b", usage: usage({ sessionId: "b" }) }); // not the one on show: no ask for it
  await tick();
  assert.deepEqual(lines().at(-1), { text: "After sending: ~124K / 1M (12%)", verdict: "fits" });
  assert.deepEqual(fake.draftCalls.slice(asked), [["a", "hello"]]);
});

test("an answer for a draft that changed meanwhile, or for another session, is dropped", async () => {
  const { fake, chat } = setup(0);
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  let open!: () => void;
  fake.draftGate = new Promise((resolve) => (open = resolve));
  await chat.receive({ type: "draft", text: "slow" });
  await tick(5);
  await chat.receive({ type: "selectSession", sessionId: "b" }); // the same draft, weighed again in b
  fake.draftGate = undefined;
  open();
  await tick(20);
  const shown = ofType(fake.posted, "draftUsage").filter((m) => m.draft !== null);
  assert.deepEqual(shown.map((m) => m.sessionId), ["b"]);
  assert.deepEqual(fake.draftCalls.map(([id]) => id), ["a", "b"]);
});

test("a prompt that cannot fit is not sent: the panel says why and the text comes back", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id, state: "blocking" }), draft: info("tooLarge", "This prompt is about 300,000 tokens.") });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "a huge paste" });
  assert.deepEqual(fake.calls, []);
  assert.deepEqual(ofType(fake.posted, "error"), [
    { type: "error", message: "Not sent: This prompt is about 300,000 tokens.", scope: "session" },
  ]);
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: false, text: "a huge paste", sessionId: "a" }]);
});

test("over the limit with auto-compact off, the send compacts first and says so", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id }), draft: info("compactFirst", "Over the limit: compact first.") });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "next step" });
  assert.deepEqual(fake.calls, ["compact", "send"]);
  const notices = ofType(fake.posted, "notice").map((m) => m.message);
  assert.equal(notices[0], "Over the limit: compact first. Compacting…");
  assert.match(notices[1]!, /180K -> 20K tokens/);
  assert.equal(ofType(fake.posted, "sendOutcome")[0]?.stored, true);
});

test("when the compaction first fails the prompt is not sent and the panel says why", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id }), draft: info("compactFirst", "Over the limit.") });
  fake.compactFailure = Object.assign(new Error("nothing to compact: the view is one message"), { data: { code: "nothing_to_compact" } });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "next step" });
  assert.deepEqual(fake.calls, ["compact"]);
  assert.deepEqual(ofType(fake.posted, "error").map((m) => m.message), [
    "Not sent: the conversation could not be compacted first (nothing to compact: the view is one message).",
  ]);
  assert.equal(ofType(fake.posted, "sendOutcome")[0]?.stored, false);
});

test("the Compacting… notice goes when the compaction before a send fails or is stopped", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id }), draft: info("compactFirst", "Over the limit.") });
  fake.compactFailure = Object.assign(new Error("nothing to compact"), { data: { code: "nothing_to_compact" } });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "next step" });
  const compacting = ofType(fake.posted, "notice").find((m) => m.message.endsWith("Compacting…"));
  assert.equal(compacting?.about, "compactFirst", "the notice says what can make it stale");
  assert.deepEqual(ofType(fake.posted, "noticeEnd"), [{ type: "noticeEnd", sessionId: "a", about: "compactFirst" }]);
  // stopped: the compaction is cancelled, the prompt not sent, the notice goes too
  fake.posted = [];
  fake.compactFailure = { code: -32800, message: "cancelled" };
  await chat.receive({ type: "send", text: "next step" });
  assert.equal(ofType(fake.posted, "error").length, 0);
  assert.deepEqual(ofType(fake.posted, "noticeEnd"), [{ type: "noticeEnd", sessionId: "a", about: "compactFirst" }]);
  assert.equal(ofType(fake.posted, "sendOutcome")[0]?.stored, false);
});

test("past the auto-compact point the send goes, announced; the outcome arrives as a notice", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id }), draft: info("autoCompact", "Baton compacts the conversation first.") });
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "go on" });
  assert.deepEqual(fake.calls, ["send"]);
  assert.deepEqual(ofType(fake.posted, "notice"), [
    { type: "notice", sessionId: "a", message: "Baton compacts the conversation first.", tone: "info" },
  ]);
  chat.onAutoCompact({ sessionId: "a", outcome: "failed", tokensBefore: 175_000, tokensAfter: 175_000, message: "Auto-compact failed (x)." });
  chat.onAutoCompact({ sessionId: "other", outcome: "compacted", tokensBefore: 9, tokensAfter: 1, message: "elsewhere" });
  assert.deepEqual(ofType(fake.posted, "notice").at(-1), {
    type: "notice",
    sessionId: "a",
    message: "Auto-compact failed (x).",
    tone: "warning",
  });
  assert.equal(ofType(fake.posted, "notice").length, 2);
});

test("an auto-compaction that failed in a session not on show is said once that session is on show; one that succeeded is not", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  const failed = "Auto-compact failed (the summary was empty): the request goes out with 175,000 tokens in context.";
  chat.onAutoCompact({ sessionId: "b", outcome: "failed", tokensBefore: 175_000, tokensAfter: 175_000, message: failed });
  assert.equal(ofType(fake.posted, "notice").length, 0, "not in the session on show");
  await chat.receive({ type: "selectSession", sessionId: "b" });
  const shown = fake.posted.findIndex((m) => m.type === "session" && m.session?.sessionId === "b");
  const notice = fake.posted.findIndex((m) => m.type === "notice");
  assert.ok(shown >= 0 && notice > shown, "after its session, which the panel shows first");
  assert.deepEqual(fake.posted[notice], { type: "notice", sessionId: "b", message: failed, tone: "warning" });
  // said once
  await chat.receive({ type: "selectSession", sessionId: "a" });
  await chat.receive({ type: "selectSession", sessionId: "b" });
  assert.equal(ofType(fake.posted, "notice").length, 1);
  // a success is brief news: not kept for later
  chat.onAutoCompact({ sessionId: "a", outcome: "compacted", tokensBefore: 175_000, tokensAfter: 21_000, message: "Auto-compacted." });
  await chat.receive({ type: "selectSession", sessionId: "a" });
  assert.equal(ofType(fake.posted, "notice").length, 1);
});

test("an auto-compaction failure kept for a session not on show goes with that session's delete", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  const failed = "Auto-compact failed (the summary was empty): the request goes out with 175,000 tokens in context.";
  chat.onAutoCompact({ sessionId: "b", outcome: "failed", tokensBefore: 175_000, tokensAfter: 175_000, message: failed });
  // told deleted (another server deleted it, or its transcript was moved away), then back in the list
  await chat.onSessionChanged({ sessionId: "b", reason: "delete" });
  await chat.receive({ type: "selectSession", sessionId: "b" });
  assert.ok(fake.posted.some((m) => m.type === "session" && m.session?.sessionId === "b"), "b is on show");
  assert.equal(ofType(fake.posted, "notice").length, 0, "nothing said of a session deleted since");
});

test("switching the model shows the new usage at once and says when it no longer fits", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  fake.modelWarning = "claude-sonnet-4-5: 300,000 tokens in use, over its limit: compact before the next send.";
  const result = await chat.switchModel("claude-sonnet-4-5");
  assert.equal(result?.warning, fake.modelWarning);
  assert.equal(current.usage?.state, "blocking");
  assert.equal(ofType(fake.posted, "usage").at(-1)?.usage.state, "blocking");
  assert.deepEqual(ofType(fake.posted, "notice").at(-1), { type: "notice", sessionId: "a", message: fake.modelWarning, tone: "warning", about: "model" });
});

test("a model chosen in the panel switches the session on show, though the host is already opening another", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z", { model: "claude-opus-5" }));
  fake.add(session("b", "2026-11-02T10:00:00Z", { model: "claude-opus-5" }));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  let open!: () => void;
  fake.listGate = new Promise((resolve) => (open = resolve));
  const opening = chat.receive({ type: "selectSession", sessionId: "b" }); // b is current, its picture on its way
  while (current.sessionId !== "b") await tick();
  await chat.receive({ type: "setModel", model: "claude-sonnet-4-5", sessionId: "a" });
  open();
  await opening;
  assert.equal(fake.sessions.get("a")?.session.model, "claude-sonnet-4-5", "the session whose picker it was");
  assert.equal(fake.sessions.get("b")?.session.model, "claude-opus-5", "not the one on its way");
  assert.equal(current.session?.model, "claude-opus-5", "the meter keeps b's model");
  assert.deepEqual(ofType(fake.posted, "usage").filter((m) => m.sessionId === "b"), []);
});

test("the palette's model switch goes to the session it was started for, whichever is on show once chosen", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z", { model: "claude-opus-5" }));
  fake.add(session("b", "2026-11-02T10:00:00Z", { model: "claude-opus-5" }));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  await chat.receive({ type: "selectSession", sessionId: "b" }); // while the quick pick was open
  const result = await chat.switchModel("claude-sonnet-4-5", "a");
  assert.equal(result?.session.sessionId, "a");
  assert.equal(fake.sessions.get("a")?.session.model, "claude-sonnet-4-5");
  assert.equal(current.session?.model, "claude-opus-5", "b, on show, is as it was");
});

test("the warning of a model switch goes when a switch back makes the conversation fit", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  fake.modelWarning = "claude-haiku-3: 150,000 tokens in use, over its limit: compact before the next send.";
  await chat.receive({ type: "setModel", model: "claude-haiku-3" });
  assert.equal(ofType(fake.posted, "notice").at(-1)?.about, "model");
  assert.deepEqual(ofType(fake.posted, "noticeEnd"), []);
  fake.modelWarning = undefined;
  await chat.receive({ type: "setModel", model: "claude-opus-5" });
  // the panel must not go on saying the conversation is over the limit
  assert.deepEqual(ofType(fake.posted, "noticeEnd"), [{ type: "noticeEnd", sessionId: "a", about: "model" }]);
});

test("a long view goes as its last page; the rest comes when the view asks for it", async () => {
  const { fake, chat } = setup();
  const view = Array.from({ length: VIEW_PAGE + 30 }, (_, i) => message(`m${i}`, i % 2 ? "assistant" : "user", `text ${i}`));
  fake.add(session("long", "2026-11-30T10:00:00Z"), view);
  await chat.receive({ type: "ready" });
  const shown = fake.lastSession();
  assert.equal(shown.offset, 30);
  assert.equal(shown.totalMessages, VIEW_PAGE + 30);
  assert.deepEqual(shown.messages.map((m) => m.id), view.slice(30).map((m) => m.id));
  await chat.receive({ type: "loadEarlier", sessionId: "long", before: 30 });
  const earlier = ofType(fake.posted, "earlier");
  assert.equal(earlier.length, 1);
  assert.deepEqual(earlier[0]!.messages.map((m) => m.id), view.slice(0, 30).map((m) => m.id));
  assert.equal(earlier[0]!.totalMessages, VIEW_PAGE + 30);
  // Another session's (or a stale) request is not answered: its own update is on its way.
  await chat.receive({ type: "loadEarlier", sessionId: "other", before: 30 });
  await chat.receive({ type: "loadEarlier", sessionId: "long", before: VIEW_PAGE + 31 });
  assert.equal(ofType(fake.posted, "earlier").length, 1);
  // A short view goes whole, without a page's offset.
  fake.add(session("short", "2026-12-01T10:00:00Z"), view.slice(0, 3));
  await chat.receive({ type: "selectSession", sessionId: "short" });
  assert.equal(fake.lastSession().offset, undefined);
  assert.equal(fake.lastSession().messages.length, 3);
});

test("a code block's Insert and Apply go to the editor, with the file the block names", async () => {
  const { fake, chat } = setup();
  await chat.receive({ type: "insertCode", code: "x = 1\n" });
  await chat.receive({ type: "applyCode", code: "y = 2\n", file: "src/app.py" });
  await chat.receive({ type: "applyCode", code: "z = 3\n" });
  assert.deepEqual(fake.code, [
    ["insert", "x = 1\n", undefined],
    ["apply", "y = 2\n", "src/app.py"],
    ["apply", "z = 3\n", undefined],
  ]);
});

test("edit and resend: the prompt and what followed leave the view, then the new text is sent", async () => {
  const { fake, chat } = setup();
  fake.key = true;
  fake.add(session("s", "2026-11-30T10:00:00Z"), [
    message("u1", "user", "first"),
    message("a1", "assistant", "one"),
    message("u2", "user", "wrong question"),
    message("a2", "assistant", "two"),
  ]);
  await chat.receive({ type: "ready" });
  fake.calls = [];
  await chat.receive({ type: "edit", messageId: "u2", text: "right question" });
  assert.deepEqual(fake.calls, ["rewind u2", "send"]);
  const texts = fake.lastSession().messages.map((m) => m.content.map((b) => (b.type === "text" ? b.text : "")).join(""));
  assert.deepEqual(texts, ["first", "one", "right question", "Reply"]);
  const notice = ofType(fake.posted, "notice").at(-1);
  assert.match(notice?.message ?? "", /^2 messages left the view .*Undo Compaction/);
  assert.deepEqual(ofType(fake.posted, "sendOutcome").at(-1), { type: "sendOutcome", stored: true, text: "right question", sessionId: "s" });
});

test("an edit or a Retry that sends nothing puts back what its rewind took out of the view", async () => {
  const { fake, chat } = setup();
  const before = [message("u1", "user", "first"), message("a1", "assistant", "one"), message("u2", "user", "wrong"), message("a2", "assistant", "two")];
  fake.add(session("s", "2026-11-30T10:00:00Z"), [...before]);
  await chat.receive({ type: "ready" });
  const ids = (): string[] => fake.lastSession().messages.map((m) => m.id);
  // no key: the server refuses the send before storing anything
  fake.sendFailure = Object.assign(new Error("no API key"), { data: { code: "api_key_missing" } });
  fake.calls = [];
  await chat.receive({ type: "edit", messageId: "u2", text: "right" });
  assert.deepEqual(fake.calls, ["rewind u2", "send", "uncompact bnd_rw1"]);
  assert.deepEqual(ids(), ["u1", "a1", "u2", "a2"]);
  assert.deepEqual(ofType(fake.posted, "sendOutcome").at(-1), { type: "sendOutcome", stored: false, text: "right", sessionId: "s" });
  assert.deepEqual(ofType(fake.posted, "noticeEnd").at(-1), { type: "noticeEnd", sessionId: "s", about: "rewind" });
  assert.match(ofType(fake.posted, "error").at(-1)?.message ?? "", /No API key/);
  fake.calls = [];
  await chat.receive({ type: "retry" });
  assert.deepEqual(fake.calls, ["rewind a2", "send (continue)", "uncompact bnd_rw2"]);
  assert.deepEqual(ids(), ["u1", "a1", "u2", "a2"]);
  // a prompt too large to send: refused before the send
  fake.sendFailure = undefined;
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id }), draft: info("tooLarge", "The prompt alone is past the window.") });
  fake.calls = [];
  await chat.receive({ type: "edit", messageId: "u2", text: "x".repeat(50) });
  assert.deepEqual(fake.calls, ["rewind u2", "uncompact bnd_rw3"]);
  assert.deepEqual(ids(), ["u1", "a1", "u2", "a2"]);
  // an edit whose send fails after the server stored its prompt keeps the rewind: the new prompt stands
  fake.draftAnswer = (id, draft) => ({ ...usage({ sessionId: id, usedTokens: 124_300 + draft.text!.length }), draft: info("fits") });
  fake.sendFailure = Object.assign(new Error("Overloaded (529)"), { data: { code: "api_error", promptMessageId: "u2'" } });
  fake.calls = [];
  await chat.receive({ type: "edit", messageId: "u2", text: "right again" });
  assert.deepEqual(fake.calls, ["rewind u2", "send"]);
  assert.equal(fake.lastSession().messages.at(-1)?.content[0]?.type === "text" && fake.lastSession().messages.at(-1)?.content[0]?.text, "right again");
});

test("a reply the model declined is said in the panel: it left the view, kept, undone like a rewind", async () => {
  const { fake, chat } = setup();
  fake.key = true;
  fake.add(session("s", "2026-11-30T10:00:00Z"), [message("u1", "user", "first"), message("a1", "assistant", "one")]);
  await chat.receive({ type: "ready" });
  fake.refused = true;
  await chat.receive({ type: "send", text: "something it declines" });
  const notice = ofType(fake.posted, "notice").at(-1);
  assert.equal(notice?.tone, "warning");
  assert.equal(notice?.about, "rewind");
  assert.match(notice?.message ?? "", /^The model declined to answer; its reply left the view .*Undo Compaction/);
  assert.deepEqual(ofType(fake.posted, "sendOutcome").at(-1), { type: "sendOutcome", stored: true, text: "something it declines", sessionId: "s" });
});

test("the notice of an edit goes once an Undo brings what it took out back into the view", async () => {
  const { fake, chat } = setup();
  fake.key = true;
  const before = [message("u1", "user", "first"), message("a1", "assistant", "one"), message("u2", "user", "wrong")];
  fake.add(session("s", "2026-11-30T10:00:00Z"), [...before, message("a2", "assistant", "two")]);
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "edit", messageId: "u2", text: "right" });
  assert.equal(ofType(fake.posted, "notice").at(-1)?.about, "rewind");
  // the new prompt and its reply are in the view, what the edit took out is not: it stays
  await chat.onSessionChanged({ sessionId: "s", reason: "reply" });
  assert.deepEqual(ofType(fake.posted, "noticeEnd"), []);
  // Undo: the rewound messages are back
  const entry = fake.sessions.get("s")!;
  entry.messages = [...before, message("a2", "assistant", "two"), ...entry.messages.slice(2)];
  await chat.onSessionChanged({ sessionId: "s", reason: "uncompact" });
  assert.deepEqual(ofType(fake.posted, "noticeEnd"), [{ type: "noticeEnd", sessionId: "s", about: "rewind" }]);
  // said once: a later change does not say it again
  await chat.onSessionChanged({ sessionId: "s", reason: "append" });
  assert.equal(ofType(fake.posted, "noticeEnd").length, 1);
});

test("retry: the last reply leaves the view and a continuation asks for a new one", async () => {
  const { fake, chat } = setup();
  fake.key = true;
  fake.add(session("s", "2026-11-30T10:00:00Z"), [
    message("u1", "user", "question"),
    message("a1", "assistant", "a bad answer"),
  ]);
  await chat.receive({ type: "ready" });
  fake.calls = [];
  const outcomes = ofType(fake.posted, "sendOutcome").length;
  await chat.receive({ type: "retry" });
  assert.deepEqual(fake.calls, ["rewind a1", "send (continue)"]);
  assert.deepEqual(fake.lastSession().messages.map((m) => m.id), ["u1", "a1'"]); // a new reply, an id of its own
  assert.equal(fake.lastSession().messages[1]!.content[0]!.type === "text" && fake.lastSession().messages[1]!.content[0]!.text, "Reply");
  // no prompt went from the box, so the box is left as it is
  assert.equal(ofType(fake.posted, "sendOutcome").length, outcomes);
  // nothing to retry without a prompt in the view
  fake.add(session("empty", "2026-12-01T10:00:00Z"), []);
  await chat.receive({ type: "selectSession", sessionId: "empty" });
  fake.calls = [];
  await chat.receive({ type: "retry" });
  assert.deepEqual(fake.calls, []);
});

// ---- the pickers --------------------------------------------------------------------------

function lastOf<T extends ToWebview["type"]>(fake: Fake, type: T): Extract<ToWebview, { type: T }> {
  const found = fake.posted.filter((m): m is Extract<ToWebview, { type: T }> => m.type === type);
  assert.ok(found.length > 0, `a ${type} message was posted`);
  return found[found.length - 1]!;
}

test("the model picker gets the catalog with the current session's model marked, and a choice switches it", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-12-01T10:00:00Z"));
  await chat.select("a");
  await chat.receive({ type: "listModels" });
  const models = lastOf(fake, "models");
  assert.deepEqual(fake.calls.filter((c) => c.startsWith("models")), ["models a"]);
  assert.equal(models.catalog?.source, "configured");
  assert.deepEqual(models.catalog?.models.filter((m) => m.current).map((m) => m.id), ["claude-sonnet-4-5"]);

  await chat.receive({ type: "setModel", model: "claude-opus-5" });
  assert.equal(current.session?.model, "claude-opus-5");
  const usagePosted = lastOf(fake, "usage");
  assert.equal(usagePosted.usage.model, "claude-opus-5"); // the meter's figures follow the switch
  await chat.receive({ type: "listModels" });
  assert.deepEqual(lastOf(fake, "models").catalog?.models.filter((m) => m.current).map((m) => m.id), ["claude-opus-5"]);
});

test("a model list that fails is said in the picker, not as a banner", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-12-01T10:00:00Z"));
  await chat.select("a");
  fake.modelsFailure = Object.assign(new Error("server gone"), { data: { code: "internal_error" } });
  await chat.receive({ type: "listModels" });
  const models = lastOf(fake, "models");
  assert.equal(models.catalog, null);
  assert.match(models.message ?? "", /could not be listed: server gone/);
  assert.equal(fake.posted.filter((m) => m.type === "error").length, 0);
});

test("the session picker lists, renames and deletes; deleting the current session shows the newest", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("old", "2026-11-01T10:00:00Z"));
  fake.add(session("new", "2026-12-01T10:00:00Z"));
  await chat.select("old");
  await chat.receive({ type: "listSessions" });
  assert.deepEqual(lastOf(fake, "sessions").sessions.map((s) => s.sessionId).sort(), ["new", "old"]);

  await chat.receive({ type: "renameSession", sessionId: "new", title: "Parser fixes" });
  assert.ok(fake.calls.includes("rename new Parser fixes"));
  assert.deepEqual(
    lastOf(fake, "sessions").sessions.filter((s) => s.sessionId === "new").map((s) => s.title),
    ["Parser fixes"],
  );
  await chat.receive({ type: "renameSession", sessionId: "old", title: "Kept work" });
  assert.equal(lastOf(fake, "session").session?.title, "Kept work"); // the header's title follows

  await chat.receive({ type: "deleteSession", sessionId: "old" });
  assert.ok(fake.calls.includes("delete old"));
  assert.equal(current.sessionId, "new");
  assert.equal(lastOf(fake, "session").session?.sessionId, "new");
  assert.deepEqual(lastOf(fake, "sessions").sessions.map((s) => s.sessionId), ["new"]);
});

test("a rename the server refuses is shown as an error and changes nothing", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-12-01T10:00:00Z"));
  await chat.select("a");
  const posted = fake.posted.length;
  await chat.receive({ type: "renameSession", sessionId: "missing", title: "X" });
  const errors = fake.posted.slice(posted).filter((m) => m.type === "error");
  assert.equal(errors.length, 1);
  assert.equal(fake.sessions.get("a")!.session.title, "Chat a");
  assert.equal(fake.posted.slice(posted).filter((m) => m.type === "sessions").length, 0);
});

test("a summary card's list of what its compaction replaced is read a page at a time; a failure is said there", async () => {
  const { fake, chat } = setup();
  fake.add(session("s", "2026-12-01T10:00:00Z"), [message("sum", "user", "summary")]);
  const gone = Array.from({ length: REPLACED_PAGE + 5 }, (_, i) => message(`old${i}`, i % 2 ? "assistant" : "user", `old ${i}`));
  fake.replacedBy.set("cmp_1", gone);
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "loadReplaced", sessionId: "s", boundaryId: "cmp_1", offset: 0 });
  await chat.receive({ type: "loadReplaced", sessionId: "s", boundaryId: "cmp_1", offset: REPLACED_PAGE });
  assert.deepEqual(fake.replacedCalls, [
    ["s", "cmp_1", 0, REPLACED_PAGE],
    ["s", "cmp_1", REPLACED_PAGE, REPLACED_PAGE],
  ]);
  const pages = ofType(fake.posted, "replaced");
  assert.deepEqual(pages.map((p) => [p.boundaryId, p.offset, p.messages.length, p.totalMessages, p.error]), [
    ["cmp_1", 0, REPLACED_PAGE, REPLACED_PAGE + 5, undefined],
    ["cmp_1", REPLACED_PAGE, 5, REPLACED_PAGE + 5, undefined],
  ]);
  assert.deepEqual([...pages[0]!.messages, ...pages[1]!.messages].map((m) => m.id), gone.map((m) => m.id));
  await chat.receive({ type: "loadReplaced", sessionId: "s", boundaryId: "cmp_gone", offset: 0 });
  const failed = ofType(fake.posted, "replaced").at(-1)!;
  assert.equal(failed.boundaryId, "cmp_gone");
  assert.deepEqual(failed.messages, []);
  assert.match(failed.error ?? "", /no compaction cmp_gone/);
  assert.equal(ofType(fake.posted, "error").length, 0); // said on the card, not in the banner
});

test("the session's task list goes to the view with the session, as the server gives it", async () => {
  const { fake, chat } = setup();
  const todos: TodoEntry[] = [
    { content: "Read the spec", status: "completed", activeForm: "Reading the spec" },
    { content: "Write it", status: "in_progress", activeForm: "Writing it" },
  ];
  fake.add(session("t", "2026-12-01T10:00:00Z"), [message("u", "user", "go")]);
  fake.sessions.get("t")!.todos = todos;
  fake.add(session("none", "2026-11-01T10:00:00Z"), [message("v", "user", "hi")]);
  await chat.receive({ type: "ready" });
  assert.deepEqual(fake.lastSession().todos, todos);
  await chat.receive({ type: "selectSession", sessionId: "none" });
  assert.equal(fake.lastSession().todos, undefined);
  assert.equal("todos" in fake.lastSession(), false);
});

test("a panel reloaded while a reply streams is told it is busy, and a second send comes back", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  const { open, sending } = await heldSend(fake, chat, "long one");
  fake.posted.length = 0;
  await chat.receive({ type: "ready" }); // hidden and shown again: a fresh webview
  assert.deepEqual(ofType(fake.posted, "busy"), [{ type: "busy", busy: true, sessionId: "a" }]);
  await chat.receive({ type: "send", text: "second prompt" });
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: false, text: "second prompt", sessionId: "a" }]);
  open();
  await sending;
  assert.deepEqual(fake.calls, ["send"]); // the second was never sent
});

test("a panel reloaded, or back on the session, while a reply streams gets the reply's text so far, then the rest", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  const { open, sending } = await heldSend(fake, chat, "long one");
  chat.onDelta({ sessionId: "a", messageId: "r1", text: "Once upon " });
  chat.onDelta({ sessionId: "a", messageId: "r1", text: "a time" });
  /** What a webview fresh since `since` would hold of r1: the deltas it was posted since. */
  const streamed = (since: number): string =>
    ofType(fake.posted.slice(since), "delta")
      .filter((d) => d.messageId === "r1")
      .map((d) => d.text)
      .join("");
  let since = fake.posted.length;
  await chat.receive({ type: "ready" }); // the window reloaded: a fresh webview
  chat.onDelta({ sessionId: "a", messageId: "r1", text: " there" });
  assert.equal(streamed(since), "Once upon a time there");
  // a refresh of the session on show (a tool's result stored, say) posts nothing twice
  since = fake.posted.length;
  await chat.onSessionChanged({ sessionId: "a", reason: "append" });
  assert.ok(ofType(fake.posted.slice(since), "session").length > 0);
  assert.equal(streamed(since), "");
  // another session shown meanwhile, then this one again: the webview dropped the reply
  await chat.receive({ type: "selectSession", sessionId: "b" });
  chat.onDelta({ sessionId: "a", messageId: "r1", text: " was" });
  since = fake.posted.length;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  chat.onDelta({ sessionId: "a", messageId: "r1", text: " a reply." });
  assert.equal(streamed(since), "Once upon a time there was a reply.");
  open();
  await sending;
  since = fake.posted.length;
  await chat.receive({ type: "ready" }); // once the send has ended there is nothing to replay
  assert.equal(streamed(since), "");
});

test("an edit sent while a reply streams comes back to the box, nothing rewound", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"), [message("u0", "user", "first"), message("a1", "assistant", "r")]);
  await chat.receive({ type: "ready" });
  const { open, sending } = await heldSend(fake, chat, "long one");
  await chat.receive({ type: "edit", messageId: "u0", text: "my carefully edited prompt" });
  open();
  await sending;
  assert.ok(ofType(fake.posted, "sendOutcome").some((o) => !o.stored && o.text === "my carefully edited prompt"));
  assert.ok(!fake.calls.some((call) => call.startsWith("rewind")));
});

test("Retry on a prompt whose reply failed asks for a reply to it, nothing rewound or sent twice", async () => {
  const { fake, chat } = setup();
  fake.key = true;
  fake.add(session("s", "2026-11-30T10:00:00Z"), [message("u1", "user", "q1"), message("a1", "assistant", "r1")]);
  await chat.receive({ type: "ready" });
  fake.sendFailure = Object.assign(new Error("Overloaded (529)"), { data: { code: "api_error", promptMessageId: "u2" } });
  await chat.receive({ type: "send", text: "q2" });
  fake.sendFailure = undefined;
  assert.equal(fake.lastSession().messages.at(-1)?.role, "user");
  fake.calls = [];
  await chat.receive({ type: "retry" });
  assert.deepEqual(fake.calls, ["send (continue)"]);
  assert.deepEqual(fake.lastSession().messages.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
});

test("what is typed while a reply streams keeps its draft line once the send ends", async () => {
  const { fake, chat } = setup(0);
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "ready" });
  const { open, sending } = await heldSend(fake, chat, "first");
  await chat.receive({ type: "draft", text: "next question typed meanwhile" });
  await tick(5);
  open();
  await sending;
  await tick(5);
  fake.posted.length = 0;
  await chat.onSessionChanged({ sessionId: "a", reason: "append" }); // a later change re-reads the view
  await tick(5);
  const shown = ofType(fake.posted, "draftUsage");
  assert.ok(shown.length > 0 && shown.at(-1)?.draft !== null);
});

test("a send that fails after the user switched sessions shows its banner on its own session, not on the one on show", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"), [message("b1", "user", "elsewhere")]);
  fake.key = true;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  const { open, sending } = await heldSend(fake, chat, "long one");
  await chat.receive({ type: "selectSession", sessionId: "b" });
  fake.sendFailure = Object.assign(new Error("overloaded"), { data: { code: "api_error", promptMessageId: "u0" } });
  const before = fake.posted.length;
  open();
  await sending;
  assert.equal(fake.lastSession().session?.sessionId, "b");
  assert.deepEqual(ofType(fake.posted.slice(before), "error"), [], "no banner over b for a's failure");
  // back on "a", its failure is said there, once
  await chat.receive({ type: "selectSession", sessionId: "a" });
  const shownA = fake.posted.lastIndexOf(fake.lastSession());
  assert.deepEqual(ofType(fake.posted.slice(shownA), "error"), [{ type: "error", message: "overloaded", scope: "session" }]);
  await chat.receive({ type: "selectSession", sessionId: "b" });
  await chat.receive({ type: "selectSession", sessionId: "a" });
  assert.equal(ofType(fake.posted, "error").length, 1);
});

test("a compaction before a send that fails after the user switched sessions says so on its own session too", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"), [message("b1", "user", "elsewhere")]);
  fake.key = true;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id }), draft: info("compactFirst", "Over the limit.") });
  fake.compactFailure = Object.assign(new Error("the summary request failed"), { data: { code: "api_error" } });
  let open!: () => void;
  fake.compactGate = new Promise((resolve) => (open = resolve));
  const sending = chat.receive({ type: "send", text: "next step" });
  while (!fake.calls.includes("compact")) await tick();
  await chat.receive({ type: "selectSession", sessionId: "b" });
  const before = fake.posted.length;
  open();
  await sending;
  assert.equal(fake.lastSession().session?.sessionId, "b");
  assert.deepEqual(ofType(fake.posted.slice(before), "error"), [], "no banner over b for a's failure");
  await chat.receive({ type: "selectSession", sessionId: "a" });
  const shownA = fake.posted.lastIndexOf(fake.lastSession());
  assert.deepEqual(ofType(fake.posted.slice(shownA), "error"), [
    { type: "error", message: "Not sent: the conversation could not be compacted first (the summary request failed).", scope: "session" },
  ]);
});

test("a Stop while the prompt is weighed before it goes sends nothing: the text comes back", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.key = true;
  await chat.receive({ type: "ready" });
  let open!: () => void;
  fake.draftGate = new Promise((resolve) => (open = resolve));
  const sending = chat.receive({ type: "send", text: "never mind" });
  await tick();
  await chat.receive({ type: "stop" });
  open();
  await sending;
  assert.deepEqual(fake.calls, [], "nothing sent after the Stop");
  assert.deepEqual(fake.sessions.get("a")!.messages, []);
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: false, text: "never mind", sessionId: "a" }]);
  assert.deepEqual(ofType(fake.posted, "error"), []);
});

test("the Cancel of the compaction a send runs first stops it, and the prompt is not sent", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.key = true;
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id }), draft: info("compactFirst", "Over the limit.") });
  await chat.receive({ type: "ready" });
  let open!: () => void;
  fake.compactGate = new Promise((resolve) => (open = resolve));
  const sending = chat.receive({ type: "send", text: "next step" });
  while (!fake.calls.includes("compact")) await tick();
  fake.compactProgress.cancel(); // the notification's Cancel button
  open();
  await sending;
  assert.deepEqual(fake.calls, ["compact"], "the compaction was stopped and nothing sent");
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: false, text: "next step", sessionId: "a" }]);
  assert.deepEqual(ofType(fake.posted, "error"), []);
});

test("a send while another session is being opened goes to the session on show, not to the one on its way", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  fake.key = true;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  // b is chosen: it is current for the host once read, while the panel still shows a
  let open!: () => void;
  fake.listGate = new Promise((resolve) => (open = resolve));
  const opening = chat.receive({ type: "selectSession", sessionId: "b" });
  await tick();
  assert.equal(current.sessionId, "b");
  assert.equal(fake.lastSession().session?.sessionId, "a", "the panel still shows a");
  const message = { type: "send", text: "for what I see", sessionId: "a" } as const;
  await chat.receive(message);
  open();
  await opening;
  assert.deepEqual(fake.sessions.get("a")!.messages.map((m) => m.role), ["user", "assistant"]);
  assert.deepEqual(fake.sessions.get("b")!.messages, []);
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [{ type: "sendOutcome", stored: true, text: "for what I see", sessionId: "a" }]);
  assert.equal(current.sessionId, "b", "the choice still stands");
});

test("an Undo while another session is being opened undoes the compaction of the session on show", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  let open!: () => void;
  fake.listGate = new Promise((resolve) => (open = resolve));
  const opening = chat.receive({ type: "selectSession", sessionId: "b" });
  await tick();
  assert.equal(current.sessionId, "b", "b is current for the host while the panel still shows a");
  await chat.receive({ type: "undo", boundaryId: "bnd_a", sessionId: "a" });
  open();
  await opening;
  assert.deepEqual(fake.undoSessions, ["a"]);
});

test("a reply streaming in one session keeps its Stop and its returned prompt to that session while another is on show", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"), [message("b1", "user", "elsewhere")]);
  fake.key = true;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  // the prompt is being weighed when the user goes to b
  let open!: () => void;
  fake.draftGate = new Promise((resolve) => (open = resolve));
  const sending = chat.receive({ type: "send", text: "a's question", sessionId: "a" });
  await tick();
  assert.deepEqual(ofType(fake.posted, "busy"), [{ type: "busy", busy: true, sessionId: "a" }], "the busy session is named");
  await chat.receive({ type: "selectSession", sessionId: "b" });
  // a Stop from b's view is not a's
  await chat.receive({ type: "stop", sessionId: "b" });
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id, state: "blocking" }), draft: info("tooLarge", "Too large.") });
  const before = fake.posted.length;
  open();
  await sending;
  assert.deepEqual(fake.calls, [], "nothing sent: the prompt did not fit");
  assert.deepEqual(ofType(fake.posted.slice(before), "sendOutcome"), [], "a's prompt does not come back into b's box");
  assert.deepEqual(ofType(fake.posted.slice(before), "busy"), [{ type: "busy", busy: false, sessionId: "a" }]);
  // back on a, the prompt comes back there, once
  await chat.receive({ type: "selectSession", sessionId: "a" });
  const shownA = fake.posted.lastIndexOf(fake.lastSession());
  assert.deepEqual(ofType(fake.posted.slice(shownA), "sendOutcome"), [
    { type: "sendOutcome", stored: false, text: "a's question", sessionId: "a" },
  ]);
  await chat.receive({ type: "selectSession", sessionId: "b" });
  await chat.receive({ type: "selectSession", sessionId: "a" });
  assert.equal(ofType(fake.posted, "sendOutcome").length, 1);
});

/** Sends `text` to a, goes to b while it is weighed, and has it refused there: too large. */
async function notSentWhileElsewhere(fake: Fake, chat: ChatController, text: string): Promise<void> {
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  fake.add(session("b", "2026-11-02T10:00:00Z"), [message("b1", "user", "elsewhere")]);
  fake.key = true;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  let open!: () => void;
  fake.draftGate = new Promise((resolve) => (open = resolve));
  const sending = chat.receive({ type: "send", text, sessionId: "a" });
  await tick();
  await chat.receive({ type: "selectSession", sessionId: "b" });
  fake.draftAnswer = (id) => ({ ...usage({ sessionId: id, state: "blocking" }), draft: info("tooLarge", "Too large.") });
  open();
  await sending;
  assert.deepEqual(ofType(fake.posted, "sendOutcome"), [], "nothing back in b's box yet");
}

test("a prompt not sent to a session deleted since comes into the empty box on show, its failure gone", async () => {
  const { fake, chat } = setup();
  await notSentWhileElsewhere(fake, chat, "a's question");
  const before = fake.posted.length;
  // told deleted (another server deleted it, or its transcript was moved away)
  await chat.onSessionChanged({ sessionId: "a", reason: "delete" });
  assert.deepEqual(ofType(fake.posted.slice(before), "sendOutcome"), [
    { type: "sendOutcome", stored: false, text: "a's question", sessionId: "b" },
  ]);
  assert.deepEqual(ofType(fake.posted.slice(before), "notice"), [
    { type: "notice", sessionId: "b", message: "A prompt not sent to a conversation deleted since is back in the box.", tone: "info" },
  ]);
  // a back in the list and on show: neither its failure nor its prompt again
  const back = fake.posted.length;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  assert.ok(fake.posted.slice(back).some((m) => m.type === "session" && m.session?.sessionId === "a"), "a is on show");
  assert.deepEqual(ofType(fake.posted.slice(back), "error"), []);
  assert.deepEqual(ofType(fake.posted.slice(back), "sendOutcome"), []);
});

test("a prompt not sent to a session deleted since is kept for it while the box on show holds a draft", async () => {
  const { fake, chat } = setup();
  await notSentWhileElsewhere(fake, chat, "a's question");
  await chat.receive({ type: "draft", text: "b's own words" });
  const before = fake.posted.length;
  await chat.onSessionChanged({ sessionId: "a", reason: "delete" });
  assert.deepEqual(ofType(fake.posted.slice(before), "sendOutcome"), [], "b's draft is left alone");
  const back = fake.posted.length;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  assert.deepEqual(ofType(fake.posted.slice(back), "error"), [], "the failure went with the delete");
  assert.deepEqual(ofType(fake.posted.slice(back), "sendOutcome"), [
    { type: "sendOutcome", stored: false, text: "a's question", sessionId: "a" },
  ]);
});

/** Shows a, then has another window delete it: the next send there finds it gone. */
async function deletedElsewhere(fake: Fake, chat: ChatController): Promise<void> {
  fake.add(session("a", "2026-11-02T10:00:00Z"));
  fake.add(session("b", "2026-11-01T10:00:00Z"), [message("b1", "user", "elsewhere")]);
  fake.key = true;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  fake.sessions.delete("a");
  fake.sendFailure = Object.assign(new Error("session a was deleted"), { data: { code: "session_not_found" } });
}

test("a prompt sent to a session another window deleted comes back into the box of the one shown in its place", async () => {
  const { fake, chat } = setup();
  await deletedElsewhere(fake, chat);
  const before = fake.posted.length;
  await chat.receive({ type: "send", text: "a's question", sessionId: "a" });
  // the server tells the delete once the send found it (after its answer, here)
  await chat.onSessionChanged({ sessionId: "a", reason: "delete" });
  const after = fake.posted.slice(before);
  assert.equal(fake.lastSession().session?.sessionId, "b", "the panel shows b in a's place");
  assert.deepEqual(ofType(after, "sendOutcome"), [{ type: "sendOutcome", stored: false, text: "a's question", sessionId: "b" }]);
  assert.deepEqual(ofType(after, "notice"), [
    { type: "notice", sessionId: "b", message: "A prompt not sent to a conversation deleted since is back in the box.", tone: "info" },
  ]);
});

test("a prompt sent to a session deleted elsewhere, the delete told first, comes back too", async () => {
  const { fake, chat } = setup();
  await deletedElsewhere(fake, chat);
  let open!: () => void;
  fake.listGate = new Promise((resolve) => (open = resolve));
  const before = fake.posted.length;
  // the notification's re-read is under way (held) when the send's answer comes
  const refreshing = chat.onSessionChanged({ sessionId: "a", reason: "delete" });
  const sending = chat.receive({ type: "send", text: "a's question", sessionId: "a" });
  await tick(5);
  open();
  await Promise.all([sending, refreshing]);
  const after = fake.posted.slice(before);
  assert.equal(fake.lastSession().session?.sessionId, "b");
  assert.deepEqual(ofType(after, "sendOutcome"), [{ type: "sendOutcome", stored: false, text: "a's question", sessionId: "b" }]);
});

test("a prompt sent to a session deleted elsewhere waits while the box holds a draft, and comes at the next update that finds it empty", async () => {
  const { fake, chat } = setup();
  await deletedElsewhere(fake, chat);
  await chat.receive({ type: "draft", text: "typed meanwhile" });
  const before = fake.posted.length;
  await chat.receive({ type: "send", text: "a's question", sessionId: "a" });
  await chat.onSessionChanged({ sessionId: "a", reason: "delete" });
  assert.deepEqual(ofType(fake.posted.slice(before), "sendOutcome"), [], "the draft in the box is left alone");
  await chat.receive({ type: "draft", text: "" });
  const later = fake.posted.length;
  await chat.refresh();
  assert.deepEqual(ofType(fake.posted.slice(later), "sendOutcome"), [{ type: "sendOutcome", stored: false, text: "a's question", sessionId: "b" }]);
  assert.equal(ofType(fake.posted.slice(later), "notice").length, 1);
  // once only
  const last = fake.posted.length;
  await chat.refresh();
  assert.deepEqual(ofType(fake.posted.slice(last), "sendOutcome"), []);
});

test("a Stop from the view of the session whose reply streams cancels it", async () => {
  const { fake, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"));
  await chat.receive({ type: "selectSession", sessionId: "a" });
  const { open, sending } = await heldSend(fake, chat, "long one");
  await chat.receive({ type: "stop", sessionId: "b" });
  assert.equal(fake.sendToken?.isCancellationRequested, false, "another session's Stop");
  await chat.receive({ type: "stop", sessionId: "a" });
  assert.equal(fake.sendToken?.isCancellationRequested, true);
  open();
  await sending;
});

test("a Retry while another session is being opened retries the session on show, not the one on its way", async () => {
  const { fake, current, chat } = setup();
  fake.add(session("a", "2026-11-01T10:00:00Z"), [message("u1", "user", "q in a"), message("a1", "assistant", "r in a")]);
  fake.add(session("b", "2026-11-02T10:00:00Z"), [message("u1b", "user", "q in b"), message("a1b", "assistant", "r in b")]);
  fake.key = true;
  await chat.receive({ type: "selectSession", sessionId: "a" });
  let open!: () => void;
  fake.listGate = new Promise((resolve) => (open = resolve));
  const opening = chat.receive({ type: "selectSession", sessionId: "b" });
  await tick();
  assert.equal(current.sessionId, "b", "b is current for the host while the panel still shows a");
  await chat.receive({ type: "retry", sessionId: "a" });
  open();
  await opening;
  assert.deepEqual(fake.calls, ["rewind a1", "send (continue)"]);
  assert.deepEqual(fake.sessions.get("b")!.messages.map((m) => m.id), ["u1b", "a1b"], "b untouched");
  assert.deepEqual(fake.sessions.get("a")!.messages.map((m) => m.role), ["user", "assistant"]);
  assert.notEqual(fake.sessions.get("a")!.messages[1]!.id, "a1", "a's reply made again");
});

test("the failures of sends to two sessions the user had left are each said on their own session", async () => {
  const { fake, chat } = setup();
  for (const [id, at] of [["a", "01"], ["b", "02"], ["c", "03"]] as const) fake.add(session(id, `2026-11-${at}T10:00:00Z`));
  fake.key = true;
  const failLeft = async (from: string, to: string, message: string): Promise<void> => {
    await chat.receive({ type: "selectSession", sessionId: from });
    const { open, sending } = await heldSend(fake, chat, `question in ${from}`);
    await chat.receive({ type: "selectSession", sessionId: to });
    fake.sendFailure = Object.assign(new Error(message), { data: { code: "api_error", promptMessageId: "u0" } });
    open();
    await sending;
    fake.sendFailure = undefined;
  };
  await failLeft("a", "b", "a's failure");
  await failLeft("b", "c", "b's failure");
  const errorsOn = async (id: string) => {
    await chat.receive({ type: "selectSession", sessionId: id });
    return ofType(fake.posted.slice(fake.posted.lastIndexOf(fake.lastSession())), "error").map((e) => e.message);
  };
  assert.deepEqual(await errorsOn("a"), ["a's failure"]);
  assert.deepEqual(await errorsOn("b"), ["b's failure"]);
});
