// The turn in flight, after the feed's rows: the prompt just sent (until the view holds it),
// the reply that deltas stream into (until the stored message replaces it), and under them
// what the send is doing while no text streams (a wait to ask the API again, say).
import { markdownElement } from "./blocks";
import { h } from "./dom";
import type { Message } from "./wire";

/**
 * A reply streaming in. Its text up to `settled` (a blank line outside a code block) is drawn
 * once, a part at a time; only the rest is drawn again as it grows: a long reply costs a frame
 * what its last part does, and a selection in what is drawn stays put.
 */
interface Streaming {
  messageId: string;
  text: string;
  el: HTMLElement;
  body: HTMLElement;
  settled: number;
  tail: HTMLElement;
}

export class PendingTurn {
  private pending: Streaming | null = null;
  private pendingPrompt: { text: string; el: HTMLElement } | null = null;
  private statusLine: HTMLElement | null = null;
  private repaint = 0;

  constructor(private readonly el: HTMLElement) {}

  /**
   * After the feed drew `messages`: while a send runs (`busy`) the prompt and the streamed
   * reply stay until the view holds them; once it has ended they go, whatever became of them.
   */
  settle(messages: readonly Message[], busy: boolean, shown: (id: string) => boolean): void {
    if (this.pending && (!busy || shown(this.pending.messageId))) this.pending = null;
    if (this.pendingPrompt && (!busy || holdsPrompt(messages, this.pendingPrompt.text))) this.pendingPrompt = null;
    if (!busy) this.statusLine = null;
    this.place();
  }

  /** Another session is shown: the turn in flight is not its (nothing of it shows there). */
  clear(): void {
    cancelAnimationFrame(this.repaint);
    this.repaint = 0;
    this.pending = null;
    this.pendingPrompt = null;
    this.statusLine = null;
    this.place();
  }

  /**
   * What the send is doing ("Rate limited by the API: trying again in 30 s (attempt 2 of
   * 3)"), a line under the turn until the reply's next text or the send's end.
   */
  status(text: string): void {
    this.statusLine ??= h("div", { class: "baton-pending baton-status", role: "status" });
    this.statusLine.textContent = text;
    this.place();
  }

  private place(): void {
    for (const el of this.el.querySelectorAll(".baton-pending")) {
      if (el !== this.pending?.el && el !== this.pendingPrompt?.el && el !== this.statusLine) el.remove();
    }
    if (this.pendingPrompt) this.el.append(this.pendingPrompt.el);
    if (this.pending) this.el.append(this.pending.el);
    if (this.statusLine) this.el.append(this.statusLine);
  }

  /** Append streamed reply text to the pending assistant element for `messageId`. */
  delta(messageId: string, text: string, painted: () => void): void {
    if (this.statusLine) {
      this.statusLine.remove(); // the text says it now
      this.statusLine = null;
    }
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
      const tail = h("div", {});
      body.append(tail);
      this.pending = { messageId, text: "", el, body, settled: 0, tail };
      this.el.appendChild(el);
    }
    this.pending.text += text;
    if (this.repaint === 0) {
      // Re-render the Markdown once per frame, not once per chunk.
      this.repaint = requestAnimationFrame(() => {
        this.repaint = 0;
        if (this.pending) draw(this.pending);
        painted();
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
    this.el.insertBefore(el, this.pending?.el ?? this.statusLine);
  }
}

/** Draws what came since the last frame: the parts newly settled once, the rest again. */
function draw(reply: Streaming): void {
  const cut = settledEnd(reply.text, reply.settled);
  if (cut > reply.settled) {
    reply.tail.before(markdownElement(reply.text.slice(reply.settled, cut)));
    reply.settled = cut;
  }
  const tail = markdownElement(reply.text.slice(cut));
  reply.tail.replaceWith(tail);
  reply.tail = tail;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Where the text's settled part ends: at the start of a line after a blank one outside a
 * code block (from `from`, itself such a place), when that line is not indented. An indented
 * one may go on what came before the blank line (a list item's next paragraph, or the code
 * block nested in it, whatever its fence's indent), so drawn apart it would read otherwise;
 * a line not yet begun counts for nothing.
 */
function settledEnd(text: string, from: number): number {
  let cut = from;
  let fence: string | null = null; // the open code block's fence
  let blank = false; // the line before was blank, outside a code block
  let start = from;
  for (let end = text.indexOf("\n", start); start < text.length; start = end + 1, end = text.indexOf("\n", start)) {
    const line = end >= 0 ? text.slice(start, end) : text.slice(start);
    if (blank && fence === null && /^\S/.test(line)) cut = start;
    if (end < 0) break;
    const marker = FENCE.exec(line)?.[1];
    if (fence === null && marker !== undefined) fence = marker;
    else if (fence !== null && marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
    blank = fence === null && line.trim() === "";
  }
  return cut;
}

/** Whether the view's last prompt is `text` (the pending copy can go). A message of tool
 * results is no prompt: in a turn that runs tools they come after it. */
export function holdsPrompt(messages: readonly Message[], text: string): boolean {
  const prompt = (m: Message): boolean =>
    m.role === "user" && (m.kind ?? "message") === "message" && !m.content.every((b) => b.type === "tool_result");
  const last = [...messages].reverse().find(prompt);
  const said = last?.content.map((b) => (b.type === "text" ? b.text : "")).join("") ?? "";
  return said === text;
}
