// The prompt sent whose outcome has not come, kept with the session it went to: the saved
// draft is the box's text alone, so a view reloaded mid-send never shows that prompt in the
// box of another session. Once its session is on show after a reload, the prompt comes back
// into the box unless the session holds it (after a reload of the whole window no outcome
// ever comes: a prompt the session holds was sent, one it does not hold can be sent again).
// A prompt not sent to a session while another is on show goes back into the box once its
// session is on show again; the saved state keeps it until then. A prompt kept for a session
// the list no longer holds (deleted, here or elsewhere) comes into the box once it is empty,
// with a notice, as the host does with the prompts it keeps (src/chatSend.ts).
import type { ToWebview } from "../src/webviewMessages";
import type { Composer } from "./composer";
import type { Host } from "./host";
import { holdsPrompt } from "./pending";
import type { SessionUpdate } from "./viewPages";

type Sent = { text: string; sessionId: string | null };

export class SentPrompt {
  /** The prompt sent before the view (re)loaded, not back in a box yet. */
  private reloaded: Sent | undefined;

  constructor(
    private readonly host: Host,
    private readonly composer: Composer,
    /** Says `message` as a notice about the session on show. */
    private readonly notify: (message: string) => void,
  ) {
    const sent = host.state.sent ?? undefined;
    this.reloaded = sent;
    // a view saved with the prompt in its draft as well: the prompt comes back with its session
    if (sent && host.state.draft === sent.text) host.save({ draft: "" });
  }

  /** `text` goes to session `sessionId` (null: none on show, the host makes one). */
  sending(text: string, sessionId: string | null): void {
    this.host.save({ sent: { text, sessionId }, draft: "" });
  }

  /** The host said how the send ended; `shown`: the session on show. */
  outcome(message: Extract<ToWebview, { type: "sendOutcome" }>, shown: string | null): void {
    if (this.reloaded?.text === message.text) this.reloaded = undefined;
    if (!message.stored && message.sessionId !== null && message.sessionId !== shown) {
      this.hold(message.sessionId, message.text); // not into another session's box
    } else this.composer.sendEnded(message.stored, message.text);
    if (message.stored && this.composer.draft.trim() === "") this.host.save({ draft: "" });
    // a prompt the host hands back (a deleted session's, one kept for a session left) is not this send's
    if (this.isSent(message)) this.ended();
  }

  /** Whether `message` tells the outcome of the send in flight (sent to no session: the host made one). */
  private isSent(message: Extract<ToWebview, { type: "sendOutcome" }>): boolean {
    const sent = this.host.state.sent;
    if (!sent || sent.text !== message.text) return false;
    return sent.sessionId === null || message.sessionId === null || sent.sessionId === message.sessionId;
  }

  private ended(): void {
    this.host.save({ sent: null });
  }

  /** A session update: what waits for this session comes into its box; the prompt the session holds leaves it. */
  settle(update: SessionUpdate): void {
    const session = update.session?.sessionId;
    if (session === undefined) return;
    const returned = this.host.state.returned?.[session];
    if (returned !== undefined) {
      this.hold(session, undefined);
      this.composer.restore(returned);
    }
    const reloaded = this.reloaded;
    if (reloaded && (reloaded.sessionId === null || reloaded.sessionId === session)) {
      this.reloaded = undefined;
      if (!holdsPrompt(update.messages, reloaded.text)) this.composer.restore(reloaded.text);
    }
    this.settleDeleted(update);
    const sent = this.host.state.sent;
    if (!sent || (sent.sessionId !== null && sent.sessionId !== session)) return;
    if (!holdsPrompt(update.messages, sent.text)) return;
    // the box and the saved draft each, unless something else was typed there since
    if (this.composer.draft === sent.text) this.composer.setDraft("");
    if (this.host.state.draft === sent.text) this.host.save({ draft: "" });
    this.ended();
  }

  /**
   * What waits for a session the update's list no longer holds would wait for good: it comes
   * into the box on show when that box is empty (else at a later update), said by a notice
   * as it is not that session's. A prompt of a send the view saw go there before a reload
   * counts, as no outcome comes for it once the window reloaded.
   */
  private settleDeleted(update: SessionUpdate): void {
    const gone = (sessionId: string | null): sessionId is string =>
      sessionId !== null && !update.sessions.some((s) => s.sessionId === sessionId);
    const waiting = Object.entries(this.host.state.returned ?? {}).filter(([sessionId]) => gone(sessionId));
    const reloaded = this.reloaded;
    if (reloaded && gone(reloaded.sessionId)) waiting.push([reloaded.sessionId, reloaded.text]);
    for (const [sessionId, text] of waiting) {
      if (this.composer.draft.trim() !== "") return;
      if (reloaded?.sessionId === sessionId && reloaded.text === text) {
        this.reloaded = undefined;
        if (this.host.state.sent?.text === text) this.ended();
      } else this.hold(sessionId, undefined);
      this.composer.restore(text);
      this.notify("A prompt not sent to a conversation deleted since is back in the box.");
    }
  }

  /** Keeps `text` for `sessionId`'s box until that session is on show (undefined: forget it). */
  private hold(sessionId: string, text: string | undefined): void {
    const returned = { ...this.host.state.returned };
    if (text === undefined) delete returned[sessionId];
    else returned[sessionId] = text;
    this.host.save({ returned });
  }
}
