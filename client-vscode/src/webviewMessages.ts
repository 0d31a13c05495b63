// The messages between the extension host and the chat webview (`baton.chat`).
// Both sides import these types; the webview imports them type-only.
import type { Message, Session, Usage } from "./protocol";

/** Extension host -> webview. */
export type ToWebview =
  /** The whole state to show: the current session (or null for the welcome view). */
  | {
      type: "session";
      session: Session | null;
      sessions: Session[];
      messages: Message[];
      usage: Usage | null;
      hasApiKey: boolean;
    }
  /** The current session's usage changed (meter, category chart). */
  | { type: "usage"; sessionId: string; usage: Usage }
  /** Streamed reply text for an assistant message that is still being written. */
  | { type: "delta"; sessionId: string; messageId: string; text: string }
  /** A send is running (Stop shown, input disabled) or finished. */
  | { type: "busy"; busy: boolean }
  /** A failure to show in the panel (never a traceback). */
  | { type: "error"; message: string };

/** Webview -> extension host. */
export type FromWebview =
  | { type: "ready" }
  | { type: "send"; text: string }
  | { type: "stop" }
  | { type: "newChat" }
  | { type: "pickSession" }
  | { type: "selectSession"; sessionId: string }
  | { type: "import" }
  | { type: "setApiKey" }
  /** Undo a compaction: the summary's boundary, or the last one when absent. */
  | { type: "undo"; boundaryId?: string }
  /** The messages selected with click / shift-click, in view order (empty: none). */
  | { type: "selection"; messageIds: string[] }
  | { type: "openSessionDocument" };

/** What the webview keeps with `vscode.setState` so it survives hide and reload. */
export interface WebviewState {
  sessionId: string | null;
  draft: string;
  scrollTop: number;
  /** Whether the usage chart shows its per-category bars (absent: folded). */
  usageOpen?: boolean;
}
