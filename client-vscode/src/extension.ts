// Activation: wires the language client, the meter, the chat view, the documents and the
// commands, and returns the API other chat extensions use (src/api.ts).
import * as vscode from "vscode";
import type { BatonApi } from "./api";
import { createApi } from "./apiImpl";
import { CHAT_VIEW_ID, ChatView } from "./chatView";
import { BatonClient } from "./client";
import { registerCommands } from "./commands";
import { DraftFlow } from "./compactDraft";
import { oldDataDirLine } from "./draftCard";
import { CurrentSession } from "./currentSession";
import { SETTINGS_SECTION } from "./protocol";
import { onInterpreterChange } from "./python";
import { API_KEY_SECRET } from "./secrets";
import { PREVIEW_SCHEME, PreviewDocuments, SESSION_SCHEME, SessionFileSystem } from "./sessionDocument";
import { Meter } from "./status";

let client: BatonClient | undefined;

export function activate(context: vscode.ExtensionContext): BatonApi {
  const log = vscode.window.createOutputChannel("Baton", { log: true });
  client = new BatonClient(context, log);
  const current = new CurrentSession();
  const meter = new Meter(current);
  const chat = new ChatView(context, client, current);
  const sessionDocuments = new SessionFileSystem(client);
  const previews = new PreviewDocuments();
  const drafts = new DraftFlow(client, current);
  const batonClient = client;
  let dataDir = dataDirSetting();
  context.subscriptions.push(
    log,
    client,
    current,
    meter,
    chat,
    sessionDocuments,
    current.onDidChange(() => meter.render()),
    client.onDidChangeState((state) => {
      meter.setServerState(state, batonClient.serverLabel);
      if (state === "running") {
        sendActiveEditor(batonClient, vscode.window.activeTextEditor);
      }
    }),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chat),
    vscode.workspace.registerFileSystemProvider(SESSION_SCHEME, sessionDocuments, { isCaseSensitive: true }),
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, previews),
    vscode.window.onDidChangeActiveTextEditor((editor) => sendActiveEditor(batonClient, editor)),
    // the key reaches the server only at initialization: a new key needs a new server, once
    // the reply or compaction in flight has ended (a restart would cut it short)
    context.secrets.onDidChange((event) => {
      if (event.key === API_KEY_SECRET) {
        void batonClient.restartWhenIdle("for the changed API key");
      }
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`${SETTINGS_SECTION}.server.command`)) {
        void batonClient.restartWhenIdle("for the changed server command");
      }
      // what is open of the folder before closes: the server reads the new one
      if (event.affectsConfiguration(`${SETTINGS_SECTION}.dataDir`) && dataDirSetting() !== dataDir) {
        dataDir = dataDirSetting();
        void closeOldDataDir(sessionDocuments, drafts);
      }
    }),
  );
  context.subscriptions.push(drafts);
  registerCommands(context, client, chat, current, previews, drafts);
  void onInterpreterChange(() => {
    const configured = vscode.workspace.getConfiguration(SETTINGS_SECTION).get<string[]>("server.command") ?? [];
    if (configured.length === 0) {
      void batonClient.restartWhenIdle("for the changed Python interpreter");
    }
  }).then((subscription) => context.subscriptions.push(subscription));
  void client.start();
  return createApi(client, chat, current);
}

/** The baton.dataDir setting as the server reads it (a blank one is not given). */
function dataDirSetting(): string | null {
  const value = vscode.workspace.getConfiguration(SETTINGS_SECTION).get<unknown>("dataDir");
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

/** Closes the compaction draft and the session documents of the data dir used before, and says so. */
async function closeOldDataDir(documents: SessionFileSystem, drafts: DraftFlow): Promise<void> {
  const draft = await drafts.dataDirChanged();
  const line = oldDataDirLine(await documents.dataDirChanged(), draft);
  if (line !== undefined) void vscode.window.showInformationMessage(line);
}

function sendActiveEditor(client: BatonClient, editor: vscode.TextEditor | undefined): void {
  client.notifyActiveEditor(editor !== undefined ? editor.document.uri.toString() : null);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
