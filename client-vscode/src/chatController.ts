/**
 * The chat view's state flow, without the editor: which session it shows, what goes to the
 * webview, and what each message from the webview does. The webview keeps no state the
 * host needs: on every (re)load it says "ready" and gets the whole picture again. The
 * editor is reached through its ports (chatPorts.ts); a send runs in chatSend.ts.
 */
import { mostRecent, pageOf } from "./chatLogic";
import { postEarlier, postReplaced, VIEW_PAGE } from "./chatPages";
import { NO_SERVER, postError, type ChatPorts } from "./chatPorts";
import { ChatSender } from "./chatSend";
import type { CurrentSession } from "./currentSession";
import type { Message, TodoEntry, ModelSwitch, Session, ServerNotificationMap } from "./protocol";
import { DraftUsageWatch } from "./draftUsage";
import { PickerHost } from "./pickerHost";
import { ReplyStreams } from "./replyStreams";
import type { FromWebview } from "./webviewMessages";

export { sendFailure } from "./chatLogic";

export const REFRESH_DELAY_MS = 50;
/** How long the input box must rest before its draft's usage is asked for. */
export const DRAFT_DELAY_MS = 250;

export class ChatController {
  private messages: Message[] = [];
  private todos: TodoEntry[] | undefined;
  private sessions: Session[] = [];
  private selected: string[] = [];
  private pendingRefresh: Promise<void> | undefined;
  private selects = 0; // selects started: the latest one decides what the view shows
  private showing: Promise<void> | undefined; // the latest select, until it settles
  private chosen = 0; // the sessions the user chose: the latest one is the one to show
  private readonly streams = new ReplyStreams(); // a reloaded webview gets the reply's text so far
  private readonly draft: DraftUsageWatch;
  private readonly pickers: PickerHost;
  private readonly sender: ChatSender;

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
      current,
      refresh: () => this.refresh(),
      draftChanged: () => this.draft.changed(),
    });
    this.sender = new ChatSender(ports, current, this.draft, this);
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
    return this.sender.busy;
  }

  /** Opens the session the user chose in the view and makes it the current one. */
  select(sessionId: string): Promise<void> {
    this.chosen++;
    return this.show(sessionId);
  }

  /** Opens a session in the view, current; of two in flight the later wins (a refresh begun before New Chat does not undo it). */
  private show(sessionId: string): Promise<void> {
    const shown = this.open(sessionId);
    const settled: Promise<void> = shown.catch(() => undefined).then(() => {
      if (this.showing === settled) this.showing = undefined;
    });
    this.showing = settled;
    return shown;
  }

  private async open(sessionId: string): Promise<void> {
    const mine = ++this.selects;
    const { session, messages, usage, todos } = await this.ports.rpc.getSession(sessionId);
    if (mine !== this.selects) return; // another session was chosen meanwhile
    if (this.current.sessionId !== sessionId) this.setSelection([]);
    this.messages = messages;
    this.todos = todos;
    this.current.set(session, usage);
    // the session is current now: the panel must show it, with the list as last read if
    // reading it again fails (else the panel shows one session and a send goes to another)
    this.sessions = await this.ports.rpc.listSessions().catch(() => this.sessions);
    await this.postSession();
    this.draft.changed(); // the same draft weighs differently in another session
  }

  /** Makes a session and opens it, unless the user chose another while it was being made. */
  async newChat(): Promise<Session> {
    const mine = ++this.chosen;
    const session = await this.ports.rpc.createSession();
    if (mine === this.chosen) await this.show(session.sessionId);
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
      if (this.selects !== started) return; // a session was chosen meanwhile: that select shows it
      if (this.showing !== undefined) {
        // read again once shown, never in its place: that dropped the open's answer, and when
        // this read failed, the panel waited for the session it asked for with none to come
        void this.showing.then(() => this.scheduleRefresh());
        return;
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
      await this.show(target);
    } catch (error) {
      postError(this.ports, error);
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
      // a usage that changed by itself (a setting, an exact count) moves the draft's line too
      if (this.draft.text.trim() !== "") this.draft.changed();
    }
  }

  onDelta(event: ServerNotificationMap["baton/session/delta"]): void {
    this.streams.delta(event);
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
  switchModel(model: string): Promise<ModelSwitch | undefined> {
    return this.pickers.switchModel(model);
  }

  // ---- the webview's messages ----------------------------------------------------------

  async receive(message: FromWebview): Promise<void> {
    try {
      switch (message.type) {
        case "ready":
          this.streams.reloaded();
          await this.refresh();
          // a panel that reloaded while a reply streams: Stop, not Send
          if (this.sender.busy) this.ports.post({ type: "busy", busy: true, sessionId: this.sender.busyIn });
          return;
        case "send":
          return await this.sender.send(message.text, undefined, message.sessionId ?? undefined);
        case "edit":
          // The prompt and what followed it leave the view (kept, undone like a compaction).
          return await this.sender.send(message.text, message.messageId, message.sessionId ?? undefined);
        case "retry":
          return await this.sender.retry(message.sessionId ?? undefined);
        case "draft":
          this.draft.changed(message.text);
          return;
        case "stop":
          this.sender.stop(message.sessionId);
          return;
        case "newChat":
        case "selectSession": {
          // the panel waits for it: its failure ends that wait, unless another was chosen since
          const choice = this.chosen + 1; // select and New Chat count it first
          try {
            await (message.type === "newChat" ? this.newChat() : this.select(message.sessionId));
          } catch (error) {
            postError(this.ports, error, undefined, choice === this.chosen);
          }
          return;
        }
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
          await this.pickers.switchModel(message.model);
          return;
        case "listSessions":
          return await this.pickers.sessions();
        case "renameSession":
          return await this.pickers.rename(message.sessionId, message.title);
        case "deleteSession":
          return await this.pickers.delete(message.sessionId);
        case "loadEarlier":
          postEarlier(this.ports, { sessionId: this.current.sessionId, messages: this.messages }, message.sessionId, message.before);
          return;
        case "loadReplaced":
          return await postReplaced(this.ports, message.sessionId, message.boundaryId, message.offset);
        case "undo":
          // the session on show: the host may already be opening another one
          await this.ports.command("undo", message.boundaryId, message.sessionId ?? undefined);
          return;
        case "pickSession":
        case "import":
        case "setApiKey":
        case "openSessionDocument":
          await this.ports.command(message.type);
          return;
      }
    } catch (error) {
      postError(this.ports, error);
    }
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
    if (session !== null && this.sender.rewindUndone(session.sessionId, messages)) {
      this.ports.post({ type: "noticeEnd", sessionId: session.sessionId, about: "rewind" });
    }
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
    const replay = this.streams.shown(session?.sessionId ?? null, messages, this.sender.busy);
    if (replay !== undefined) this.ports.post({ type: "delta", ...replay });
    if (session !== null) this.sender.shown(session.sessionId);
  }

  dispose(): void {
    this.sender.stop();
    this.draft.dispose();
  }
}
