/**
 * The chat controller's line to the editor: the ports it is given (the chat view supplies
 * them; tests fake them), and how a failure reaches the panel's banner.
 */
import { ErrorCodes, type Range } from "./protocol";
import { errorCode, errorMessage, serverGone, ServerNotRunning, type BatonRpc, type CallOptions } from "./rpc";
import type { SendAttachment } from "./toolWire";
import type { ErrorScope, ToWebview } from "./webviewMessages";

/** What the controller needs from the editor (the chat view supplies it; tests fake it). */
export interface ChatPorts {
  rpc: Pick<
    BatonRpc,
    | "listSessions"
    | "getSession"
    | "createSession"
    | "send"
    | "draftUsage"
    | "compact"
    | "setModel"
    | "rewind"
    | "uncompact"
    | "listModels"
    | "renameSession"
    | "deleteSession"
    | "replaced"
    | "render"
  >;
  post(message: ToWebview): void;
  hasApiKey(): Promise<boolean>;
  /** Whether a server runs (or is starting): no refresh is tried without one. */
  serverAvailable(): boolean;
  /**
   * Runs a send under editor progress; `options` carries the Stop token, `said` is given
   * each message the progress says.
   */
  sendWithProgress<T>(run: (options: CallOptions) => Promise<T>, said?: (message: string) => void): Promise<T>;
  /** Runs a compaction (the one a send needs first) under editor progress. */
  compactWithProgress<T>(run: (options: CallOptions) => Promise<T>): Promise<T>;
  /** The editor commands the webview's buttons stand for. */
  command(name: "import" | "setApiKey" | "undo" | "openSessionDocument" | "pickSession", arg?: string, sessionId?: string): Promise<unknown>;
  /** The editor context a send attaches (the chips on show), and word that they went. */
  attachments?: { build(): SendAttachment[]; sent(): void };
  /** A code block's Insert at Cursor. */
  insertCode(code: string): Promise<void>;
  /** A code block's Apply to File (`file`: the one it names; none: the active editor's). */
  applyCode(code: string, file: string | undefined): Promise<void>;
  /** Session `sessionId`'s document, scrolled to `range` (a message's lines) when given. */
  showSessionDocument(sessionId: string, range: Range | undefined): Promise<void>;
}

export const NO_SERVER =
  "Baton's server is not running. Baton: Show Logs says why; Baton: Restart Server tries again.";

/**
 * A failure in the panel's banner, scoped so the view knows what makes it stale; `opening`:
 * the failure of the session the panel is waiting for (its Send waits no more).
 */
export function postError(ports: ChatPorts, error: unknown, message = errorMessage(error), opening = false): void {
  const which = opening ? { opening } : {};
  if (!ports.serverAvailable() || error instanceof ServerNotRunning) {
    ports.post({ type: "error", message: NO_SERVER, scope: "server", ...which });
    return;
  }
  // a server gone (restarting, say) is no news once it answers again
  const scope: ErrorScope = serverGone(error) ? "server" : errorCode(error) === ErrorCodes.apiKeyMissing ? "apiKey" : "session";
  ports.post({ type: "error", message, scope, ...which });
}
