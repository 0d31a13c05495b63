/**
 * What sends to a session the user had left said, kept until that session is on show again:
 * a send's failure (its banner), the prompt it did not send (back into that session's box),
 * and the prompts of sessions deleted since (into the box on show, once it is empty).
 */
import type { ChatPorts } from "./chatPorts";
import type { CurrentSession } from "./currentSession";
import type { DraftUsageWatch } from "./draftUsage";

export class UnseenOutcomes {
  /** The failures of sends to sessions the user had left meanwhile: each said once its session is on show again. */
  private readonly unseenFailures = new Map<string, string>();
  /** The prompts not sent to a session the user had left meanwhile: back in the box once it is on show. */
  private readonly unseenReturns = new Map<string, string>();
  /**
   * The prompts not sent to a session deleted since, by that session: each comes into the box
   * on show once it is empty (or into its own, should the session come back).
   */
  private readonly orphans = new Map<string, string>();

  constructor(
    private readonly ports: Pick<ChatPorts, "post">,
    private readonly current: CurrentSession,
    private readonly draft: DraftUsageWatch,
  ) {}

  /**
   * `sessionId` is on show (again): what a send to it said while the user was elsewhere is
   * said now, once: its failure, and the prompt it did not send (back into the box).
   */
  shown(sessionId: string): void {
    const failure = this.unseenFailures.get(sessionId);
    if (failure !== undefined) {
      this.unseenFailures.delete(sessionId);
      this.ports.post({ type: "error", message: failure, scope: "session" });
    }
    const text = this.unseenReturns.get(sessionId) ?? this.orphans.get(sessionId);
    this.unseenReturns.delete(sessionId);
    this.orphans.delete(sessionId);
    if (text !== undefined) this.ports.post({ type: "sendOutcome", stored: false, text, sessionId });
    else this.releaseOrphans();
  }

  /**
   * `sessionId` was deleted: the failure kept for it goes, it is about a request long gone.
   * The prompt it did not send is not lost: it comes into the box on show when that box is
   * empty (said by a notice, as it is not that session's), else at the first session update
   * that finds the box empty, or once the deleted session is on show again (its transcript
   * moved back).
   */
  deleted(sessionId: string): void {
    this.unseenFailures.delete(sessionId);
    const text = this.unseenReturns.get(sessionId);
    if (text === undefined || this.current.sessionId === sessionId) return;
    this.unseenReturns.delete(sessionId);
    this.orphans.set(sessionId, text);
    this.releaseOrphans();
  }

  /** A send to `sessionId`, which the user has left, failed: said once it is on show again. */
  failure(sessionId: string, message: string): void {
    this.unseenFailures.set(sessionId, message);
  }

  /**
   * A prompt not sent to `sessionId`, which the user has left, goes back into its box once it
   * is on show; `missing`: the send found it deleted (another window, the CLI), so it is never
   * on show again and the prompt is a deleted session's.
   */
  promptBack(sessionId: string, text: string, missing: boolean): void {
    if (missing) {
      this.orphans.set(sessionId, text);
      this.releaseOrphans();
    } else this.unseenReturns.set(sessionId, text);
  }

  /** The prompts of deleted sessions come into the box on show, when it is empty. */
  private releaseOrphans(): void {
    const shown = this.current.sessionId;
    if (this.orphans.size === 0 || shown === undefined || this.draft.text.trim() !== "") return;
    for (const text of this.orphans.values()) this.ports.post({ type: "sendOutcome", stored: false, text, sessionId: shown });
    this.orphans.clear();
    const message = "A prompt not sent to a conversation deleted since is back in the box.";
    this.ports.post({ type: "notice", sessionId: shown, message, tone: "info" });
  }
}
