/**
 * The input box's draft, weighed as the user types: once the box rests, `baton/usage` with
 * the draft, and the line under the box (the context once sent, the server's warning).
 * Only the latest answer for the session on show is posted. Pure: no vscode import.
 */
import { draftLine } from "./chatLogic";
import type { BatonRpc } from "./rpc";
import type { DraftLine, ToWebview } from "./webviewMessages";

export interface DraftPorts {
  rpc: Pick<BatonRpc, "draftUsage">;
  post(message: ToWebview): void;
  serverAvailable(): boolean;
  /** The session on show now. */
  sessionId(): string | undefined;
}

export class DraftUsageWatch {
  /** The input box as last reported. */
  text = "";
  private timer: ReturnType<typeof setTimeout> | undefined;
  private asked = 0;

  constructor(
    private readonly ports: DraftPorts,
    private readonly delayMs: number,
  ) {}

  /** The box changed (or the session did): its usage once sent is asked for when it rests. */
  changed(text: string = this.text): void {
    this.text = text;
    clearTimeout(this.timer);
    const asked = ++this.asked;
    const sessionId = this.ports.sessionId();
    if (sessionId === undefined) {
      return;
    }
    if (text.trim() === "" || !this.ports.serverAvailable()) {
      this.ports.post({ type: "draftUsage", sessionId, draft: null });
      return;
    }
    this.timer = setTimeout(() => void this.ask(sessionId, text, asked), this.delayMs);
  }

  private async ask(sessionId: string, text: string, asked: number): Promise<void> {
    let draft: DraftLine | null = null;
    try {
      draft = draftLine(await this.ports.rpc.draftUsage(sessionId, { text }));
    } catch {
      // no figure for this draft (the server is restarting, say): the line goes
    }
    if (asked === this.asked && sessionId === this.ports.sessionId()) {
      this.ports.post({ type: "draftUsage", sessionId, draft });
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
