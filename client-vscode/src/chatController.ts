/**
 * The chat view's state flow, without the editor: which session it shows, what goes to the
 * webview, and what each message from the webview does. The webview keeps no state the
 * host needs: on every (re)load it says "ready" and gets the whole picture again.
 */
import { CancellationTokenSource } from "vscode-languageserver-protocol";
import { lastUserText, mostRecent, pageOf, promptStored, retryCut, sendFailure } from "./chatLogic";
import type { CurrentSession } from "./currentSession";
import {
  ErrorCodes,
  type Message,
  type TodoEntry,
  type ModelSwitch,
  type Session,
  type ServerNotificationMap,
} from "./protocol";
import { errorCode, errorMessage, isCancellation, type BatonRpc, type CallOptions } from "./rpc";
import { DraftUsageWatch, makeRoom } from "./draftUsage";
import { PickerHost } from "./pickerHost";
import type { SendAttachment } from "./toolWire";
import type { ErrorScope, FromWebview, ToWebview } from "./webviewMessages";

export { sendFailure } from "./chatLogic";

/** What the controller needs from the editor (the chat view supplies it; tests fake it). */
export interface ChatPorts {
  rpc: Pick<
    BatonRpc,
    | "listSessions"
    | "getSession"
    | "createSession"
    | "send"
    | "draftUsage"
    | "compact"
    | "setModel"
    | "rewind"
    | "listModels"
    | "renameSession"
    | "deleteSession"
    | "replaced"
  >;
  post(message: ToWebview): void;
  hasApiKey(): Promise<boolean>;
  /** Whether a server runs (or is starting): no refresh is tried without one. */
  serverAvailable(): boolean;
  /** Runs a send under editor progress; `options` carries the Stop token. */
  sendWithProgress<T>(run: (options: CallOptions) => Promise<T>): Promise<T>;
  /** Runs a compaction (the one a send needs first) under editor progress. */
  compactWithProgress<T>(run: (options: CallOptions) => Promise<T>): Promise<T>;
  /** The editor commands the webview's buttons stand for. */
  command(name: "import" | "setApiKey" | "undo" | "openSessionDocument" | "pickSession", arg?: string): Promise<unknown>;
  /** The selection, for the "Compact Selected" menu item's context key. */
  selectionChanged(messageIds: readonly string[]): void;
  /** The editor context a send attaches (the chips on show), and word that they went. */
  attachments?: { build(): SendAttachment[]; sent(): void };
  /** A code block's Insert at Cursor. */
  insertCode(code: string): Promise<void>;
  /** A code block's Apply to File (`file`: the one it names; none: the active editor's). */
  applyCode(code: string, file: string | undefined): Promise<void>;
}

export const REFRESH_DELAY_MS = 50;
/** A view longer than this goes to the webview as its last page first, the rest on request. */
export const VIEW_PAGE = 120;
/** How long the input box must rest before its draft's usage is asked for. */
export const DRAFT_DELAY_MS = 250;
/** How many of a compaction's summarized messages one "show more" reads. */
export const REPLACED_PAGE = 40;
export const NO_SERVER =
  "Baton's server is not running. Baton: Show Logs says why; Baton: Restart Server tries again.";

export class ChatController {
  private messages: Message[] = [];
  private todos: TodoEntry[] | undefined;
  private sessions: Session[] = [];
  private selected: string[] = [];
  private sending: CancellationTokenSource | undefined;
  private pendingRefresh: Promise<void> | undefined;
  private selects = 0; // selects started: the latest one decides what the view shows
  private readonly draft: DraftUsageWatch;
  private readonly pickers: PickerHost;

  constructor(
    private readonly ports: ChatPorts,
    private readonly current: CurrentSession,
    private readonly refreshDelayMs = REFRESH_DELAY_MS,
    draftDelayMs = DRAFT_DELAY_MS,
  ) {
    this.draft = new DraftUsageWatch(
      {
        rpc: ports.rpc,
        post: (message) => ports.post(message),
        serverAvailable: () => ports.serverAvailable(),
        sessionId: () => current.sessionId,
      },
      draftDelayMs,
    );
    this.pickers = new PickerHost({
      rpc: ports.rpc,
      post: (message) => ports.post(message),
      currentSessionId: () => current.sessionId,
      refresh: () => this.refresh(),
    });
  }

  /** The current session's view, as last fetched. */
  get viewMessages(): readonly Message[] {
    return this.messages;
  }

  /** The messages selected in the webview, in view order. */
  get selection(): readonly string[] {
    return this.selected;
  }

  get busy(): boolean {
    return this.sending !== undefined;
  }

  /**
   * Opens the session in the view and makes it the current one. Of two selects in flight
   * the one started last wins (a refresh that began before New Chat does not undo it).
   */
  async select(sessionId: string): Promise<void> {
    const mine = ++this.selects;
    const { session, messages, usage, todos } = await this.ports.rpc.getSession(sessionId);
    if (mine !== this.selects) {
      return; // another session was chosen meanwhile
    }
    if (this.current.sessionId !== sessionId) {
      this.setSelection([]);
    }
    this.messages = messages;
    this.todos = todos;
    this.current.set(session, usage);
    this.sessions = await this.ports.rpc.listSessions();
    await this.postSession();
    this.draft.changed(); // the same draft weighs differently in another session
  }

  async newChat(): Promise<Session> {
    const session = await this.ports.rpc.createSession();
    await this.select(session.sessionId);
    return session;
  }

  /** Re-reads the session on show (or, on start or once it is gone, the newest) and posts it. */
  async refresh(): Promise<void> {
    if (!this.ports.serverAvailable()) {
      this.ports.post({ type: "error", message: NO_SERVER, scope: "server" });
      return;
    }
    try {
      const started = this.selects;
      this.sessions = await this.ports.rpc.listSessions();
      if (this.selects !== started) {
        return; // a session was chosen meanwhile: that select shows it
      }
      const wanted = this.current.sessionId;
      const target = this.sessions.some((s) => s.sessionId === wanted) ? wanted : mostRecent(this.sessions)?.sessionId;
      if (target === undefined) {
        this.messages = [];
        this.todos = undefined;
        this.setSelection([]);
        this.current.clear();
        await this.postSession();
        return;
      }
      await this.select(target);
    } catch (error) {
      this.postError(error);
    }
  }

  // ---- the server's notifications ------------------------------------------------------

  /** A session changed: the current one is re-read; a new or deleted one changes the list. */
  onSessionChanged(event: ServerNotificationMap["baton/sessionChanged"]): Promise<void> | undefined {
    if (event.sessionId === this.current.sessionId || event.reason === "create" || event.reason === "delete") {
      return this.scheduleRefresh();
    }
    return undefined;
  }

  onUsageChanged(event: ServerNotificationMap["baton/usageChanged"]): void {
    this.current.setUsage(event.sessionId, event.usage);
    if (event.sessionId === this.current.sessionId) {
      this.ports.post({ type: "usage", sessionId: event.sessionId, usage: event.usage });
    }
  }

  onDelta(event: ServerNotificationMap["baton/session/delta"]): void {
    if (event.sessionId === this.current.sessionId) {
      this.ports.post({ type: "delta", sessionId: event.sessionId, messageId: event.messageId, text: event.text });
    }
  }

  /** An auto-compaction's outcome, said briefly in the panel. */
  onAutoCompact(event: ServerNotificationMap["baton/autoCompact"]): void {
    if (event.sessionId === this.current.sessionId) {
      const tone = event.outcome === "compacted" ? "info" : "warning";
      this.ports.post({ type: "notice", sessionId: event.sessionId, message: event.message, tone });
    }
  }

  /** Switches the current session's model; a warning when it no longer fits is said in the panel. */
  async switchModel(model: string): Promise<ModelSwitch | undefined> {
    const sessionId = this.current.sessionId;
    if (sessionId === undefined) {
      return undefined;
    }
    const result = await this.ports.rpc.setModel(sessionId, model);
    if (this.current.sessionId === sessionId) {
      this.current.set(result.session, result.usage);
      this.ports.post({ type: "usage", sessionId, usage: result.usage });
      if (result.warning !== undefined) {
        this.ports.post({ type: "notice", sessionId, message: result.warning, tone: "warning" });
      }
      this.draft.changed();
    }
    return result;
  }

  // ---- the webview's messages ----------------------------------------------------------

  async receive(message: FromWebview): Promise<void> {
    try {
      switch (message.type) {
        case "ready":
          return await this.refresh();
        case "send":
          return await this.send(message.text);
        case "edit":
          // The prompt and what followed it leave the view (kept, undone like a compaction).
          return await this.send(message.text, message.messageId);
        case "retry": {
          const cut = retryCut(this.messages);
          if (cut !== undefined) await this.send(undefined, cut);
          return;
        }
        case "draft":
          this.draft.changed(message.text);
          return;
        case "stop":
          this.sending?.cancel();
          return;
        case "newChat":
          await this.newChat();
          return;
        case "selectSession":
          return await this.select(message.sessionId);
        case "selection":
          this.setSelection(message.messageIds);
          return;
        case "insertCode":
          await this.ports.insertCode(message.code);
          return;
        case "applyCode":
          await this.ports.applyCode(message.code, message.file);
          return;
        case "listModels":
          return await this.pickers.models();
        case "setModel":
          await this.switchModel(message.model);
          return;
        case "listSessions":
          return await this.pickers.sessions();
        case "renameSession":
          return await this.pickers.rename(message.sessionId, message.title);
        case "deleteSession":
          return await this.pickers.delete(message.sessionId);
        case "loadEarlier":
          this.postEarlier(message.sessionId, message.before);
          return;
        case "loadReplaced":
          return await this.postReplaced(message.sessionId, message.boundaryId, message.offset);
        case "undo":
          await this.ports.command("undo", message.boundaryId);
          return;
        case "pickSession":
        case "import":
        case "setApiKey":
        case "openSessionDocument":
          await this.ports.command(message.type);
          return;
      }
    } catch (error) {
      this.postError(error);
    }
  }

  /**
   * Sends a prompt (into a new session when none is open); Stop cancels the reply. Before
   * it goes, the server says what it would do to the context: a prompt that cannot fit is
   * not sent, one over the limit with auto-compact off is sent after a compaction, one past
   * the auto-compact point is announced. The webview keeps the text until the outcome says
   * the session holds it.
   */
  private async send(text: string | undefined, rewindTo?: string): Promise<void> {
    // `text` undefined: a continuation (Retry: a new reply to the prompt already there).
    if (this.sending !== undefined || (text !== undefined && text.trim() === "")) {
      return;
    }
    const cancel = new CancellationTokenSource();
    this.sending = cancel;
    this.ports.post({ type: "busy", busy: true });
    let stored = false;
    let cancelled = false;
    try {
      const sessionId = this.current.sessionId ?? (await this.newChat()).sessionId;
      if (rewindTo !== undefined) {
        const rewound = await this.ports.rpc.rewind(sessionId, rewindTo);
        const count = rewound.rewoundMessageIds.length;
        const what = count === 1 ? "1 message left" : `${count} messages left`;
        this.ports.post({
          type: "notice",
          sessionId,
          message: `${what} the view (kept in the transcript; Baton: Undo Compaction brings ${count === 1 ? "it" : "them"} back).`,
          tone: "info",
        });
      }
      const attachments = text === undefined ? [] : (this.ports.attachments?.build() ?? []);
      if (text === undefined || (await makeRoom(this.ports, sessionId, text, cancel.token))) {
        await this.ports.sendWithProgress((options) =>
          this.ports.rpc.send(sessionId, text, { ...options, token: cancel.token }, attachments),
        );
        stored = true;
      }
    } catch (error) {
      cancelled = isCancellation(error);
      stored = promptStored(error);
      if (!cancelled) {
        this.postError(error, sendFailure(error));
      }
    } finally {
      cancel.dispose();
      this.sending = undefined;
      this.ports.post({ type: "busy", busy: false });
      await this.refresh();
      // a Stop may come before or after the server stored the prompt: the view says which
      if (text !== undefined) {
        stored ||= cancelled && lastUserText(this.messages) === text;
        if (stored) {
          this.draft.text = "";
          this.ports.attachments?.sent();
        }
        this.ports.post({ type: "sendOutcome", stored, text });
      }
    }
  }

  private postError(error: unknown, message = errorMessage(error)): void {
    if (!this.ports.serverAvailable()) {
      this.ports.post({ type: "error", message: NO_SERVER, scope: "server" });
      return;
    }
    const scope: ErrorScope = errorCode(error) === ErrorCodes.apiKeyMissing ? "apiKey" : "session";
    this.ports.post({ type: "error", message, scope });
  }

  /**
   * Re-reads the view shortly (changes in a burst are read once). During a send too: a turn
   * that runs workspace tools stores each reply and its tool results as it goes, and waits
   * for the user's answer in between, so the feed shows each call's line as it happens (the
   * webview keeps the prompt and the streamed text until the view holds them).
   */
  private scheduleRefresh(): Promise<void> | undefined {
    this.pendingRefresh ??= new Promise<void>((resolve) => setTimeout(resolve, this.refreshDelayMs)).then(() => {
      this.pendingRefresh = undefined;
      return this.refresh();
    });
    return this.pendingRefresh;
  }

  private setSelection(messageIds: string[]): void {
    this.selected = messageIds;
    this.ports.selectionChanged(messageIds);
  }

  private async postSession(): Promise<void> {
    const session = this.current.session ?? null;
    const messages = session !== null ? this.messages : [];
    const page = pageOf(messages, VIEW_PAGE);
    this.ports.post({
      type: "session",
      session,
      sessions: this.sessions,
      messages: page.messages,
      usage: session !== null ? (this.current.usage ?? null) : null,
      hasApiKey: await this.ports.hasApiKey(),
      ...(page.offset > 0 ? { offset: page.offset, totalMessages: messages.length } : {}),
      ...(session !== null && this.todos !== undefined ? { todos: this.todos } : {}),
    });
  }

  /** The messages before `before` of the view last posted, when it is still the one shown. */
  private postEarlier(sessionId: string, before: number): void {
    if (sessionId !== this.current.sessionId || before <= 0 || before > this.messages.length) {
      return; // another session or view since: its own session update is on its way
    }
    const messages = this.messages.slice(0, before);
    this.ports.post({ type: "earlier", sessionId, messages, totalMessages: this.messages.length });
  }

  /** A page of what compaction `boundaryId` replaced, for its summary card (a failure is said there). */
  private async postReplaced(sessionId: string, boundaryId: string, offset: number): Promise<void> {
    const base = { type: "replaced" as const, sessionId, boundaryId, offset };
    try {
      const page = await this.ports.rpc.replaced(sessionId, boundaryId, offset, REPLACED_PAGE);
      this.ports.post({ ...base, messages: page.messages, totalMessages: page.totalMessages });
    } catch (error) {
      this.ports.post({ ...base, messages: [], totalMessages: 0, error: errorMessage(error) });
    }
  }

  dispose(): void {
    this.sending?.cancel();
    this.draft.dispose();
  }
}
