// The prompt sent whose outcome has not come: the saved draft keeps its text until then, so
// that a view reloaded mid-send offers it again if it was not sent. After a reload of the
// whole window no outcome ever comes (another extension host): once the session it went to
// holds it as its last prompt, it is no draft any more. A prompt not sent to a session
// while another is on show goes back into the box once its session is on show again.
import type { ToWebview } from "../src/webviewMessages";
import type { Composer } from "./composer";
import type { Host } from "./host";
import { holdsPrompt } from "./pending";
import type { SessionUpdate } from "./viewPages";

export class SentPrompt {
  /** Prompts not sent, by the session they were for, until it is on show. */
  private readonly returned = new Map<string, string>();

  constructor(
    private readonly host: Host,
    private readonly composer: Composer,
  ) {}

  /** `text` goes to session `sessionId` (null: none on show, the host makes one). */
  sending(text: string, sessionId: string | null): void {
    this.host.save({ sent: { text, sessionId } });
  }

  /** The host said how the send ended; `shown`: the session on show. */
  outcome(message: Extract<ToWebview, { type: "sendOutcome" }>, shown: string | null): void {
    if (!message.stored && message.sessionId !== null && message.sessionId !== shown) {
      this.returned.set(message.sessionId, message.text); // not into another session's box
    } else this.composer.sendEnded(message.stored, message.text);
    if (message.stored && this.composer.draft.trim() === "") this.host.save({ draft: "" });
    this.ended();
  }

  private ended(): void {
    this.host.save({ sent: null });
  }

  /** A session update: the prompt the session holds leaves the box it came back into. */
  settle(update: SessionUpdate): void {
    const session = update.session?.sessionId;
    const returned = session === undefined ? undefined : this.returned.get(session);
    if (session !== undefined && returned !== undefined) {
      this.returned.delete(session);
      this.composer.restore(returned);
    }
    const sent = this.host.state.sent;
    if (!sent || session === undefined || (sent.sessionId !== null && sent.sessionId !== session)) return;
    if (!holdsPrompt(update.messages, sent.text)) return;
    // the box and the saved draft each, unless something else was typed there since
    if (this.composer.draft === sent.text) this.composer.setDraft("");
    if (this.host.state.draft === sent.text) this.host.save({ draft: "" });
    this.ended();
  }
}
