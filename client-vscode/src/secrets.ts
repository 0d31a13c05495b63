/** The Anthropic API key in VS Code's SecretStorage (never in settings.json). */
import * as vscode from "vscode";

export const API_KEY_SECRET = "baton.anthropicApiKey";

export async function apiKey(context: vscode.ExtensionContext): Promise<string | undefined> {
  return (await context.secrets.get(API_KEY_SECRET)) || undefined;
}

/** A key in SecretStorage, or one the server inherits from the environment. */
export async function hasApiKey(context: vscode.ExtensionContext): Promise<boolean> {
  return (await apiKey(context)) !== undefined || Boolean(process.env.ANTHROPIC_API_KEY);
}

/**
 * "Baton: Set API Key": a password box; an empty answer removes the key. `busy`: whether a
 * request is in flight, which the server's restart with the new key waits for.
 */
export async function promptForApiKey(context: vscode.ExtensionContext, busy: () => boolean = () => false): Promise<void> {
  const value = await vscode.window.showInputBox({
    title: "Baton: Set API Key",
    prompt: "Your Anthropic API key. Kept in VS Code's secret storage; leave empty to remove it.",
    password: true,
    ignoreFocusOut: true,
    placeHolder: "sk-ant-...",
  });
  if (value === undefined) {
    return;
  }
  const key = value.trim();
  if (key) {
    await context.secrets.store(API_KEY_SECRET, key);
    const when = busy() ? " once the reply or compaction in progress ends" : "";
    void vscode.window.showInformationMessage(`Baton: API key saved; the server restarts with it${when}.`);
  } else {
    await context.secrets.delete(API_KEY_SECRET);
    void vscode.window.showInformationMessage("Baton: API key removed.");
  }
}
