// The conversation as a feed of message elements: one <article> per message of the view,
// reused while a message is unchanged (so open <details> stay open), and the pending prompt
// and reply that deltas stream into. The compaction boundary's pieces are in boundary.ts.
import { type BlockContext, copyCode, markdownElement, renderBlock } from "./blocks";
import { attachmentBody, restoredBySummary, summaryBody } from "./boundary";
import { compactNumber, h } from "./dom";
import { resultsFor, toolContext } from "./toolCalls";
import type { Message } from "./wire";

export interface FeedHandlers {
  undo(boundaryId: string | undefined): void;
}

interface Rendered {
  signature: string;
  el: HTMLElement;
}

/** Stop reasons worth a word in the message header (a normal end_turn says nothing). */
const STOP_NOTES: { [reason: string]: string } = {
  interrupted: "interrupted",
  max_tokens: "cut off at the output limit",
  refusal: "refused",
  pause_turn: "paused",
};

export class Feed {
  readonly el: HTMLElement;
  private rendered = new Map<string, Rendered>();
  private order: string[] = [];
  private pending: { messageId: string; text: string; el: HTMLElement; body: HTMLElement } | null = null;
  private pendingPrompt: { text: string; el: HTMLElement } | null = null;
  private repaint = 0;

  constructor(private readonly handlers: FeedHandlers) {
    this.el = h("div", { class: "baton-feed", role: "feed", "aria-label": "Conversation", tabindex: "-1" });
    this.el.addEventListener("click", (event) => {
      const copy = (event.target as Element).closest<HTMLElement>(".baton-copy");
      if (copy) void copyCode(copy);
    });
  }

  /** The message ids in view order. */
  ids(): readonly string[] {
    return this.order;
  }

  element(id: string): HTMLElement | undefined {
    return this.rendered.get(id)?.el;
  }

  /**
   * Show `messages` (the model's current view), reusing unchanged elements. While a send
   * runs (`busy`) the prompt just sent and the streamed reply stay until the view holds
   * them; once it has ended they go, whatever became of them.
   */
  render(messages: readonly Message[], busy: boolean, readOnly = false): void {
    const toolNames = new Map<string, string>();
    for (const m of messages) for (const b of m.content) if (b.type === "tool_use") toolNames.set(b.id, b.name);
    const restored = restoredBySummary(messages);
    const lastSummary = [...messages].reverse().find((m) => m.kind === "summary")?.id;
    const tools = toolContext(messages);
    const ctx: BlockContext = { toolNames, ...tools };
    const next = new Map<string, Rendered>();
    const elements: HTMLElement[] = [];
    messages.forEach((message, index) => {
      const extra = { files: restored.get(message.id), last: message.id === lastSummary, readOnly };
      const signature = JSON.stringify([message, extra, namesFor(message, toolNames), resultsFor(message, tools)]);
      const old = this.rendered.get(message.id);
      const el = old && old.signature === signature ? old.el : this.messageElement(message, ctx, extra);
      el.setAttribute("aria-posinset", String(index + 1));
      el.setAttribute("aria-setsize", String(messages.length));
      next.set(message.id, { signature, el });
      elements.push(el);
    });
    this.rendered = next;
    this.order = messages.map((m) => m.id);
    if (this.pending && (!busy || next.has(this.pending.messageId))) this.pending = null;
    if (this.pendingPrompt && (!busy || holdsPrompt(messages, this.pendingPrompt.text))) this.pendingPrompt = null;
    if (this.pendingPrompt) elements.push(this.pendingPrompt.el);
    if (this.pending) elements.push(this.pending.el);
    this.place(elements);
  }

  /** Make the feed's children `elements`, moving only what is out of place (no relayout of the rest). */
  private place(elements: readonly HTMLElement[]): void {
    elements.forEach((el, i) => {
      const at = this.el.children[i];
      if (at !== el) this.el.insertBefore(el, at ?? null);
    });
    while (this.el.children.length > elements.length) this.el.lastElementChild?.remove();
  }

  /** Append streamed reply text to the pending assistant element for `messageId`. */
  delta(messageId: string, text: string): void {
    if (this.rendered.has(messageId)) return; // the finished message is already shown
    if (!this.pending || this.pending.messageId !== messageId) {
      this.pending?.el.remove();
      const body = h("div", { class: "baton-message-body" });
      const el = h(
        "article",
        {
          class: "baton-message role-assistant baton-pending",
          "data-pending-id": messageId, // not data-message-id: not a stored message yet
          "aria-busy": "true",
          "aria-label": "Assistant, replying",
        },
        h(
          "div",
          { class: "baton-message-inner" },
          h(
            "header",
            { class: "baton-message-head" },
            h("span", { class: "baton-role" }, "Assistant"),
            h("span", { class: "baton-meta" }, "replying…"),
          ),
          body,
        ),
      );
      this.pending = { messageId, text: "", el, body };
      this.el.appendChild(el);
    }
    this.pending.text += text;
    if (this.repaint === 0) {
      // Re-render the Markdown once per frame, not once per chunk.
      this.repaint = requestAnimationFrame(() => {
        this.repaint = 0;
        if (this.pending) this.pending.body.replaceChildren(markdownElement(this.pending.text));
      });
    }
  }

  /** Show a prompt that was just sent until the view holds it or the send ends. */
  showPrompt(text: string): void {
    this.pendingPrompt?.el.remove();
    const el = h(
      "article",
      { class: "baton-message role-user baton-pending", "aria-label": "You, sending" },
      h(
        "div",
        { class: "baton-message-inner" },
        h("header", { class: "baton-message-head" }, h("span", { class: "baton-role" }, "You")),
        h("div", { class: "baton-message-body" }, markdownElement(text)),
      ),
    );
    this.pendingPrompt = { text, el };
    this.el.insertBefore(el, this.pending?.el ?? null);
  }

  private messageElement(
    message: Message,
    ctx: BlockContext,
    extra: { files?: string[] | undefined; last: boolean; readOnly: boolean },
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
    );
    let body: HTMLElement;
    if (kind === "summary") {
      body = summaryBody(message, extra.files ?? [], extra.last, extra.readOnly ? null : this.handlers.undo);
    } else if (kind === "attachment") body = attachmentBody(message);
    else body = h("div", { class: "baton-message-body" }, ...message.content.map((b) => renderBlock(b, ctx)));
    const el = h(
      "article",
      {
        class: `baton-message role-${message.role} kind-${kind}${onlyResults ? " tool-results" : ""}`,
        "data-message-id": message.id,
        "data-vscode-context": JSON.stringify({
          webviewSection: "message",
          messageId: message.id,
          preventDefaultContextMenuItems: true,
        }),
        "aria-labelledby": headId,
        tabindex: "-1",
      },
      // VS Code merges the contexts from the element under the pointer up: this one adds the
      // `pinned` key the Pin / Unpin menu items test, and covers the whole message.
      h(
        "div",
        { class: "baton-message-inner", "data-vscode-context": JSON.stringify({ pinned: message.pinned === true }) },
        head,
        body,
      ),
    );
    return el;
  }
}

/** Who a message's header names: its kind for the boundary's messages, else its author. */
function roleLabel(message: Message, onlyResults: boolean): string {
  if (message.kind === "summary") return "Summary";
  if (message.kind === "attachment") return "Restored";
  if (message.role === "assistant") return "Assistant";
  return onlyResults ? "Tool result" : "You";
}

/** Whether the view's last prompt is `text` (the pending copy can go). */
function holdsPrompt(messages: readonly Message[], text: string): boolean {
  const last = [...messages].reverse().find((m) => m.role === "user" && (m.kind ?? "message") === "message");
  const said = last?.content.map((b) => (b.type === "text" ? b.text : "")).join("") ?? "";
  return said === text;
}

function namesFor(message: Message, toolNames: Map<string, string>): string[] {
  return message.content.flatMap((b) => (b.type === "tool_result" ? [toolNames.get(b.tool_use_id) ?? ""] : []));
}
