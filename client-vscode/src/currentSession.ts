/** The session the user is looking at: the chat view's, or the last one an API caller used. */
import type { Session, Usage } from "./protocol";
import type { BatonRpc } from "./rpc";

/** Pure (no vscode import): the chat controller and its tests use it as it is. */
export class CurrentSession {
  private current: { session: Session; usage: Usage | undefined } | undefined;
  private readonly listeners = new Set<() => void>();

  get sessionId(): string | undefined {
    return this.current?.session.sessionId;
  }

  get session(): Session | undefined {
    return this.current?.session;
  }

  get usage(): Usage | undefined {
    return this.current?.usage;
  }

  /** Calls `listener` after every change; returns what stops it. */
  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  set(session: Session, usage: Usage | undefined): void {
    this.current = { session, usage };
    this.fire();
  }

  /** A newer usage figure; ignored unless it is the current session's. */
  setUsage(sessionId: string, usage: Usage): void {
    if (this.current !== undefined && this.current.session.sessionId === sessionId) {
      this.current = { ...this.current, usage };
      this.fire();
    }
  }

  clear(): void {
    if (this.current !== undefined) {
      this.current = undefined;
      this.fire();
    }
  }

  dispose(): void {
    this.listeners.clear();
  }

  private fire(): void {
    for (const listener of this.listeners) {
      listener();
    }
  }
}

/**
 * The title of session `sessionId` when another one is on show (a notification about it then
 * names it), undefined when it is on show; its id when the list no longer holds it.
 */
export async function titleIfNotShown(
  current: CurrentSession,
  rpc: Pick<BatonRpc, "listSessions">,
  sessionId: string,
): Promise<string | undefined> {
  return current.sessionId === sessionId ? undefined : sessionTitle(current, rpc, sessionId);
}

/** The title of session `sessionId`: the one on show's, else the list's; its id when the list no longer holds it. */
export async function sessionTitle(current: CurrentSession, rpc: Pick<BatonRpc, "listSessions">, sessionId: string): Promise<string> {
  if (current.sessionId === sessionId && current.session !== undefined) return current.session.title;
  const sessions = await rpc.listSessions().catch(() => []);
  return sessions.find((session) => session.sessionId === sessionId)?.title ?? sessionId;
}
