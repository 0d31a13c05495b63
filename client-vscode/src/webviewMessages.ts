// The messages between the extension host and the chat webview (`baton.chat`).
// Both sides import these types; the webview imports them type-only.
import type { DraftInfo, LineRange, Message, ModelCatalog, Session, TodoEntry, Usage } from "./protocol";
import type { PermissionOutcome, ToolPermissionParams } from "./toolWire";

/** Extension host -> webview. */
export type ToWebview =
  /**
   * The whole state to show: the current session (or null for the welcome view). A long
   * view comes as its last page: `messages` are the view's from index `offset` of
   * `totalMessages` (both absent: the whole view); the webview asks for the rest
   * (`loadEarlier`) once that page is drawn.
   */
  | {
      type: "session";
      session: Session | null;
      sessions: Session[];
      messages: Message[];
      usage: Usage | null;
      hasApiKey: boolean;
      offset?: number;
      totalMessages?: number;
      /** The session's task list (the model's latest TodoWrite), absent when it has none. */
      todos?: TodoEntry[];
    }
  /**
   * A page of the messages a compaction replaced (`loadReplaced`'s answer), from index
   * `offset` of `totalMessages`; `error` instead when they could not be read.
   */
  | {
      type: "replaced";
      sessionId: string;
      boundaryId: string;
      messages: Message[];
      offset: number;
      totalMessages: number;
      error?: string;
    }
  /** The view's messages before the last page posted (`loadEarlier`'s answer): indexes 0 to `messages.length`. */
  | { type: "earlier"; sessionId: string; messages: Message[]; totalMessages: number }
  /** The current session's usage changed (meter, category chart). */
  | { type: "usage"; sessionId: string; usage: Usage }
  /** Streamed reply text for an assistant message that is still being written. */
  | { type: "delta"; sessionId: string; messageId: string; text: string }
  /**
   * What the send running in `sessionId` is doing, as its progress says it ("Waiting for the
   * model", "Rate limited by the API: trying again in 30 s (attempt 2 of 3)"): shown under
   * the turn until the reply's next text or the send's end.
   */
  | { type: "status"; sessionId: string; message: string }
  /**
   * A send is running in session `sessionId` (its view shows Stop; another session's, a Send
   * that waits) or finished.
   */
  | { type: "busy"; busy: boolean; sessionId: string | null }
  /**
   * A failure to show in the panel (never a traceback). `scope` says when it is stale: a
   * "server" failure once the server answers, an "apiKey" one once a key is set, a
   * "session" one once another session is shown; none: until dismissed or the next send.
   * `opening`: the session the view asked for (selectSession, newChat), the latest it asked
   * for, could not be opened: its wait ends and the session on show stays. Any other
   * failure meanwhile (an Apply, say) leaves the view waiting for it.
   */
  | { type: "error"; message: string; scope?: ErrorScope; opening?: boolean }
  /**
   * A brief notice (an auto-compaction, a compaction before a send): shown, then it goes.
   * `about: "rewind"`: the messages an edit or a Retry took out of the view, which a
   * `noticeEnd` about the same ends early (they came back); `"compactFirst"`: the compaction
   * a send runs first, ended early when it fails or is stopped (nothing is compacting);
   * `"model"`: a model switch's warning, ended by a later switch that gives none.
   */
  | { type: "notice"; sessionId: string; message: string; tone: "info" | "warning"; about?: NoticeAbout }
  /** What a notice about `about` said is no longer true: it goes now. */
  | { type: "noticeEnd"; sessionId: string; about: NoticeAbout }
  /** What the draft would do once sent (`baton/usage` with the draft), or null: no figure. */
  | { type: "draftUsage"; sessionId: string; draft: DraftLine | null }
  /**
   * How a send to `sessionId` ended for the prompt: `stored` (the session holds it: the draft
   * goes) or not (nothing was sent: `text` goes back into the input box once that session is
   * on show; the host says so when it is).
   */
  | { type: "sendOutcome"; stored: boolean; text: string; sessionId: string | null }
  | PickersToWebview
  | ToolsToWebview;

/** What a notice is about, when something can make it stale before it goes by itself. */
export type NoticeAbout = "rewind" | "compactFirst" | "model";

/** The header's pickers: the models to choose from, the sessions as listed now. */
export type PickersToWebview =
  /** `listModels`' answer: the catalog, or null and why (the model picker says it). */
  | { type: "models"; catalog: ModelCatalog | null; message?: string }
  /** `listSessions`' answer, and the list after a rename or delete. */
  | { type: "sessions"; sessions: Session[] };

/** The workspace tools' part of the panel: attachment chips, the `@` picker, permission cards. */
export type ToolsToWebview =
  /** The chips a send would attach now (the editor's, then the picked files). */
  | { type: "chips"; chips: AttachmentChip[] }
  /** The `@` picker's rows for `query`. */
  | { type: "fileResults"; query: string; items: FileItem[] }
  /** The server asks before a tool runs: show a card until it is answered or withdrawn. */
  | { type: "permission"; request: ToolPermissionParams }
  /** The permission request was answered elsewhere or withdrawn (the turn was cancelled). */
  | { type: "permissionDone"; toolUseId: string }
  /**
   * A restart of the server (a changed API key, say) waits for the reply the cards hold: the
   * line shown above them while any waits (null: none, or the restart began).
   */
  | { type: "restartWaits"; message: string | null };

/** One attachment chip above the input box. */
export interface AttachmentChip {
  id: string;
  kind: "file" | "selection";
  /** e.g. "utils.py", "app.py:120-180" */
  label: string;
  /** the tooltip: the path and what of it goes */
  detail: string;
  path: string;
  range?: LineRange;
  /** follows the editor (the active file, the selection) rather than picked */
  auto: boolean;
}

/** A row of the `@` picker: a workspace file or an open editor. */
export interface FileItem {
  path: string;
  /** the workspace-relative path */
  name: string;
  open: boolean;
}

export type ErrorScope = "server" | "apiKey" | "session";

/** The line under the input box: the context once the draft is sent, and a warning. */
export interface DraftLine {
  /** e.g. "After sending: ~152.3K / 200K (76%)". */
  text: string;
  verdict: DraftInfo["verdict"];
  /** The server's sentence when the draft does not simply fit. */
  warning?: string;
}

/** Webview -> extension host. */
export type FromWebview =
  | { type: "ready" }
  /**
   * `sessionId`: the session on show when the user sent (the host may already be opening
   * another one): the prompt goes there. Absent or null: the current one, else a new chat.
   */
  | { type: "send"; text: string; sessionId?: string | null }
  /** Edit and resend: `messageId` (a past prompt) and what followed it leave the view, then `text` is sent. */
  | { type: "edit"; messageId: string; text: string; sessionId?: string | null }
  /**
   * Retry: the last reply leaves the view and a new one is asked for. `sessionId`: the
   * session on show (as with send).
   */
  | { type: "retry"; sessionId?: string | null }
  /** The input box changed (the host asks for its usage, debounced). */
  | { type: "draft"; text: string }
  /** Stop the reply in `sessionId`, the session on show (absent: whichever runs). */
  | { type: "stop"; sessionId?: string | null }
  | { type: "newChat" }
  | { type: "pickSession" }
  | { type: "selectSession"; sessionId: string }
  | { type: "import" }
  | { type: "setApiKey" }
  /** Undo a compaction: the summary's boundary, or the last one when absent. */
  /** `sessionId`: the session on show, whose summary card was clicked (as with send). */
  | { type: "undo"; boundaryId?: string; sessionId?: string | null }
  /** The messages selected with click / shift-click, in view order (empty: none). */
  | { type: "selection"; messageIds: string[] }
  | { type: "openSessionDocument" }
  /** A long text's Open in editor: the session document, at message `messageId`'s lines when the view holds it. */
  | { type: "openMessage"; messageId: string }
  /** A code block's Insert: the code goes in at the active editor's cursor. */
  | { type: "insertCode"; code: string }
  /** A code block's Apply: a diff of the file (named, else the active editor's) against the code, applied once accepted. */
  | { type: "applyCode"; code: string; file?: string }
  /** The last page posted is drawn: send the view's messages before index `before`. */
  | { type: "loadEarlier"; sessionId: string; before: number }
  | PickersFromWebview
  /** A summary card's "summarized messages" opened: the page of compaction `boundaryId`'s from `offset`. */
  | { type: "loadReplaced"; sessionId: string; boundaryId: string; offset: number }
  | ToolsFromWebview;

export type PickersFromWebview =
  /** The model picker opened: the models to choose from (`baton/models`). */
  | { type: "listModels" }
  /**
   * A model chosen: the session on show when it was chosen switches to it
   * (`baton/session/setModel`); the host may already be opening another one.
   */
  | { type: "setModel"; model: string; sessionId?: string | null }
  /** The session picker opened: the list as it is now. */
  | { type: "listSessions" }
  | { type: "renameSession"; sessionId: string; title: string }
  /** Delete, once the user confirmed it in the picker. */
  | { type: "deleteSession"; sessionId: string };

export type ToolsFromWebview =
  | { type: "removeChip"; id: string }
  /** `@` was typed: the files matching what follows it. */
  | { type: "findFiles"; query: string }
  | { type: "attachFile"; path: string }
  /** Files dropped or pasted on the panel, as URIs (file: ones attach). */
  | { type: "attachUris"; uris: string[] }
  | { type: "permissionAnswer"; toolUseId: string; outcome: PermissionOutcome };

const TOOLS_FROM_WEBVIEW: ReadonlySet<string> = new Set(["removeChip", "findFiles", "attachFile", "attachUris", "permissionAnswer"]);

export function isToolsMessage(message: FromWebview): message is ToolsFromWebview {
  return TOOLS_FROM_WEBVIEW.has(message.type);
}

/** What the webview keeps with `vscode.setState` so it survives hide and reload. */
export interface WebviewState {
  sessionId: string | null;
  draft: string;
  scrollTop: number;
  /** The message at the top of the feed and how far into it (px), the position to come back to. */
  scrollAnchor?: { id: string; delta: number } | null;
  /** Whether the usage chart shows its per-category bars (absent: folded). */
  usageOpen?: boolean;
  /** The prompt sent whose outcome has not come, and the session it went to (the draft is the box's text alone). */
  sent?: { text: string; sessionId: string | null } | null;
  /** Prompts not sent, by the session they were for: each goes back into the box once its session is on show. */
  returned?: { [sessionId: string]: string };
}
