/**
 * Documents: `baton:/sessions/<id>.md` (the server's rendering of a session, where its
 * diagnostics and code actions live) and `baton-preview:` (a compaction preview report).
 */
import * as vscode from "vscode";
import type { BatonClient } from "./client";
import { SessionTexts } from "./sessionTexts";
import { SESSION_SCHEME, sessionDocumentPath, sessionIdFromUri } from "./sessionUri";

export { SESSION_SCHEME };
export const PREVIEW_SCHEME = "baton-preview";

export function sessionDocumentUri(sessionId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: SESSION_SCHEME, path: sessionDocumentPath(sessionId) });
}

/**
 * `baton:` as a file system whose files are the server's renderings. A content provider
 * would make the editor read-only, and VS Code offers no code actions (light bulb, Quick
 * Fix, Refactor) in a read-only editor; so the documents are writable in the editor, a
 * save is refused, and an edit is undone at once with a note: the conversation changes
 * through the chat and its compactions, never by editing its rendering.
 */
export class SessionFileSystem implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  private readonly texts: SessionTexts;
  private readonly subscriptions: vscode.Disposable[] = [];
  private reverting = false;
  readonly onDidChangeFile = this.emitter.event;

  constructor(client: BatonClient) {
    this.texts = new SessionTexts({ rpc: client.rpc, running: () => client.currentState === "running", now: () => Date.now() });
    this.subscriptions.push(
      // an open session document follows the session
      client.onDidChangeSession((event) => {
        this.texts.changed(event.sessionId);
        const type = event.reason === "delete" ? vscode.FileChangeType.Deleted : vscode.FileChangeType.Changed;
        this.emitter.fire([{ type, uri: sessionDocumentUri(event.sessionId) }]);
      }),
      vscode.workspace.onDidChangeTextDocument((event) => void this.undoEdit(event)),
      client.onDidChangeState((state) => {
        const ids = state === "running" ? this.texts.serverRunning() : [];
        if (ids.length === 0) {
          return;
        }
        this.emitter.fire(ids.map((id) => ({ type: vscode.FileChangeType.Changed, uri: sessionDocumentUri(id) })));
      }),
    );
  }

  /**
   * baton.dataDir changed: every session document open is the folder before's, which the
   * server no longer reads (and a session of the same id in the new folder, a copy, is
   * another conversation): each closes, to be read anew when opened again. How many closed.
   */
  async dataDirChanged(): Promise<number> {
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === SESSION_SCHEME);
    for (const tab of tabs) {
      const sessionId = sessionIdFromUri((tab.input as vscode.TabInputText).uri);
      if (sessionId !== undefined) this.texts.changed(sessionId);
    }
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
    return tabs.length;
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined); // every session's changes are announced anyway
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const sessionId = this.sessionId(uri);
    const text = await this.text(sessionId);
    return { type: vscode.FileType.File, ctime: 0, mtime: this.texts.mtime(sessionId), size: Buffer.byteLength(text) };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return Buffer.from(await this.text(this.sessionId(uri)));
  }

  writeFile(): void {
    throw vscode.FileSystemError.NoPermissions("A session document shows the conversation; it cannot be edited or saved.");
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions("Session documents are Baton's.");
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions("Delete a conversation from Baton, not its document.");
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions("Session documents are Baton's.");
  }

  private sessionId(uri: vscode.Uri): string {
    const sessionId = sessionIdFromUri(uri);
    if (sessionId === undefined) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return sessionId;
  }

  private async text(sessionId: string): Promise<string> {
    const read = await this.texts.read(sessionId);
    if ("missing" in read) throw vscode.FileSystemError.FileNotFound(sessionDocumentUri(sessionId));
    if ("unavailable" in read) throw vscode.FileSystemError.Unavailable(read.unavailable);
    return read.text;
  }

  /** Puts an edited session document back as the server renders it. */
  private async undoEdit(event: vscode.TextDocumentChangeEvent): Promise<void> {
    const document = event.document;
    if (this.reverting || document.uri.scheme !== SESSION_SCHEME || !document.isDirty || event.contentChanges.length === 0) {
      return;
    }
    this.reverting = true;
    try {
      await vscode.window.showTextDocument(document, { preserveFocus: true, preview: false });
      await vscode.commands.executeCommand("workbench.action.files.revert");
      void vscode.window.setStatusBarMessage("Baton: a session document cannot be edited; it shows the conversation.", 4000);
    } finally {
      this.reverting = false;
    }
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.emitter.dispose();
  }
}

/** Reports held in memory and shown as read-only Markdown documents. */
export class PreviewDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private next = 1;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "This preview is no longer available.";
  }

  async show(title: string, text: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: `/${this.next++}/${title}.md` });
    this.texts.set(uri.toString(), text);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(document, "markdown");
    await vscode.window.showTextDocument(document, { preview: true });
  }
}
