/**
 * What a failed request means and says: no server answered (none ran, or it stopped before
 * its answer), a Baton error's stable code, the one line a person reads, a cancellation.
 * Pure (no vscode import), as rpc.ts, which re-exports it.
 */
import { ErrorCodes } from "./protocol";

/** What a request says when the server stopped before it answered (crashed, say). */
export const SERVER_GONE =
  "Baton's server stopped before it answered. Baton: Show Logs says why; Baton: Restart Server starts it again if it is not back.";

/** A request made while no server runs: nothing was sent. */
export class ServerNotRunning extends Error {
  constructor() {
    super("Baton's server is not running (Baton: Show Logs says why; Baton: Restart Server tries again)");
    this.name = "ServerNotRunning";
  }
}

/**
 * The client's own codes for a request no server answers: its connection is down
 * (ConnectionInactive, nothing sent) or went down before the answer came
 * (PendingResponseRejected, the request may have been carried out).
 */
const CONNECTION_INACTIVE = -32096;
const PENDING_RESPONSE_REJECTED = -32097;

function rpcCode(error: unknown): unknown {
  return typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
}

/** Whether the failure is that no server answered: none ran, or it stopped before answering. */
export function serverGone(error: unknown): boolean {
  const code = rpcCode(error);
  return error instanceof ServerNotRunning || code === CONNECTION_INACTIVE || code === PENDING_RESPONSE_REJECTED;
}

/** Whether the request went and its server stopped before answering: it may have been carried out. */
export function answerLost(error: unknown): boolean {
  return rpcCode(error) === PENDING_RESPONSE_REJECTED;
}

/** The stable `data.code` of a Baton error, if the failure is one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "data" in error) {
    const data = (error as { data?: unknown }).data;
    if (typeof data === "object" && data !== null && typeof (data as { code?: unknown }).code === "string") {
      return (data as { code: string }).code;
    }
  }
  return undefined;
}

/**
 * A one-line message for the user: the server's words, never a stack; a missing key with the
 * extension's way to set one (the server's words name the environment and the
 * initializationOptions, which a VS Code user does not edit).
 */
export function errorMessage(error: unknown): string {
  if (errorCode(error) === ErrorCodes.apiKeyMissing) {
    return "no Anthropic API key: set one with Baton: Set API Key";
  }
  // the client's words ("Pending response rejected since connection got disposed") say nothing a person can act on
  if (serverGone(error) && !(error instanceof ServerNotRunning)) return SERVER_GONE;
  if (error instanceof Error || (typeof error === "object" && error !== null && "message" in error)) {
    const message = String((error as { message: unknown }).message);
    return message.split("\n")[0] ?? message;
  }
  return String(error);
}

/** True when the failure is the request's own cancellation. */
export function isCancellation(error: unknown): boolean {
  return rpcCode(error) === -32800;
}
