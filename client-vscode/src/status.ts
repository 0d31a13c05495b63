/** The status-bar meter `baton.meter`: context used by the current session; a click shows the chat. */
import * as vscode from "vscode";
import type { ServerState } from "./client";
import type { CurrentSession } from "./currentSession";
import { meterBackground, meterText, meterTooltip } from "./meterText";

export const SHOW_CHAT_COMMAND = "baton.showChat";

export class Meter implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private serverState: ServerState = "stopped";
  private serverLabel: string | undefined;

  constructor(private readonly current: CurrentSession) {
    this.item = vscode.window.createStatusBarItem("baton.meter", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "Baton context meter";
    this.item.command = SHOW_CHAT_COMMAND;
    this.render();
    this.item.show();
  }

  /** The server's state, and which server runs (its version and where it came from). */
  setServerState(state: ServerState, label?: string): void {
    this.serverState = state;
    this.serverLabel = label;
    this.render();
  }

  render(): void {
    const { session, usage } = this.current;
    if (this.serverState === "failed" || this.serverState === "stopped") {
      this.item.text = "$(circle-slash) Baton";
      this.item.tooltip = "Baton's server is not running. Baton: Show Logs says why; Baton: Restart Server tries again.";
      this.item.command = "baton.showLogs";
      this.item.backgroundColor = undefined;
      return;
    }
    this.item.command = SHOW_CHAT_COMMAND;
    if (session === undefined || usage === undefined) {
      this.item.text = this.serverState === "starting" ? "$(sync~spin) Baton" : "$(comment-discussion) Baton";
      this.item.tooltip = "Baton: no conversation open. Click to show the chat." + this.serverLine();
      this.item.backgroundColor = undefined;
      return;
    }
    this.item.text = meterText(usage);
    const tooltip = new vscode.MarkdownString(meterTooltip(usage, session.title, session.compactions) + this.serverLine());
    tooltip.supportThemeIcons = true;
    this.item.tooltip = tooltip;
    const background = meterBackground(usage);
    this.item.backgroundColor = background === undefined ? undefined : new vscode.ThemeColor(background);
  }

  private serverLine(): string {
    return this.serverLabel !== undefined ? `\n\nServer: ${this.serverLabel}` : "";
  }

  dispose(): void {
    this.item.dispose();
  }
}
