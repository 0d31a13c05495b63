/**
 * The editor side of the panel's workspace-tools parts: the attachment chips that follow the
 * active editor, the `@` picker's file search (workspace.findFiles, so files.exclude holds),
 * dropped files, and the permission cards (or, with the panel hidden, a modal dialog).
 */
import * as vscode from "vscode";
import { AttachmentSet, rankFiles, type EditorSnapshot } from "./attachments";
import type { LineRange } from "./protocol";
import { modalText, PermissionBroker } from "./toolPermission";
import type { SendAttachment } from "./toolWire";
import type { FileItem, ToolsFromWebview, ToWebview } from "./webviewMessages";

/** How long the workspace's file list is reused between `@` queries. */
const FILE_LIST_MS = 5_000;
const FILE_LIST_MAX = 5_000;
const EDITOR_DELAY_MS = 150;

export class ToolsView implements vscode.Disposable {
  readonly permissions: PermissionBroker;
  private readonly attachments = new AttachmentSet();
  private readonly subscriptions: vscode.Disposable[] = [];
  private files: { at: number; items: Promise<FileItem[]> } | undefined;
  private lastChips = "";
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly post: (message: ToWebview) => void,
    visible: () => boolean,
    log: vscode.LogOutputChannel,
  ) {
    this.permissions = new PermissionBroker({
      panelVisible: visible,
      showCard: (request) => this.post({ type: "permission", request }),
      dropCard: (toolUseId) => this.post({ type: "permissionDone", toolUseId }),
      askModal: async (request) => {
        const { message, detail, buttons } = modalText(request);
        const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, ...buttons.map((b) => b.label));
        return buttons.find((b) => b.label === choice)?.id;
      },
      restartNote: (message) => this.post({ type: "restartWaits", message }),
      log: (message) => log.warn(message),
    });
    const later = (): void => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.postChips(), EDITOR_DELAY_MS);
    };
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.postChips()),
      vscode.window.onDidChangeTextEditorSelection(later),
      vscode.window.onDidChangeTextEditorVisibleRanges(later),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document === vscode.window.activeTextEditor?.document) later();
      }),
    );
  }

  /** The panel (re)loaded: its chips and the cards still waiting. */
  ready(): void {
    this.lastChips = "";
    this.postChips();
    for (const request of this.permissions.pending) this.post({ type: "permission", request });
    const restart = this.permissions.restartLine;
    if (restart !== null) this.post({ type: "restartWaits", message: restart });
  }

  /** What a send attaches now. */
  build(): SendAttachment[] {
    return this.attachments.build(snapshot(), openText);
  }

  /** The send took its attachments: the picked ones go. */
  sent(): void {
    this.attachments.sent();
    this.postChips();
  }

  async receive(message: ToolsFromWebview): Promise<void> {
    switch (message.type) {
      case "removeChip":
        this.attachments.remove(message.id);
        return this.postChips();
      case "findFiles": {
        const items = rankFiles(message.query, await this.fileList());
        this.post({ type: "fileResults", query: message.query, items });
        return;
      }
      case "attachFile":
        return this.attach([vscode.Uri.file(message.path)]);
      case "attachUris":
        return this.attach(message.uris.flatMap((u) => parseUri(u)));
      case "permissionAnswer":
        this.permissions.answer(message.toolUseId, message.outcome);
        return;
    }
  }

  private async attach(uris: vscode.Uri[]): Promise<void> {
    for (const uri of uris) {
      if (uri.scheme !== "file") continue;
      try {
        if ((await vscode.workspace.fs.stat(uri)).type & vscode.FileType.File) {
          this.attachments.pick(uri.fsPath, vscode.workspace.asRelativePath(uri, false));
        }
      } catch {
        // a file that is gone is not attached
      }
    }
    this.postChips();
  }

  private postChips(): void {
    const chips = this.attachments.chips(snapshot());
    const key = JSON.stringify(chips);
    if (key === this.lastChips) return;
    this.lastChips = key;
    this.post({ type: "chips", chips });
  }

  /** Open editors first, then the workspace's files (files.exclude honoured), cached briefly. */
  private fileList(): Promise<FileItem[]> {
    const now = Date.now();
    if (this.files === undefined || now - this.files.at > FILE_LIST_MS) {
      const items = (async (): Promise<FileItem[]> => {
        const open = vscode.window.tabGroups.all
          .flatMap((group) => group.tabs)
          .flatMap((tab) => (tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === "file" ? [tab.input.uri] : []));
        const found = await vscode.workspace.findFiles("**/*", undefined, FILE_LIST_MAX);
        const item = (uri: vscode.Uri, isOpen: boolean): FileItem => ({ path: uri.fsPath, name: vscode.workspace.asRelativePath(uri, false), open: isOpen });
        return [...open.map((u) => item(u, true)), ...found.map((u) => item(u, false))];
      })();
      this.files = { at: now, items };
      items.catch(() => (this.files = undefined));
    }
    return this.files.items;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.permissions.dispose();
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}

/** The active text editor, when it shows a file on disk. */
function snapshot(): EditorSnapshot | undefined {
  const editor = vscode.window.activeTextEditor;
  const document = editor?.document;
  if (editor === undefined || document === undefined || document.uri.scheme !== "file") return undefined;
  const visible = editor.visibleRanges[0];
  const selection = editor.selection;
  const result: EditorSnapshot = {
    path: document.uri.fsPath,
    name: vscode.workspace.asRelativePath(document.uri, false),
    languageId: document.languageId,
    lineCount: document.lineCount,
    text: (range?: LineRange) => (range === undefined ? document.getText() : document.getText(lineRange(document, range))),
  };
  if (visible !== undefined) result.visible = { startLine: visible.start.line + 1, endLine: visible.end.line + 1 };
  if (!selection.isEmpty) {
    // a selection that ends at the start of a line does not take that line
    const end = selection.end.character === 0 && selection.end.line > selection.start.line ? selection.end.line : selection.end.line + 1;
    result.selection = { startLine: selection.start.line + 1, endLine: end };
  }
  return result;
}

function lineRange(document: vscode.TextDocument, range: LineRange): vscode.Range {
  const last = Math.min(range.endLine, document.lineCount) - 1;
  return new vscode.Range(range.startLine - 1, 0, last, document.lineAt(Math.max(last, 0)).range.end.character);
}

function openText(path: string): { text: string; languageId: string } | undefined {
  const document = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === path);
  return document === undefined ? undefined : { text: document.getText(), languageId: document.languageId };
}

function parseUri(text: string): vscode.Uri[] {
  const line = text.trim();
  if (line === "" || line.startsWith("#")) return [];
  try {
    return [line.startsWith("/") ? vscode.Uri.file(line) : vscode.Uri.parse(line, true)];
  } catch {
    return [];
  }
}
