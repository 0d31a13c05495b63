/**
 * The input box's draft, weighed as the user types: once the box rests, `baton/usage` with
 * the draft, and the line under the box (the context once sent, the server's warning).
 * Only the latest answer for the session on show is posted. And what Send does with the
 * server's verdict on the prompt. Pure: no vscode import.
 */
import { CancellationTokenSource, type CancellationToken } from "vscode-languageserver-protocol";
import { draftLine } from "./chatLogic";
import { compactSummaryLine } from "./compactReport";
import type { DraftUsage } from "./protocol";
import { errorMessage, isCancellation, type BatonRpc, type CallOptions } from "./rpc";
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

/** What Send needs besides the draft's usage: a compaction under progress, and the panel. */
export interface RoomPorts {
  rpc: Pick<BatonRpc, "draftUsage" | "compact">;
  post(message: ToWebview): void;
  compactWithProgress<T>(run: (options: CallOptions) => Promise<T>): Promise<T>;
}

/**
 * Whether the prompt may go now, from the server's verdict on it: one that cannot fit is
 * not sent (the panel says why); one over the limit with auto-compact off or paused is
 * sent after a compaction (or not, saying why that failed); one past the auto-compact
 * point is announced (the server compacts before the request goes out).
 */
export async function makeRoom(ports: RoomPorts, sessionId: string, text: string, token: CancellationToken): Promise<boolean> {
  let usage: DraftUsage;
  try {
    usage = await ports.rpc.draftUsage(sessionId, { text });
  } catch {
    return true; // no verdict: the send itself says what is wrong
  }
  const draft = usage.draft;
  const message = draft?.message ?? "";
  switch (draft?.verdict) {
    case "tooLarge":
      ports.post({ type: "error", message: `Not sent: ${message}`, scope: "session" });
      return false;
    case "autoCompact":
      ports.post({ type: "notice", sessionId, message, tone: "info" });
      return true;
    case "compactFirst":
      ports.post({ type: "notice", sessionId, message: `${message} Compacting…`, tone: "warning", about: "compactFirst" });
      try {
        const result = await ports.compactWithProgress(async (options) => {
          // the send's Stop, or the Cancel of the compaction's progress (else it did nothing)
          const stop = either(token, options.token);
          try {
            return await ports.rpc.compact(sessionId, { direction: "all" }, { ...options, token: stop.token });
          } finally {
            stop.dispose();
          }
        });
        ports.post({ type: "notice", sessionId, message: compactSummaryLine(result), tone: "info" });
        return true;
      } catch (error) {
        // nothing is compacting any more: "Compacting…" would stay on show until its timeout
        ports.post({ type: "noticeEnd", sessionId, about: "compactFirst" });
        if (isCancellation(error)) {
          return false;
        }
        const why = `Not sent: the conversation could not be compacted first (${errorMessage(error)}).`;
        ports.post({ type: "error", message: why, scope: "session" });
        return false;
      }
    default:
      return true;
  }
}

/** A token cancelled when either is; disposing it lets go of both. */
function either(first: CancellationToken, second: CancellationToken | undefined): { token: CancellationToken; dispose(): void } {
  const source = new CancellationTokenSource();
  const links = [first, second].map((token) => {
    if (token?.isCancellationRequested === true) source.cancel();
    return token?.onCancellationRequested(() => source.cancel());
  });
  return {
    token: source.token,
    dispose: () => {
      for (const link of links) link?.dispose();
      source.dispose();
    },
  };
}
