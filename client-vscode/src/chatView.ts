/**
 * The `baton.chat` webview view: which session it shows, what it posts to the webview and
 * what it does with what the webview posts. The webview keeps no state the host needs: on
 * every (re)load it says "ready" and gets the whole picture again.
 */
import * as vscode from "vscode";
import type { BatonClient } from "./client";
import { chatHtml, makeNonce } from "./chatHtml";
import { mostRecent, sessionPickRows } from "./chatLogic";
import type { CurrentSession } from "./currentSession";
import { ErrorCodes, type Message, type Session } from "./protocol";
import { errorCode, errorMessage, isCancellation } from "./rpc";
import { hasApiKey } from "./secrets";
import type { FromWebview, ToWebview } from "./webviewMessages";

export const CHAT_VIEW_ID = "baton.chat";
export const SELECTION_CONTEXT_KEY = "baton.chat.multipleSelected";
const STYLES = ["media/chat.css"];
const REFRESH_DELAY_MS = 50;

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private messages: Message[] = [];
  private sessions: Session[] = [];
  private selected: string[] = [];
  private sending: vscode.CancellationTokenSource | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly client: BatonClient,
    private readonly current: CurrentSession,
  ) {
    this.subscriptions.push(
      client.onDidChangeSession((event) => {
        if (event.sessionId === this.current.sessionId || event.reason === "create" || event.reason === "delete") {
          this.scheduleRefresh();
        }
      }),
      client.onDidChangeUsage((event) => {
        this.current.setUsage(event.sessionId, event.usage);
        if (event.sessionId === this.current.sessionId) {
          this.post({ type: "usage", sessionId: event.sessionId, usage: event.usage });
        }
      }),
      client.onDelta((event) => {
        if (event.sessionId === this.current.sessionId) {
          this.post({ type: "delta", sessionId: event.sessionId, messageId: event.messageId, text: event.text });
        }
      }),
      client.onDidChangeState((state) => {
        if (state === "running") {
          void this.refresh();
        }
      }),
    );
  }

  /** The messages of the current session's view, as last fetched. */
  get viewMessages(): readonly Message[] {
    return this.messages;
  }

  /** The messages selected in the webview, in view order. */
  get selection(): readonly string[] {
    return this.selected;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const root = this.context.extensionUri;
    view.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(root, "dist"), vscode.Uri.joinPath(root, "media")],
    };
    view.webview.html = chatHtml({
      cspSource: view.webview.cspSource,
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(root, "dist", "webview.js")).toString(),
      styleUris: STYLES.map((path) => view.webview.asWebviewUri(vscode.Uri.joinPath(root, path)).toString()),
      nonce: makeNonce(),
    });
    view.webview.onDidReceiveMessage((message: FromWebview) => void this.receive(message), undefined, this.subscriptions);
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
      }
    });
  }

  /** Shows the chat view (the meter's click). */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  /** Opens the session in the view and makes it the current one. */
  async select(sessionId: string): Promise<void> {
    const { session, messages, usage } = await this.client.rpc.getSession(sessionId);
    this.messages = messages;
    if (this.current.sessionId !== sessionId) {
      this.setSelection([]);
    }
    this.current.set(session, usage);
    this.sessions = await this.client.rpc.listSessions();
    await this.postSession();
  }

  async newChat(): Promise<Session> {
    const session = await this.client.rpc.createSession();
    await this.select(session.sessionId);
    return session;
  }

  async pickSession(): Promise<void> {
    const sessions = await this.client.rpc.listSessions();
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage("Baton: no conversations yet. Start one with New Chat or import one.");
      return;
    }
    const choice = await vscode.window.showQuickPick(sessionPickRows(sessions, this.current.sessionId), {
      title: "Baton: Open Conversation",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (choice !== undefined) {
      await this.select(choice.sessionId);
    }
  }

  /** Re-reads the current session (or opens the most recent one) and posts it. */
  async refresh(): Promise<void> {
    if (this.client.currentState !== "running" && this.client.currentState !== "starting") {
      return;
    }
    try {
      this.sessions = await this.client.rpc.listSessions();
      const wanted = this.current.sessionId;
      // the session on show while it exists; on start, or once it is deleted, the newest
      const target = this.sessions.some((s) => s.sessionId === wanted) ? wanted : mostRecent(this.sessions)?.sessionId;
      if (target === undefined) {
        this.messages = [];
        this.current.clear();
        await this.postSession();
        return;
      }
      await this.select(target);
    } catch (error) {
      this.post({ type: "error", message: errorMessage(error) });
    }
  }

  private scheduleRefresh(): void {
    if (this.sending !== undefined) {
      return; // a reply is streaming: the view refreshes once when it ends
    }
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.refresh(), REFRESH_DELAY_MS);
  }

  private async receive(message: FromWebview): Promise<void> {
    try {
      switch (message.type) {
        case "ready":
          return await this.refresh();
        case "send":
          return await this.send(message.text);
        case "stop":
          this.sending?.cancel();
          return;
        case "newChat":
          await this.newChat();
          return;
        case "pickSession":
          return await this.pickSession();
        case "selectSession":
          return await this.select(message.sessionId);
        case "import":
          await vscode.commands.executeCommand("baton.importSession");
          return;
        case "setApiKey":
          await vscode.commands.executeCommand("baton.setApiKey");
          return;
        case "undo":
          await vscode.commands.executeCommand("baton.undoCompaction", message.boundaryId);
          return;
        case "selection":
          this.setSelection(message.messageIds);
          return;
        case "openSessionDocument":
          await vscode.commands.executeCommand("baton.openSessionDocument");
          return;
      }
    } catch (error) {
      this.post({ type: "error", message: errorMessage(error) });
    }
  }

  private async send(text: string): Promise<void> {
    if (this.sending !== undefined || text.trim() === "") {
      return;
    }
    const cancel = new vscode.CancellationTokenSource();
    this.sending = cancel;
    this.post({ type: "busy", busy: true });
    try {
      const sessionId = this.current.sessionId ?? (await this.newChat()).sessionId;
      await this.client.withProgress("Baton: reply", vscode.ProgressLocation.Window, (options) =>
        this.client.rpc.send(sessionId, text, { ...options, token: cancel.token }),
      );
    } catch (error) {
      if (!isCancellation(error)) {
        this.post({ type: "error", message: sendFailure(error) });
      }
    } finally {
      cancel.dispose();
      this.sending = undefined;
      this.post({ type: "busy", busy: false });
      await this.refresh();
    }
  }

  private setSelection(messageIds: string[]): void {
    this.selected = messageIds;
    void vscode.commands.executeCommand("setContext", SELECTION_CONTEXT_KEY, messageIds.length >= 2);
  }

  private async postSession(): Promise<void> {
    this.post({
      type: "session",
      session: this.current.session ?? null,
      sessions: this.sessions,
      messages: this.current.session !== undefined ? this.messages : [],
      usage: this.current.usage ?? null,
      hasApiKey: await hasApiKey(this.context),
    });
  }

  private post(message: ToWebview): void {
    void this.view?.webview.postMessage(message);
  }

  dispose(): void {
    clearTimeout(this.refreshTimer);
    this.sending?.cancel();
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }
}

function sendFailure(error: unknown): string {
  switch (errorCode(error)) {
    case ErrorCodes.apiKeyMissing:
      return "No API key: replies need one (Baton: Set API Key). Everything else works without it.";
    case ErrorCodes.promptTooLong:
      return `The conversation is past the context limit: compact it first. (${errorMessage(error)})`;
    default:
      return errorMessage(error);
  }
}
