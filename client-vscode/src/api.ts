/**
 * The API Baton's extension returns from activate(), for chat extensions that own their
 * own panel: hand Baton the conversation, get its usage, compaction and diagnostics.
 *
 *     const baton = vscode.extensions.getExtension<BatonApi>("baton.baton");
 *     const api = await baton?.activate();
 */
import type { ClientContext, CompactResult, Direction, Message, MessageInput, Session, Usage } from "./protocol";

export type { ClientContext, CompactResult, Direction, Message, MessageInput, Session, Usage } from "./protocol";

/** An event in the shape of vscode.Event, without requiring the vscode types. */
export type BatonEvent<T> = (listener: (event: T) => unknown) => { dispose(): unknown };

export interface UsageChange {
  sessionId: string;
  usage: Usage;
}

export interface CompactOptions {
  /** "all" (default), "up_to", "from" or "range". */
  direction?: Direction;
  /** The pivot message for "up_to" / "from", the first message for "range". */
  pivotMessageId?: string;
  /** The last message for "range". */
  endMessageId?: string;
  /** Extra instructions for the summary. */
  instructions?: string;
  /** Plan only: nothing is summarized or changed, `summary` is null. */
  dryRun?: boolean;
}

export interface BatonApi {
  /** The API's version; grows when methods are added. */
  readonly version: 1;
  /**
   * Creates a session in Baton's data dir. A caller that sends its model a system prompt
   * or tools of its own (not through Baton) declares them in `clientContext`, as sizes in
   * tokens or as their text, so that the usage counts them.
   */
  createSession(options?: {
    title?: string;
    systemPrompt?: string;
    model?: string;
    clientContext?: ClientContext;
  }): Promise<Session>;
  /**
   * Appends messages (validated; nothing is written when one is bad). `clientContext`, when
   * the caller's own system prompt or tools changed, declares them again (a figure left out
   * keeps its last value).
   */
  append(
    sessionId: string,
    messages: MessageInput[],
    clientContext?: ClientContext,
  ): Promise<{ messageIds: string[]; usage: Usage; repairs: string[] }>;
  /** The model's current view: the messages to send to a model, after compactions. */
  getView(sessionId: string): Promise<Message[]>;
  /** The session's context usage. */
  getUsage(sessionId: string): Promise<Usage>;
  /** Fires whenever any session's usage changes. */
  readonly onDidChangeUsage: BatonEvent<UsageChange>;
  /** Compacts the session (the whole of it by default). */
  compact(sessionId: string, options?: CompactOptions): Promise<CompactResult>;
  /** Undoes a compaction: the given boundary, or the last one. */
  uncompact(sessionId: string, boundaryId?: string): Promise<{ usage: Usage }>;
}
