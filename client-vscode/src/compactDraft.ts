/**
 * "Preview Compaction": the draft's summary in an editable Markdown editor (an untitled
 * document) beside a card with Apply / Regenerate / Discard, the sizes and the cost. Apply
 * commits what the editor holds: the draft as written, or the edited text (draftEdit.ts
 * follows the edit; this is the editor around it).
 */
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { BatonClient } from "./client";
import { sessionTitle, titleIfNotShown, type CurrentSession } from "./currentSession";
import { afterCompactionLine, draftCardHtml, goneDraftLine, isCardAction, type CardAction } from "./draftCard";
import { DraftEdit } from "./draftEdit";
import type { DraftOptions } from "./draftRpc";
import { ErrorCodes, type CompactDraft, type CompactResult } from "./protocol";
import { errorCode } from "./rpc";

const OPEN_CONTEXT = "baton.draftOpen";

interface Open {
  edit: DraftEdit;
  document: vscode.TextDocument;
  panel: vscode.WebviewPanel;
  /** The draft's conversation's title. */
  whose: string;
}

export class DraftFlow implements vscode.Disposable {
  private open: Open | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly client: BatonClient,
    private readonly current: CurrentSession,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (this.open !== undefined && event.document === this.open.document) {
          this.open.edit.textChanged();
        }
      }),
    );
  }

  /** Writes a draft (with progress, cancellable) and shows it: the summary, then its card. */
  async preview(sessionId: string, options: DraftOptions): Promise<CompactDraft> {
    const draft = await this.client.withProgress("Baton: writing a compaction draft", vscode.ProgressLocation.Notification, (call) =>
      this.client.drafts.preview(sessionId, options, call),
    );
    await this.show(sessionId, draft);
    return draft;
  }

  /** Commits the open draft: the editor's text when it was edited, else the draft as written. */
  async apply(): Promise<CompactResult | undefined> {
    const { edit } = this.requireOpen();
    const { draftId, summary } = await edit.commit(); // the draft the edit was measured as, when it was
    const open = this.requireOpen();
    let result: CompactResult;
    try {
      result = await this.client.withProgress("Baton: applying the compaction draft", vscode.ProgressLocation.Notification, (call) =>
        this.client.drafts.apply(edit.sessionId, draftId, summary, call),
      );
    } catch (error) {
      if (errorCode(error) === ErrorCodes.draftStale) {
        void this.offerPreviewAgain(open, error);
        return undefined;
      }
      if (errorCode(error) === ErrorCodes.draftNotFound) {
        await this.drop(open);
        return undefined;
      }
      throw error;
    }
    await this.close();
    // another conversation on show by now: the line says which one was compacted
    const elsewhere = await titleIfNotShown(this.current, this.client.rpc, edit.sessionId);
    void vscode.window.showInformationMessage(afterCompactionLine(result, elsewhere));
    return result;
  }

  /** Writes the draft again with the instructions the user gives. */
  async regenerate(): Promise<void> {
    const { edit } = this.requireOpen();
    const instructions = await vscode.window.showInputBox({
      title: "Baton: Regenerate Compaction Draft",
      prompt: "Instructions for the new summary (what to keep, what to leave out)",
      value: edit.draft.instructions ?? "",
    });
    if (instructions === undefined) {
      return;
    }
    const { draftId } = await edit.settled(); // a measure under way replaces the draft
    const options: DraftOptions = { draftId, instructions: instructions.trim() || null };
    const open = this.requireOpen();
    let draft: CompactDraft;
    try {
      draft = await this.client.withProgress("Baton: writing the compaction draft again", vscode.ProgressLocation.Notification, (call) =>
        this.client.drafts.preview(edit.sessionId, options, call),
      );
    } catch (error) {
      if (errorCode(error) !== ErrorCodes.draftNotFound) throw error;
      await this.drop(open);
      return;
    }
    await this.show(edit.sessionId, draft);
  }

  async discard(): Promise<void> {
    await this.requireOpen().edit.discard();
    await this.close();
    void vscode.window.showInformationMessage("Baton: compaction draft discarded; nothing changed.");
  }

  /**
   * baton.dataDir changed: the open draft is the folder before's, which the server no longer
   * reads, and an Apply would commit the draft of that id in the new folder (a copy of the
   * old one holds it). Its card goes, with its editor unless the summary was edited there.
   * What closed, for the editor to say; undefined when no draft was open.
   */
  async dataDirChanged(): Promise<{ title: string; edited: boolean } | undefined> {
    const open = this.open;
    if (open === undefined) return undefined;
    const { edited } = open.edit.state;
    if (edited) {
      this.open = undefined;
      void vscode.commands.executeCommand("setContext", OPEN_CONTEXT, false);
      open.edit.close();
      open.panel.dispose();
    } else {
      await this.close();
    }
    return { title: open.whose, edited };
  }

  dispose(): void {
    this.open?.edit.close();
    this.open?.panel.dispose();
    for (const s of this.subscriptions) {
      s.dispose();
    }
  }

  private requireOpen(): Open {
    if (this.open === undefined) {
      throw new Error("no compaction draft is open: run Baton: Preview Compaction first");
    }
    return this.open;
  }

  private async show(sessionId: string, draft: CompactDraft): Promise<void> {
    const open = this.open;
    let document: vscode.TextDocument;
    if (open !== undefined && !open.document.isClosed) {
      document = open.document; // a regenerated draft replaces the text in the same editor
      const edit = new vscode.WorkspaceEdit();
      edit.replace(document.uri, new vscode.Range(0, 0, document.lineCount, 0), draft.summary);
      await vscode.workspace.applyEdit(edit);
    } else {
      document = await vscode.workspace.openTextDocument({ language: "markdown", content: draft.summary });
    }
    await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.One, preview: false });
    const whose = await sessionTitle(this.current, this.client.rpc, sessionId);
    const panel =
      open?.panel ??
      vscode.window.createWebviewPanel("baton.compactionDraft", "Baton: Compaction Draft", {
        viewColumn: vscode.ViewColumn.Beside,
        preserveFocus: true,
      }, { enableScripts: true });
    // the card stays while the user opens other conversations: it says whose draft it is
    panel.title = `Baton: Compaction Draft of “${whose}”`;
    if (open?.panel === undefined) {
      panel.webview.onDidReceiveMessage((message: unknown) => {
        const action = typeof message === "object" && message !== null ? (message as { action?: unknown }).action : undefined;
        if (isCardAction(action)) {
          void vscode.commands.executeCommand(commandOf(action));
        }
      });
      panel.onDidDispose(() => {
        if (this.open?.panel === panel) {
          this.open = undefined;
          void vscode.commands.executeCommand("setContext", OPEN_CONTEXT, false);
        }
      });
    }
    open?.edit.close(); // a measure of the draft before is no news for this one
    const edit = new DraftEdit(sessionId, draft, {
      drafts: this.client.drafts,
      text: () => document.getText(),
      changed: () => this.render(),
      log: (message) => this.client.log.warn(message),
    });
    this.open = { edit, document, panel, whose };
    void vscode.commands.executeCommand("setContext", OPEN_CONTEXT, true);
    this.render();
  }

  private render(): void {
    const open = this.open;
    if (open === undefined) {
      return;
    }
    const nonce = randomBytes(16).toString("base64");
    open.panel.webview.html = draftCardHtml(open.edit.draft, nonce, open.edit.state, open.panel.webview.cspSource);
  }

  /** The draft's editor goes without asking to save it (it is the draft, not a file). */
  private async close(): Promise<void> {
    const open = this.open;
    this.open = undefined;
    void vscode.commands.executeCommand("setContext", OPEN_CONTEXT, false);
    if (open === undefined) {
      return;
    }
    open.edit.close();
    open.panel.dispose();
    if (!open.document.isClosed) {
      await vscode.window.showTextDocument(open.document, { viewColumn: vscode.ViewColumn.One, preview: false });
      await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
    }
  }

  /**
   * The server no longer has the open draft: its card goes, with the editor unless the user
   * edited the summary there, and the user is told why in words.
   */
  private async drop(open: Open): Promise<void> {
    const { edited } = open.edit.state;
    if (this.open === open && edited) {
      this.open = undefined;
      void vscode.commands.executeCommand("setContext", OPEN_CONTEXT, false);
      open.edit.close();
      open.panel.dispose();
    } else if (this.open === open) {
      await this.close();
    }
    void vscode.window.showErrorMessage(goneDraftLine(edited));
  }

  private async offerPreviewAgain(open: Open, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String((error as { message?: unknown }).message ?? error);
    const choice = await vscode.window.showErrorMessage(`Baton: ${message}`, "Preview Again");
    if (choice === "Preview Again") {
      await this.preview(open.edit.sessionId, { draftId: open.edit.draft.draftId }); // the same request, on the session as it is now
    }
  }
}

export const DRAFT_COMMANDS: Record<CardAction, string> = {
  apply: "baton.applyCompactionDraft",
  regenerate: "baton.regenerateCompactionDraft",
  discard: "baton.discardCompactionDraft",
};

function commandOf(action: CardAction): string {
  return DRAFT_COMMANDS[action];
}
