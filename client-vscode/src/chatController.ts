/**
 * The chat view's state flow, without the editor: what each message from the webview does,
 * and the server's notifications about the session on show. The webview keeps no state the
 * host needs: on every (re)load it says "ready" and gets the whole picture again. The
 * editor is reached through its ports (chatPorts.ts); which session shows, and its picture,
 * is chatShown.ts's; a send runs in chatSend.ts.
 */
import { openMessage, postEarlier, postReplaced } from "./chatPages";
import { postError, type ChatPorts } from "./chatPorts";
import { ChatSender } from "./chatSend";
import { ShownSession } from "./chatShown";
import type { CurrentSession } from "./currentSession";
import type { Message, ModelSwitch, Session, ServerNotificationMap } from "./protocol";
import { DraftUsageWatch } from "./draftUsage";
import { PickerHost } from "./pickerHost";
import { ReplyStreams } from "./replyStreams";
import type { FromWebview } from "./webviewMessages";

export { sendFailure } from "./chatLogic";

export const REFRESH_DELAY_MS = 50;
/** How long the input box must rest before its draft's usage is asked for. */
export const DRAFT_DELAY_MS = 250;

export class ChatController {
  private readonly streams = new ReplyStreams(); // a reloaded webview gets the reply's text so far
  private readonly shown: ShownSession;
  private readonly draft: DraftUsageWatch;
  private readonly pickers: PickerHost;
  private readonly sender: ChatSender;
  /** Auto-compactions that failed in sessions not on show: each said once its session is (a success stays brief news). */
  private readonly unseenAutoCompactFailures = new Map<string, string>();

  constructor(
    private readonly ports: ChatPorts,
    private readonly current: CurrentSession,
    refreshDelayMs = REFRESH_DELAY_MS,
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
    this.shown = new ShownSession(
      ports,
      current,
      {
        rewindUndone: (sessionId, messages) => this.sender.rewindUndone(sessionId, messages),
        posted: (sessionId, messages) => {
          const replay = this.streams.shown(sessionId, messages, this.sender.busy);
          if (replay !== undefined) this.ports.post({ type: "delta", ...replay });
          if (sessionId !== null) this.sender.shown(sessionId);
          if (sessionId !== null) this.autoCompactShown(sessionId);
        },
        draftChanged: () => this.draft.changed(),
      },
      refreshDelayMs,
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
    return this.shown.viewMessages;
  }

  /** The messages selected in the webview, in view order. */
  get selection(): readonly string[] {
    return this.shown.selection;
  }

  get busy(): boolean {
    return this.sender.busy;
  }

  /** Opens the session the user chose in the view and makes it the current one. */
  select(sessionId: string): Promise<void> {
    return this.shown.select(sessionId);
  }

  /** Makes a session and opens it, unless the user chose another while it was being made. */
  newChat(): Promise<Session> {
    return this.shown.newChat();
  }

  /** Re-reads the session on show (or, on start or once it is gone, the newest) and posts it. */
  refresh(): Promise<void> {
    return this.shown.refresh();
  }

  // ---- the server's notifications ------------------------------------------------------

  /**
   * A session changed: the current one is re-read; a new or deleted one changes the list. A
   * deleted one's auto-compaction failure, kept for the user's return there, goes with it, as
   * does a send's (its prompt not sent is kept, chatSend.ts).
   */
  onSessionChanged(event: ServerNotificationMap["baton/sessionChanged"]): Promise<void> | undefined {
    if (event.reason === "delete") {
      this.unseenAutoCompactFailures.delete(event.sessionId);
      this.sender.deleted(event.sessionId);
    }
    if (event.sessionId === this.current.sessionId || event.reason === "create" || event.reason === "delete") {
      return this.shown.scheduleRefresh();
    }
    return undefined;
  }

  /**
   * This window has the focus again. A session another process holds (shown read-only) may
   * have been written meanwhile, and nothing says so until this server looks at it: it is
   * read again (the look tells the rest, its document and the meter). One held here is not.
   */
  windowFocused(): Promise<void> | undefined {
    return this.current.session?.readOnly === true ? this.shown.scheduleRefresh() : undefined;
  }

  /**
   * The data dir setting changed: the server lets go of the old folder's sessions and tells
   * nothing of them, so the session on show (and the meter) is read again from the new one,
   * where a session it does not hold gives way to its newest, or to the welcome.
   */
  dataDirChanged(): Promise<void> {
    return this.shown.scheduleRefresh();
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

  /**
   * An auto-compaction's outcome, said briefly in the panel. One that failed in a session not
   * on show is said once the user is back there: a nearly full request went out uncompacted.
   */
  onAutoCompact(event: ServerNotificationMap["baton/autoCompact"]): void {
    const failed = event.outcome !== "compacted";
    if (event.sessionId === this.current.sessionId) {
      this.ports.post({ type: "notice", sessionId: event.sessionId, message: event.message, tone: failed ? "warning" : "info" });
    } else if (failed) {
      this.unseenAutoCompactFailures.set(event.sessionId, event.message);
    }
  }

  private autoCompactShown(sessionId: string): void {
    const message = this.unseenAutoCompactFailures.get(sessionId);
    if (message === undefined) return;
    this.unseenAutoCompactFailures.delete(sessionId);
    this.ports.post({ type: "notice", sessionId, message, tone: "warning" });
  }

  /** Switches a session's model (the current one by default); a warning when it no longer fits is said in the panel. */
  switchModel(model: string, sessionId?: string): Promise<ModelSwitch | undefined> {
    return this.pickers.switchModel(model, sessionId);
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
          const choice = this.shown.choices + 1; // select and New Chat count it first
          try {
            await (message.type === "newChat" ? this.newChat() : this.select(message.sessionId));
          } catch (error) {
            postError(this.ports, error, undefined, choice === this.shown.choices);
          }
          return;
        }
        case "selection":
          this.shown.setSelection(message.messageIds);
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
          await this.pickers.switchModel(message.model, message.sessionId ?? undefined);
          return;
        case "listSessions":
          return await this.pickers.sessions();
        case "renameSession":
          return await this.pickers.rename(message.sessionId, message.title);
        case "deleteSession":
          return await this.pickers.delete(message.sessionId);
        case "loadEarlier": {
          const shown = { sessionId: this.current.sessionId, messages: this.shown.viewMessages };
          postEarlier(this.ports, shown, message.sessionId, message.before);
          return;
        }
        case "openMessage": {
          const sessionId = this.current.sessionId;
          if (sessionId !== undefined) await openMessage(this.ports, sessionId, this.shown.viewMessages, message.messageId);
          return;
        }
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

  dispose(): void {
    this.sender.stop();
    this.draft.dispose();
  }
}
