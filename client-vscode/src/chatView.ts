/** The `baton.chat` webview view: its HTML and the editor side of the chat controller. */
import * as vscode from "vscode";
import { ChatController } from "./chatController";
import type { ChatPorts } from "./chatPorts";
import { chatHtml, makeNonce } from "./chatHtml";
import { applyToFile, insertAtCursor, PROPOSED_SCHEME, ProposedDocuments } from "./codeActions";
import { sessionPickRows } from "./chatLogic";
import type { BatonClient } from "./client";
import type { CurrentSession } from "./currentSession";
import { SETTINGS_SECTION, type Message, type ModelSwitch, type Session } from "./protocol";
import { hasApiKey } from "./secrets";
import { ToolsView } from "./toolsView";
import { isToolsMessage, type FromWebview, type ToWebview } from "./webviewMessages";

export const CHAT_VIEW_ID = "baton.chat";
const STYLES = ["media/chat.css"];

const COMMANDS = {
  import: "baton.importSession",
  setApiKey: "baton.setApiKey",
  undo: "baton.undoCompaction",
  openSessionDocument: "baton.openSessionDocument",
} as const;

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private readonly controller: ChatController;
  private readonly tools: ToolsView;
  private readonly subscriptions: vscode.Disposable[] = [];
  /** The listeners of the view on show: a view closed and opened again is resolved anew. */
  private readonly viewListeners: vscode.Disposable[] = [];
  private readonly proposed = new ProposedDocuments();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly client: BatonClient,
    private readonly current: CurrentSession,
  ) {
    this.tools = new ToolsView((message) => this.post(message), () => this.view?.visible === true, client.log);
    client.setPermissionHandler((params, token) => this.tools.permissions.handle(params, token));
    const ports: ChatPorts = {
      rpc: client.rpc,
      post: (message) => this.post(message),
      hasApiKey: () => hasApiKey(context),
      serverAvailable: () => client.currentState === "running" || client.currentState === "starting",
      sendWithProgress: (run, said) => client.withProgress("Baton: reply", vscode.ProgressLocation.Window, run, said),
      compactWithProgress: (run) => client.withProgress("Baton: compacting before the send", vscode.ProgressLocation.Notification, run),
      command: async (name, arg, sessionId) =>
        name === "pickSession" ? this.pickSession() : await vscode.commands.executeCommand(COMMANDS[name], arg, sessionId),
      attachments: this.tools,
      insertCode: (code) => insertAtCursor(code),
      applyCode: (code, file) => applyToFile(this.proposed, code, file),
      showSessionDocument: async (sessionId, range) => {
        await vscode.commands.executeCommand(COMMANDS.openSessionDocument, sessionId, range);
      },
    };
    this.controller = new ChatController(ports, current);
    this.subscriptions.push(
      vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this.proposed),
      client.onDidChangeSession((event) => void this.controller.onSessionChanged(event)),
      client.onDidChangeUsage((event) => this.controller.onUsageChanged(event)),
      client.onDelta((event) => this.controller.onDelta(event)),
      client.onAutoCompact((event) => this.controller.onAutoCompact(event)),
      // a restart waiting for a reply a card holds waits for the user: the panel says so
      client.onDidChangeRestartWait((why) => this.tools.permissions.restartWaits(why)),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${SETTINGS_SECTION}.dataDir`)) void this.controller.dataDirChanged();
      }),
      vscode.window.onDidChangeWindowState((state) => {
        if (state.focused) void this.controller.windowFocused();
      }),
      client.onDidChangeState((state) => {
        if (state === "running") {
          void this.controller.refresh();
        } else {
          // the server that asked is gone: its questions end denied, their cards with them
          this.tools.permissions.denyAll();
        }
      }),
    );
  }

  get viewMessages(): readonly Message[] {
    return this.controller.viewMessages;
  }

  get selection(): readonly string[] {
    return this.controller.selection;
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
    this.disposeViewListeners(); // the view before this one's, if it was not disposed
    view.webview.onDidReceiveMessage((message: FromWebview) => this.receive(message), undefined, this.viewListeners);
    view.onDidChangeVisibility(() => {
      if (!view.visible) {
        this.tools.permissions.panelGone(); // nobody would see the card: a dialog asks
      }
    }, undefined, this.viewListeners);
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
        this.tools.permissions.panelGone();
        this.disposeViewListeners();
      }
    }, undefined, this.viewListeners);
  }

  private disposeViewListeners(): void {
    for (const listener of this.viewListeners.splice(0)) listener.dispose();
  }

  /** Shows the chat view (the meter's click). */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  select(sessionId: string): Promise<void> {
    return this.controller.select(sessionId);
  }

  newChat(): Promise<Session> {
    return this.controller.newChat();
  }

  /** Switches a session's model, the current one's by default (undefined: no session is open). */
  switchModel(model: string, sessionId?: string): Promise<ModelSwitch | undefined> {
    return this.controller.switchModel(model, sessionId);
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
      await this.controller.select(choice.sessionId);
    }
  }

  private receive(message: FromWebview): void {
    if (isToolsMessage(message)) {
      void this.tools.receive(message).catch((error: unknown) => this.client.log.warn(`chat view: ${String(error)}`));
      return;
    }
    if (message.type === "ready") {
      this.tools.ready();
    }
    void this.controller.receive(message);
  }

  private post(message: ToWebview): void {
    void this.view?.webview.postMessage(message);
  }

  dispose(): void {
    this.client.setPermissionHandler(undefined);
    this.tools.dispose();
    this.controller.dispose();
    this.disposeViewListeners();
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }
}
