/**
 * A prompt's send from the chat view: the one in flight, its Stop, the rewind an edit or a
 * Retry makes first, and the outcome the webview is told (whether the session holds the text).
 */
import { CancellationTokenSource } from "vscode-languageserver-protocol";
import { endsWithPrompt, lastUserText, promptStored, retryCut, sendFailure } from "./chatLogic";
import { postError, type ChatPorts } from "./chatPorts";
import { UnseenOutcomes } from "./unseenOutcomes";
import type { CurrentSession } from "./currentSession";
import { makeRoom, type DraftUsageWatch, type RoomPorts } from "./draftUsage";
import { ErrorCodes, type Message, type Session, type SetAside } from "./protocol";
import { answerLost, errorCode, isCancellation } from "./rpc";

/** What a send needs of the controller around it (the chat controller is one). */
export interface SendHost {
  newChat(): Promise<Session>;
  /** Re-reads the view and posts it. */
  refresh(): Promise<void>;
  /** The current session's view, as last fetched. */
  readonly viewMessages: readonly Message[];
}

export class ChatSender {
  private sending: CancellationTokenSource | undefined;
  /** The session the running send goes to, once known. */
  private sendingTo: string | undefined;
  /** The messages the last edit or Retry took out of the view, while its notice may show. */
  private rewound: { sessionId: string; ids: ReadonlySet<string> } | undefined;
  /** What sends to sessions the user had left said, until each is on show again. */
  private readonly unseen: UnseenOutcomes;

  constructor(
    private readonly ports: ChatPorts,
    private readonly current: CurrentSession,
    private readonly draft: DraftUsageWatch,
    private readonly host: SendHost,
  ) {
    this.unseen = new UnseenOutcomes(ports, current, draft);
  }

  /** Whether a send is running (a reloaded panel is told so: Stop, input disabled). */
  get busy(): boolean {
    return this.sending !== undefined;
  }

  /** The session the running send goes to (null: none, or not known yet). */
  get busyIn(): string | null {
    return this.sendingTo ?? null;
  }

  /**
   * Whether `messages`, the view of `sessionId`, holds again what the last edit or Retry
   * took out (an Undo brought it back): its notice is stale. Said once.
   */
  rewindUndone(sessionId: string | undefined, messages: readonly Message[]): boolean {
    const rewound = this.rewound;
    if (rewound === undefined || rewound.sessionId !== sessionId || !messages.some((m) => rewound.ids.has(m.id))) {
      return false;
    }
    this.rewound = undefined;
    return true;
  }

  /**
   * `sessionId` is on show (again): what a send to it said while the user was elsewhere is
   * said now, once: its failure, and the prompt it did not send (back into the box).
   */
  shown(sessionId: string): void {
    this.unseen.shown(sessionId);
  }

  /** `sessionId` was deleted: what a send to it left unsaid goes, or finds another box (unseenOutcomes.ts). */
  deleted(sessionId: string): void {
    this.unseen.deleted(sessionId);
  }

  /**
   * A failed send's banner. A banner is about the session on show: the failure of a send to
   * a session the user has left waits until that session is on show again.
   */
  private failed(sentTo: string | undefined, error: unknown): void {
    const message = sendFailure(error);
    const elsewhere = sentTo !== undefined && this.current.sessionId !== sentTo;
    if (elsewhere && this.ports.serverAvailable() && errorCode(error) !== ErrorCodes.apiKeyMissing) {
      this.unseen.failure(sentTo, message);
    } else if (answerLost(error)) {
      // about this send, not the server's state: it stays once a restarted server answers
      this.ports.post({ type: "error", message, scope: "session" });
    } else {
      postError(this.ports, error, message);
    }
  }

  /** Says what the send took out of the view (a refused reply, or the interrupted one it made again). */
  private setAside(sessionId: string, aside: SetAside): void {
    this.rewound = { sessionId, ids: new Set(aside.messageIds) };
    const what =
      aside.reason === "refusal"
        ? "The model declined to answer; its reply left the view so that later requests can go on"
        : "The interrupted reply left the view and was made again";
    this.ports.post({
      type: "notice",
      sessionId,
      message: `${what} (kept in the transcript; Baton: Undo Compaction brings it back).`,
      tone: aside.reason === "refusal" ? "warning" : "info",
      about: "rewind",
    });
  }

  /**
   * The view of the session a send went to: the one on show, or (the user switched while
   * the reply streamed) read again; unreadable, none.
   */
  private async viewOf(sessionId: string): Promise<readonly Message[]> {
    if (this.current.sessionId === sessionId) return this.host.viewMessages;
    try {
      return (await this.ports.rpc.getSession(sessionId)).messages;
    } catch {
      return [];
    }
  }

  /**
   * What weighing the prompt (and the compaction it may need) posts: its banner about
   * `sessionId`, once the user has left that session, waits for it like a failed send's.
   */
  private roomPorts(sessionId: string): RoomPorts {
    return {
      rpc: this.ports.rpc,
      compactWithProgress: (run) => this.ports.compactWithProgress(run),
      post: (message) => {
        if (message.type === "error" && this.current.sessionId !== sessionId) this.unseen.failure(sessionId, message.message);
        else this.ports.post(message);
      },
    };
  }

  /** Undoes the rewind of a send that sent nothing, and says its notice no longer holds. */
  private async putBack(rewind: { sessionId: string; boundaryId: string }): Promise<void> {
    try {
      await this.ports.rpc.uncompact(rewind.sessionId, rewind.boundaryId);
    } catch {
      return; // the notice stays: Undo Compaction brings them back
    }
    this.rewound = undefined;
    this.ports.post({ type: "noticeEnd", sessionId: rewind.sessionId, about: "rewind" });
    await this.host.refresh();
  }

  /**
   * Tells the webview how the send ended for its prompt. A prompt not sent to a session the
   * user has left waits for that session to be on show: it goes back into its box, not into
   * the box of another session (where Enter would send it there). `missing`: the send found
   * the session deleted, so the prompt is a deleted session's.
   */
  private outcome(stored: boolean, text: string, sentTo: string | undefined, missing: boolean): void {
    if (!stored && sentTo !== undefined && this.current.sessionId !== sentTo) {
      this.unseen.promptBack(sentTo, text, missing);
      return;
    }
    this.ports.post({ type: "sendOutcome", stored, text, sessionId: sentTo ?? null });
  }

  /**
   * Cancels the reply in flight, if any: when `sessionId` is given, only a reply in that
   * session (a Stop belongs to the view it was clicked in, not to whatever runs).
   */
  stop(sessionId?: string | null): void {
    if (typeof sessionId === "string" && sessionId !== this.sendingTo) return;
    this.sending?.cancel();
  }

  /**
   * Retry: the last reply leaves the view and a new one is asked for; a prompt whose reply
   * failed gets a new reply, nothing rewound. `shown`: the session on show when it was
   * clicked (another one may be on its way to the panel), whose view says what to retry.
   */
  async retry(shown?: string): Promise<void> {
    const view = shown === undefined ? this.host.viewMessages : await this.viewOf(shown);
    const cut = retryCut(view);
    if (cut !== undefined) await this.send(undefined, cut, shown);
    else if (endsWithPrompt(view)) await this.send(undefined, undefined, shown);
  }

  /**
   * Sends a prompt (into a new session when none is open); Stop cancels the reply. Before
   * it goes, the server says what it would do to the context: a prompt that cannot fit is
   * not sent, one over the limit with auto-compact off is sent after a compaction, one past
   * the auto-compact point is announced. The webview keeps the text until the outcome says
   * the session holds it. `shown`: the session the panel showed when the user sent, which
   * is where the prompt goes even when another one is on its way to the panel.
   */
  async send(text: string | undefined, rewindTo?: string, shown?: string): Promise<void> {
    // `text` undefined: a continuation (Retry: a new reply to the prompt already there).
    if (text !== undefined && text.trim() === "") {
      return;
    }
    if (this.sending !== undefined) {
      // one send at a time: the text goes back into the box rather than nowhere
      if (text !== undefined) {
        this.ports.post({ type: "sendOutcome", stored: false, text, sessionId: shown ?? this.current.sessionId ?? null });
      }
      return;
    }
    const cancel = new CancellationTokenSource();
    this.sending = cancel;
    let stored = false;
    let cancelled = false;
    let sentTo: string | undefined;
    let rewind: { sessionId: string; boundaryId: string } | undefined;
    let asked = false; // whether the send went to the server
    let refused = false; // refused before anything was stored (no key)
    let missing = false; // the session was deleted (elsewhere, say)
    let lost = false; // the server stopped before it answered
    let gone: unknown; // that failure
    try {
      const sessionId = shown ?? this.current.sessionId ?? (await this.host.newChat()).sessionId;
      sentTo = sessionId;
      this.sendingTo = sessionId;
      this.ports.post({ type: "busy", busy: true, sessionId });
      if (rewindTo !== undefined) {
        const rewound = await this.ports.rpc.rewind(sessionId, rewindTo);
        rewind = { sessionId, boundaryId: rewound.boundaryId };
        const count = rewound.rewoundMessageIds.length;
        this.rewound = { sessionId, ids: new Set(rewound.rewoundMessageIds) };
        const what = count === 1 ? "1 message left" : `${count} messages left`;
        this.ports.post({
          type: "notice",
          sessionId,
          message: `${what} the view (kept in the transcript; Baton: Undo Compaction brings ${count === 1 ? "it" : "them"} back).`,
          tone: "info",
          about: "rewind",
        });
      }
      const attachments = text === undefined ? [] : (this.ports.attachments?.build() ?? []);
      const room = text === undefined || (await makeRoom(this.roomPorts(sessionId), sessionId, text, cancel.token));
      // a Stop before the prompt goes (while it was weighed, say): nothing is sent
      if (room && !cancel.token.isCancellationRequested) {
        asked = true;
        const sent = await this.ports.sendWithProgress(
          (options) => this.ports.rpc.send(sessionId, text, { ...options, token: cancel.token }, attachments),
          (message) => this.ports.post({ type: "status", sessionId, message }),
        );
        stored = true;
        if (sent.setAside !== undefined) this.setAside(sessionId, sent.setAside);
      }
    } catch (error) {
      cancelled = isCancellation(error);
      stored = promptStored(error);
      refused = errorCode(error) === ErrorCodes.apiKeyMissing;
      missing = errorCode(error) === ErrorCodes.sessionNotFound;
      lost = answerLost(error);
      if (lost) gone = error; // said once the view is read again (its read, while no server runs, says so first)
      else if (!cancelled) this.failed(sentTo, error);
    } finally {
      cancel.dispose();
      this.sending = undefined;
      this.sendingTo = undefined;
      this.ports.post({ type: "busy", busy: false, sessionId: sentTo ?? null });
      await this.host.refresh();
      // a Stop may come before or after the server stored the prompt, and a server may stop
      // after it stored it and before it answered: the view says which
      if (text !== undefined) {
        stored ||= (cancelled || lost) && sentTo !== undefined && lastUserText(await this.viewOf(sentTo)) === text;
      }
      // an edit whose prompt the session does not hold, or a Retry that never asked: the view as it was
      if (rewind !== undefined && (text !== undefined ? !stored : !asked || refused)) await this.putBack(rewind);
      if (text !== undefined) {
        if (stored) {
          // what was typed while the reply streamed stays the draft
          if (this.draft.text === text) this.draft.text = "";
          this.ports.attachments?.sent();
        }
        this.outcome(stored, text, sentTo, missing);
      }
      if (lost) this.failed(sentTo, gone);
    }
  }
}
