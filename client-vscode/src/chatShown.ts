/**
 * Which session the chat view shows, and its whole picture as the webview gets it: the
 * user's choices (of two in flight the later wins), the re-read after a change, the view
 * last fetched, the selection, and the session update posted on each of them.
 */
import { mostRecent, pageOf } from "./chatLogic";
import { VIEW_PAGE } from "./chatPages";
import { NO_SERVER, postError, type ChatPorts } from "./chatPorts";
import type { CurrentSession } from "./currentSession";
import type { Message, Session, TodoEntry } from "./protocol";

/** What posting a session's picture involves besides the picture (the controller supplies it). */
export interface ShowHooks {
  /** Whether the view of `sessionId` holds again what the last edit or Retry took out. */
  rewindUndone(sessionId: string, messages: readonly Message[]): boolean;
  /** The picture of `sessionId` (null: none) was posted, `messages` the whole view. */
  posted(sessionId: string | null, messages: readonly Message[]): void;
  /** Another session's picture was fetched: the box's draft weighs differently there. */
  draftChanged(): void;
}

export class ShownSession {
  private messages: Message[] = [];
  private todos: TodoEntry[] | undefined;
  private sessions: Session[] = [];
  private selected: string[] = [];
  private pendingRefresh: Promise<void> | undefined;
  private selects = 0; // selects started: the latest one decides what the view shows
  private showing: Promise<void> | undefined; // the latest select, until it settles
  private chosen = 0; // the sessions the user chose: the latest one is the one to show

  constructor(
    private readonly ports: ChatPorts,
    private readonly current: CurrentSession,
    private readonly hooks: ShowHooks,
    private readonly refreshDelayMs: number,
  ) {}

  /** The current session's view, as last fetched. */
  get viewMessages(): readonly Message[] {
    return this.messages;
  }

  /** The messages selected in the webview, in view order. */
  get selection(): readonly string[] {
    return this.selected;
  }

  /** How many sessions the user chose (a select, a New Chat): the latest one is the one to show. */
  get choices(): number {
    return this.chosen;
  }

  /** Opens the session the user chose in the view and makes it the current one. */
  select(sessionId: string): Promise<void> {
    this.chosen++;
    return this.show(sessionId);
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

  /**
   * Re-reads the view shortly (changes in a burst are read once). During a send too: a turn
   * that runs workspace tools stores each reply and its tool results as it goes, and waits
   * for the user's answer in between, so the feed shows each call's line as it happens (the
   * webview keeps the prompt and the streamed text until the view holds them).
   */
  scheduleRefresh(): Promise<void> {
    this.pendingRefresh ??= new Promise<void>((resolve) => setTimeout(resolve, this.refreshDelayMs)).then(() => {
      this.pendingRefresh = undefined;
      return this.refresh();
    });
    return this.pendingRefresh;
  }

  setSelection(messageIds: string[]): void {
    this.selected = messageIds;
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
    this.hooks.draftChanged(); // the same draft weighs differently in another session
  }

  private async postSession(): Promise<void> {
    const session = this.current.session ?? null;
    const messages = session !== null ? this.messages : [];
    if (session !== null && this.hooks.rewindUndone(session.sessionId, messages)) {
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
    this.hooks.posted(session?.sessionId ?? null, messages);
  }
}
