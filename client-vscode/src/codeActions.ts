/**
 * A chat code block's Insert at Cursor and Apply to File. Apply shows the change as a diff
 * (the file against a proposed document holding the block's code) and writes it only when
 * the user accepts; nothing is saved for them.
 */
import * as vscode from "vscode";

export const PROPOSED_SCHEME = "baton-proposed";

/** The proposed documents' texts, by URI, for the diff's right side. */
export class ProposedDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private next = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  /** A new proposed document for `target` holding `text`. */
  propose(target: vscode.Uri, text: string): vscode.Uri {
    const name = target.path.split("/").pop() || "proposed";
    const uri = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${++this.next}/${name}` });
    this.texts.set(uri.toString(), text);
    return uri;
  }

  forget(uri: vscode.Uri): void {
    this.texts.delete(uri.toString());
  }
}

/** Inserts `code` at the active editor's cursor (replacing what is selected). */
export async function insertAtCursor(code: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    void vscode.window.showInformationMessage("Baton: open a file to insert the code into.");
    return;
  }
  await editor.edit((edit) => {
    for (const selection of editor.selections) edit.replace(selection, code);
  });
}

/** Where a block's file is: an absolute path, or one relative to the first workspace folder. */
export function resolveTarget(file: string | undefined): vscode.Uri | undefined {
  if (file === undefined) return vscode.window.activeTextEditor?.document.uri;
  if (/^([a-zA-Z]:[\\/]|\/)/.test(file)) return vscode.Uri.file(file);
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? vscode.Uri.joinPath(folder.uri, file.replace(/^\.\//, "")) : undefined;
}

/** Shows the file against `code` as a diff; on Apply the file's text becomes `code`. */
export async function applyToFile(proposed: ProposedDocuments, code: string, file: string | undefined): Promise<void> {
  const target = resolveTarget(file);
  if (target === undefined) {
    const why = file === undefined ? "open the file to apply the code to" : `open a folder to find ${file} in`;
    void vscode.window.showInformationMessage(`Baton: ${why}.`);
    return;
  }
  const exists = await vscode.workspace.fs.stat(target).then(
    () => true,
    () => false,
  );
  const right = proposed.propose(target, code);
  const left = exists ? target : proposed.propose(target, "");
  const name = vscode.workspace.asRelativePath(target);
  try {
    await vscode.commands.executeCommand("vscode.diff", left, right, `${name} ↔ proposed by Baton`, { preview: true });
    const choice = await vscode.window.showInformationMessage(
      exists ? `Baton: apply the proposed change to ${name}?` : `Baton: create ${name} with the proposed code?`,
      "Apply",
      "Discard",
    );
    if (choice !== "Apply") return;
    const edit = new vscode.WorkspaceEdit();
    if (exists) {
      const document = await vscode.workspace.openTextDocument(target);
      const whole = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
      edit.replace(target, whole, code);
    } else {
      edit.createFile(target, { ignoreIfExists: true, contents: new TextEncoder().encode(code) });
    }
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showErrorMessage(`Baton: ${name} could not be changed.`);
      return;
    }
    await vscode.window.showTextDocument(target, { preview: false });
  } finally {
    proposed.forget(right);
    if (left !== target) proposed.forget(left);
  }
}
