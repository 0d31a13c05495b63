/** The chat view's decisions that need no editor: which session to open, picker rows, spans, a send's words. */
import { formatTokens, percentOfWindow } from "./meterText";
import { ErrorCodes, type ContentBlock, type DraftUsage, type Message, type Session } from "./protocol";
import { errorCode, errorMessage } from "./rpc";
import type { DraftLine } from "./webviewMessages";

/** The most recently updated session (ISO times compare as strings; ties: the later listed). */
export function mostRecent(sessions: readonly Session[]): Session | undefined {
  let best: Session | undefined;
  for (const session of sessions) {
    if (best === undefined || Date.parse(session.updatedAt) >= Date.parse(best.updatedAt)) {
      best = session;
    }
  }
  return best;
}

export interface SessionPickRow {
  label: string;
  description: string;
  detail: string;
  sessionId: string;
}

/** Quick-pick rows, newest first, the current session marked. */
export function sessionPickRows(sessions: readonly Session[], currentId: string | undefined, now: Date = new Date()): SessionPickRow[] {
  return [...sessions]
    .sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt))
    .map((session) => ({
      label: session.sessionId === currentId ? `$(check) ${session.title}` : session.title,
      description: ago(session.updatedAt, now),
      detail: `${session.model}` + (session.compactions > 0 ? ` · ${session.compactions} compaction${session.compactions === 1 ? "" : "s"}` : ""),
      sessionId: session.sessionId,
    }));
}

/** "just now", "5 min ago", "3 h ago", "2 days ago", or the date. */
export function ago(iso: string, now: Date): string {
  const seconds = Math.max(0, (now.getTime() - Date.parse(iso)) / 1000);
  if (!Number.isFinite(seconds)) {
    return iso;
  }
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  if (seconds < 30 * 86_400) {
    const days = Math.floor(seconds / 86_400);
    return `${days} day${days === 1 ? "" : "s"} ago`;
  }
  return iso.slice(0, 10);
}

/**
 * The span "Compact Selected" summarizes: the first and last selected message in view
 * order. Ids the view no longer has are dropped; fewer than two left is no span.
 */
export function selectedSpan(selected: readonly string[], view: readonly Message[]): { first: string; last: string } | undefined {
  const wanted = new Set(selected);
  const inView = view.filter((message) => wanted.has(message.id));
  if (inView.length < 2) {
    return undefined;
  }
  return { first: inView[0]!.id, last: inView[inView.length - 1]!.id };
}

/** What a message's right-click menu receives: the element's data-vscode-context. */
export interface MessageContext {
  messageId?: unknown;
  /** The session the panel showed when the menu opened (the host may hold another as current by then). */
  sessionId?: unknown;
  /** The first and last of two or more messages selected when the menu opened (Compact Selected). */
  selectedFirst?: unknown;
  selectedLast?: unknown;
  /** A message a compaction replaced (under its summary): that compaction, and its place in the list. */
  boundaryId?: unknown;
  replacedIndex?: unknown;
}

/**
 * The session a message's menu acts on, as its context names it: the one on show when the
 * menu opened (undefined: none named, the current one).
 */
export function menuSession(ctx: unknown): string | undefined {
  const named = typeof ctx === "object" && ctx !== null ? (ctx as MessageContext).sessionId : undefined;
  return typeof named === "string" && named !== "" ? named : undefined;
}

/**
 * The selection a message's menu acts on, as its context names it: the first and last
 * message selected when the menu opened (undefined: none named, the host's selection).
 */
export function menuSelection(ctx: unknown): string[] | undefined {
  if (typeof ctx !== "object" || ctx === null) return undefined;
  const { selectedFirst, selectedLast } = ctx as MessageContext;
  return typeof selectedFirst === "string" && typeof selectedLast === "string" ? [selectedFirst, selectedLast] : undefined;
}

/**
 * The message a right-click names: one of the view's, or one that compaction `boundaryId`
 * replaced, read again from the transcript (`replaced(boundaryId, offset)`: the page from
 * there). None when it is no longer where it was named.
 */
export async function menuMessage(
  ctx: MessageContext,
  view: readonly Message[],
  replaced: (boundaryId: string, offset: number) => Promise<readonly Message[]>,
): Promise<Message | undefined> {
  const { messageId, boundaryId, replacedIndex } = ctx;
  if (typeof boundaryId !== "string" || typeof replacedIndex !== "number") return view.find((m) => m.id === messageId);
  const [message] = await replaced(boundaryId, replacedIndex);
  return message?.id === messageId ? message : undefined;
}

/** A message as plain text for the clipboard: its text blocks, tool calls and results in brief. */
export function messageText(message: Message): string {
  return message.content.map(blockText).filter((text) => text !== "").join("\n\n");
}

function blockText(block: ContentBlock): string {
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case "text":
      return String(b.text ?? "");
    case "thinking":
      return String(b.thinking ?? "");
    case "tool_use":
      return `[tool ${String(b.name ?? "")}] ${JSON.stringify(b.input ?? {})}`;
    case "tool_result": {
      const content = b.content;
      if (typeof content === "string") return content;
      if (Array.isArray(content)) return content.map((inner) => blockText(inner as ContentBlock)).filter(Boolean).join("\n");
      return "";
    }
    case "image":
      return "[image]";
    case "document":
      return "[document]";
    default:
      return "";
  }
}

/** What the panel says when a send fails: the server's words, with the way out. */
export function sendFailure(error: unknown): string {
  switch (errorCode(error)) {
    case ErrorCodes.apiKeyMissing:
      return "No API key: replies need one (Baton: Set API Key). Everything else works without it.";
    case ErrorCodes.promptTooLong: {
      // the server's advice names its request (baton/compact) and a send with no content: the
      // panel's own ways instead, with the API's figures when it gave them
      const { actual, limit, requestBytes, type, images, documents } = errorData(error);
      if (typeof requestBytes === "number" || type === "request_too_large") return tooManyBytes(requestBytes, images, documents);
      const figures = typeof actual === "number" && typeof limit === "number" ? ` (${actual.toLocaleString("en-US")} tokens, the limit ${limit.toLocaleString("en-US")})` : "";
      return `The conversation is past the model's context limit${figures}: compact it (Baton: Compact Conversation) or start a New Chat, then Retry the prompt.`;
    }
    default: {
      // a key the API refused (401), or one no request could carry (a line break inside it):
      // the server says to set a valid one; here is how
      const { status, type } = errorData(error);
      const badKey = status === 401 || type === "authentication_error";
      return badKey ? `${errorMessage(error)} (Baton: Set API Key)` : errorMessage(error);
    }
  }
}

/** A request over the API's 32 MB, whatever its tokens: its images and documents are why. */
function tooManyBytes(requestBytes: unknown, images: unknown, documents: unknown): string {
  const held = [
    [images, "image"],
    [documents, "document"],
  ]
    .filter(([count]) => typeof count === "number" && count > 0)
    .map(([count, name]) => `${(count as number).toLocaleString("en-US")} ${String(name)}${count === 1 ? "" : "s"}`)
    .join(" and ");
  const one = held.startsWith("1 ") && !held.includes(" and ");
  const what = held === "" ? "Its images and documents make" : `Its ${held} ${one ? "makes" : "make"}`;
  const size = typeof requestBytes === "number" ? `${requestBytes.toLocaleString("en-US")} bytes, ` : "";
  return (
    `${what} the request ${size}over the 33,554,432 (32 MB) the API takes in one, ` +
    "however few its tokens: compact the part holding them (Baton: Compact Conversation; a summary keeps no image or document) " +
    "or start a New Chat, then Retry the prompt."
  );
}

function errorData(error: unknown): Record<string, unknown> {
  const data = typeof error === "object" && error !== null ? (error as { data?: unknown }).data : undefined;
  return typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
}

/**
 * The line under the input box: the context once the draft is sent, and the server's warning.
 * The figure is an estimate (the draft's is added), marked "~" as the meter marks one.
 */
export function draftLine(usage: DraftUsage): DraftLine {
  const rough = usage.estimated ? "~" : "";
  const text =
    `After sending: ${rough}${formatTokens(usage.usedTokens)} / ${formatTokens(usage.contextWindow)} ` +
    `(${Math.round(percentOfWindow(usage))}%)`;
  const verdict = usage.draft?.verdict ?? "fits";
  const warning = usage.draft?.message;
  return warning === undefined ? { text, verdict } : { text, verdict, warning };
}

/** Whether a failed send had already stored the prompt (the server says so in `data`). */
export function promptStored(error: unknown): boolean {
  if (typeof error === "object" && error !== null && "data" in error) {
    const data = (error as { data?: unknown }).data;
    return typeof data === "object" && data !== null && typeof (data as { promptMessageId?: unknown }).promptMessageId === "string";
  }
  return false;
}

/** The text of the last prompt in `view` (a tool round's results after it are no prompt). */
export function lastUserText(view: readonly Message[]): string | undefined {
  for (let i = view.length - 1; i >= 0; i--) {
    const message = view[i]!;
    if (isPrompt(message)) {
      return message.content.map((block) => ("text" in block && typeof block.text === "string" ? block.text : "")).join("");
    }
  }
  return undefined;
}

/**
 * The last `size` messages of `view` and where they start (0: the whole view). A long view
 * goes to the webview this way, so its first paint costs a page, not the whole session.
 */
export function pageOf(view: readonly Message[], size: number): { messages: Message[]; offset: number } {
  const offset = Math.max(0, view.length - size);
  return { messages: view.slice(offset), offset };
}

/** A prompt the user typed: a user message of the conversation that is not only tool results. */
export function isPrompt(message: Message): boolean {
  const kind = message.kind ?? "message";
  return (
    message.role === "user" &&
    kind === "message" &&
    !(message.content.length > 0 && message.content.every((block) => block.type === "tool_result"))
  );
}

/** Where Retry cuts the view: the first message after the last prompt (its reply), if any. */
/** Whether the view ends with a prompt no reply answers (the send failed after storing it). */
export function endsWithPrompt(view: readonly Message[]): boolean {
  const last = view[view.length - 1];
  return last !== undefined && isPrompt(last);
}

export function retryCut(view: readonly Message[]): string | undefined {
  for (let i = view.length - 1; i >= 0; i--) {
    if (isPrompt(view[i]!)) return view[i + 1]?.id;
  }
  return undefined;
}
