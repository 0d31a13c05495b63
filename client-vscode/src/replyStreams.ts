/**
 * The reply streaming in each session, its text so far, for a webview that has not seen it:
 * one reloaded mid-reply, or back on the session after showing another, dropped what had
 * streamed, and the deltas to come would continue a reply it shows no start of. Pure.
 */
import type { Message, ServerNotificationMap } from "./protocol";

type Delta = ServerNotificationMap["baton/session/delta"];

export class ReplyStreams {
  private readonly streams = new Map<string, { messageId: string; text: string }>();
  private posted: string | null | undefined; // the session the webview was last sent (undefined: a fresh webview)

  /** A delta of a reply in `event.sessionId` (a new message id: the next reply of the turn). */
  delta(event: Delta): void {
    const stream = this.streams.get(event.sessionId);
    if (stream?.messageId === event.messageId) stream.text += event.text;
    else this.streams.set(event.sessionId, { messageId: event.messageId, text: event.text });
  }

  /** The webview (re)loaded: it holds nothing. */
  reloaded(): void {
    this.posted = undefined;
  }

  /**
   * A view of `sessionId` was posted (`messages`, the whole of it; `busy`, whether a send
   * runs): the delta that brings a webview that showed another session, or none, the reply's
   * text so far. A reply the view holds, or any once no send runs, is done.
   */
  shown(sessionId: string | null, messages: readonly Message[], busy: boolean): Delta | undefined {
    if (!busy) this.streams.clear();
    const fresh = this.posted !== sessionId;
    this.posted = sessionId;
    const stream = sessionId !== null ? this.streams.get(sessionId) : undefined;
    if (sessionId === null || stream === undefined) return undefined;
    if (messages.some((m) => m.id === stream.messageId)) {
      this.streams.delete(sessionId);
      return undefined;
    }
    return fresh ? { sessionId, messageId: stream.messageId, text: stream.text } : undefined;
  }
}
