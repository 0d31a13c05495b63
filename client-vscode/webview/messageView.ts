// One message of the view as DOM: its header (who, when, tokens, how it stopped, pinned)
// and its body (the blocks, or the compaction boundary's summary and restored files). The
// one place a message's rendering lives: the feed calls it for each row it draws.
import { type BlockContext, markdownElement, renderBlock } from "./blocks";
import { attachmentBody, type SummaryPlace, summaryBody } from "./boundary";
import { compactNumber, folded, h } from "./dom";
import { isLongPaste, lineCount } from "./longText";
import { messageActions } from "./messageActions";
import type { Message } from "./wire";

/** What a message's element depends on besides the message. */
export interface MessageExtra {
  /** A summary's restored files. */
  files: string[] | undefined;
  /** Whether this is the view's last summary (the only one Undo without an id reaches). */
  last: boolean;
  readOnly: boolean;
  /** Whether this is the view's last reply, or a last prompt no reply answers (Retry). */
  retry: boolean;
  /** Whether a prompt offers Edit (not while a reply streams). */
  editable: boolean;
  /** A summary's place in the conversation (its title says what it replaced). */
  place?: SummaryPlace | undefined;
  /** The message's index in the view (a part's summary is titled by the rows it replaced). */
  row?: number | undefined;
}

/** Stop reasons worth a word in the message header (a normal end_turn says nothing). */
const STOP_NOTES: { [reason: string]: string } = {
  interrupted: "interrupted",
  max_tokens: "cut off at the output limit",
  refusal: "refused",
  pause_turn: "paused",
};

export function messageElement(
  message: Message,
  ctx: BlockContext,
  extra: MessageExtra,
  undo: (boundaryId: string | undefined) => void,
  replaced?: (boundaryId: string) => HTMLElement, // a summary's list of what it replaced
): HTMLElement {
  const kind = message.kind ?? "message";
  const onlyResults = message.content.length > 0 && message.content.every((b) => b.type === "tool_result");
  const role = roleLabel(message, onlyResults);
  const headId = `head-${message.id}`;
  const meta: string[] = [];
  if (message.tokens) meta.push(`${compactNumber(message.tokens)} tokens`);
  const stopped = STOP_NOTES[message.stopReason ?? ""];
  if (stopped) meta.push(stopped);
  const head = h(
    "header",
    { class: "baton-message-head", id: headId },
    h(
      "span",
      { class: "baton-role", title: message.createdAt ? new Date(message.createdAt).toLocaleString() : undefined },
      role,
    ),
    message.pinned ? h("span", { class: "baton-pin", title: "Pinned: never summarized" }, "pinned") : null,
    meta.length ? h("span", { class: "baton-meta" }, meta.join(" · ")) : null,
    h("span", { class: "baton-selected-note" }, ", selected"),
    messageActions(message, { retry: extra.retry, readOnly: extra.readOnly, editable: extra.editable }),
  );
  let body: HTMLElement;
  if (kind === "summary") {
    const list = message.boundaryId && replaced ? replaced(message.boundaryId) : null;
    body = summaryBody(message, extra.files ?? [], extra.last, extra.readOnly ? null : undo, extra.place, extra.row, list);
  } else if (kind === "attachment") body = attachmentBody(message);
  else {
    const paste = message.role === "user";
    body = h(
      "div",
      { class: "baton-message-body" },
      ...message.content.map((b) => (paste && b.type === "text" && isLongPaste(b.text) ? pasted(b.text) : renderBlock(b, ctx))),
    );
  }
  return h(
    "article",
    {
      class: `baton-message role-${message.role} kind-${kind}${onlyResults ? " tool-results" : ""}`,
      "data-message-id": message.id,
      // `pinned`: the Pin / Unpin items test it. On the message itself, not on an element
      // inside it: the menu key's menu is read from the focused message, whose context alone
      // VS Code then merges (a right-click's, from the element under the pointer up)
      "data-vscode-context": JSON.stringify({
        webviewSection: "message",
        messageId: message.id,
        preventDefaultContextMenuItems: true,
        pinned: message.pinned === true,
      }),
      "aria-labelledby": headId,
      tabindex: "-1",
    },
    h("div", { class: "baton-message-inner" }, head, body),
  );
}

/** Who a message's header names: its kind for the boundary's messages, else its author. */
function roleLabel(message: Message, onlyResults: boolean): string {
  if (message.kind === "summary") return "Summary";
  if (message.kind === "attachment") return message.attachment?.kind === undefined ? "Restored" : message.attachment.label;
  if (message.role === "assistant") return "Assistant";
  return onlyResults ? "Tool result" : "You";
}

/** A long paste folded: its first line and size in the summary, the whole text inside. */
function pasted(text: string): HTMLElement {
  const lines = lineCount(text);
  // the first line that says something, read without copying a paste of megabytes
  const start = text.search(/\S/);
  const end = start < 0 ? -1 : text.indexOf("\n", start);
  const first = start < 0 ? "" : text.slice(start, Math.min(end < 0 ? text.length : end, start + 80)).trimEnd();
  const size = `${lines.toLocaleString("en-US")} lines · ${compactNumber(text.length)} characters`;
  return folded(
    "baton-paste",
    [h("span", { class: "baton-tool-label" }, "Pasted text"), " ", h("span", { class: "baton-meta" }, size), first ? h("div", { class: "baton-paste-first" }, first) : null],
    () => [markdownElement(text)],
  );
}
