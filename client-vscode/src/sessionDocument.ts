/**
 * Read-only documents: `baton:/sessions/<id>.md` (the server's rendering of a session, where
 * its diagnostics and code actions live) and `baton-preview:` (a compaction preview report).
 */
import * as vscode from "vscode";
import type { BatonClient } from "./client";
import { SESSION_SCHEME, sessionDocumentPath, sessionIdFromUri } from "./sessionUri";

export { SESSION_SCHEME };
export const PREVIEW_SCHEME = "baton-preview";

export function sessionDocumentUri(sessionId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: SESSION_SCHEME, path: sessionDocumentPath(sessionId) });
}

export class SessionDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  private readonly subscription: vscode.Disposable;
  readonly onDidChange = this.emitter.event;

  constructor(private readonly client: BatonClient) {
    // an open session document follows the session
    this.subscription = client.onDidChangeSession((event) => {
      const uri = sessionDocumentUri(event.sessionId);
      if (vscode.workspace.textDocuments.some((doc) => doc.uri.toString() === uri.toString())) {
        this.emitter.fire(uri);
      }
    });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const sessionId = sessionIdFromUri(uri);
    if (sessionId === undefined) {
      throw new Error(`not a Baton session document: ${uri.toString()}`);
    }
    return (await this.client.rpc.render(sessionId)).text;
  }

  dispose(): void {
    this.subscription.dispose();
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
