/**
 * What a session document (`baton:/sessions/<id>.md`) reads, without the editor: the
 * server's rendering, a placeholder while no server runs (and which documents to read again
 * once one does), and each document's modification time. Pure (no vscode import):
 * sessionDocument.ts is the file system around it.
 */
import { ErrorCodes } from "./protocol";
import { errorCode, errorMessage, serverGone, ServerNotRunning, type BatonRpc } from "./rpc";
import { sessionDocumentPlaceholder } from "./sessionUri";

export interface SessionTextPorts {
  rpc: Pick<BatonRpc, "render">;
  /** Whether the server runs: a failure without one is a placeholder, not an error. */
  running(): boolean;
  /** The clock of the modification times (tests give their own). */
  now(): number;
}

/** A session document's text, or why there is none. */
export type SessionText = { text: string } | { missing: true } | { unavailable: string };

export class SessionTexts {
  private readonly changedAt = new Map<string, number>();
  /** Documents shown as a placeholder while no server ran: read again once one does. */
  private readonly waiting = new Set<string>();
  /**
   * The last rendering read, with the time it was read at: the editor looks at a file's
   * size (stat) and then reads it, and the second look takes it rather than render again.
   */
  private readonly kept = new Map<string, { mtime: number; text: string }>();

  constructor(private readonly ports: SessionTextPorts) {}

  /** The document's modification time (0: unchanged since the extension started). */
  mtime(sessionId: string): number {
    return this.changedAt.get(sessionId) ?? 0;
  }

  /**
   * The session changed: its document is to be read again. Its time moves on even within
   * one millisecond: the editor reads again only a file whose time or size changed.
   */
  changed(sessionId: string): void {
    this.changedAt.set(sessionId, Math.max(this.ports.now(), this.mtime(sessionId) + 1));
  }

  async read(sessionId: string): Promise<SessionText> {
    const mtime = this.mtime(sessionId);
    const kept = this.kept.get(sessionId);
    this.kept.delete(sessionId);
    if (kept !== undefined && kept.mtime === mtime) return { text: kept.text }; // unchanged since
    try {
      const text = (await this.ports.rpc.render(sessionId)).text;
      this.waiting.delete(sessionId);
      this.kept.set(sessionId, { mtime, text });
      return { text };
    } catch (error) {
      if (errorCode(error) === ErrorCodes.sessionNotFound) return { missing: true };
      const lost = serverGone(error) && !(error instanceof ServerNotRunning);
      if (!this.ports.running() || lost) {
        // a tab restored at reload asks before the server runs, and one read as the server
        // stopped (crashed: the editor restarts it) was asked too soon: say so rather than fail
        this.waiting.add(sessionId);
        return { text: sessionDocumentPlaceholder(sessionId, lost ? "it stopped before it answered" : errorMessage(error)) };
      }
      return { unavailable: `Baton: ${errorMessage(error)}` };
    }
  }

  /** A server runs now: the documents shown as a placeholder, each marked changed. */
  serverRunning(): string[] {
    const ids = [...this.waiting];
    this.waiting.clear();
    for (const id of ids) this.changed(id);
    return ids;
  }
}
