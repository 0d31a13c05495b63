// The panel's own find box (Ctrl+F / Cmd+F, or the header's Find): searches every loaded
// message of the view, drawn or not, steps through the messages that match (Enter,
// Shift+Enter), draws and scrolls to each, and marks the matches in it with the CSS Custom
// Highlight API (no change to the message's DOM). Folded blocks of a hit are opened when
// the match is only inside them. A match in the part of a long text not drawn is drawn up to
// when near enough, else the count says it lies in the part not shown (longText.ts).
import { button, h } from "./dom";
import type { Feed } from "./feed";
import { reachMatch } from "./longText";
import type { ContentBlock, Message } from "./wire";

const HIGHLIGHT = "baton-find";
const CURRENT = "baton-find-current";

/** A message's searchable text, lower-cased: what it says, its tool calls and their output. */
const texts = new WeakMap<Message, string>();
export function searchText(message: Message): string {
  let text = texts.get(message);
  if (text === undefined) {
    text = message.content.map(blockText).join("\n").toLowerCase();
    texts.set(message, text);
  }
  return text;
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "thinking":
      return block.thinking;
    case "tool_use":
      return `${block.name} ${JSON.stringify(block.input ?? {})}`;
    case "tool_result":
      if (typeof block.content === "string") return block.content;
      return (block.content ?? []).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
    case "compaction":
      return typeof block.content === "string" ? block.content : "";
    default:
      return "";
  }
}

/** The ids of `messages` whose text holds `query` (case-insensitive), in view order. */
export function findHits(messages: readonly Message[], query: string): string[] {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  return messages.filter((m) => searchText(m).includes(q)).map((m) => m.id);
}

export class FindBar {
  readonly el: HTMLElement;
  readonly input: HTMLInputElement;
  private readonly count: HTMLElement;
  private hits: string[] = [];
  private current = -1;
  /** The current hit's only matches lie in a long text's part not drawn, too far to draw. */
  private hidden = false;
  /** What had the focus when the box opened: it gets it back on close when nothing was found. */
  private before: HTMLElement | null = null;

  constructor(private readonly feed: Feed) {
    this.input = h("input", {
      type: "search",
      class: "baton-find-input",
      placeholder: "Find in conversation",
      "aria-label": "Find in conversation",
    });
    this.count = h("span", { class: "baton-find-count baton-meta", role: "status", "aria-live": "polite" });
    this.el = h(
      "div",
      { class: "baton-find", role: "search" },
      this.input,
      this.count,
      button("↑", () => this.step(-1), { class: "secondary", title: "Previous match (Shift+Enter)", "aria-label": "Previous match" }),
      button("↓", () => this.step(1), { class: "secondary", title: "Next match (Enter)", "aria-label": "Next match" }),
      button("×", () => this.close(), { class: "secondary", title: "Close (Escape)", "aria-label": "Close find" }),
    );
    this.el.hidden = true;
    this.input.addEventListener("input", () => this.search(true));
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        this.step(event.shiftKey ? -1 : 1);
      } else if (event.key === "Escape") {
        event.preventDefault();
        this.close();
      }
    });
    window.addEventListener("keydown", (event) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "f") {
        event.preventDefault();
        this.open();
      }
    });
  }

  open(): void {
    const active = document.activeElement;
    if (active instanceof HTMLElement && !this.el.contains(active)) this.before = active;
    this.el.hidden = false;
    this.input.focus();
    this.input.select();
    if (this.input.value) this.search(false);
  }

  /** Hides the box; the focus, if it was in it, goes to the match shown, else back where it was. */
  close(): void {
    const focused = this.el.contains(document.activeElement);
    const hit = this.hits[this.current];
    this.el.hidden = true;
    this.hits = [];
    this.current = -1;
    clearHighlights();
    if (!focused) return;
    const to = (hit !== undefined ? this.feed.element(hit) : undefined) ?? (this.before?.isConnected ? this.before : null);
    to?.focus({ preventScroll: true });
  }

  /** The view changed (a new page, a new message): search it again, staying on the same hit. */
  refresh(): void {
    if (this.el.hidden || !this.input.value.trim()) return;
    const at = this.hits[this.current];
    this.hidden = false;
    this.hits = findHits(this.feed.all(), this.input.value);
    this.current = at === undefined ? -1 : this.hits.indexOf(at);
    this.showCount();
    this.mark();
  }

  private search(jump: boolean): void {
    this.hidden = false;
    this.hits = findHits(this.feed.all(), this.input.value);
    this.current = -1;
    if (jump && this.hits.length) this.step(1, true);
    else {
      this.showCount();
      clearHighlights();
    }
  }

  /** Go to the next (or previous) message that matches, from the last one or the viewport. */
  private step(direction: 1 | -1, first = false): void {
    this.hidden = false;
    if (this.hits.length === 0) return this.showCount();
    if (first || this.current < 0) this.current = direction === 1 ? this.firstBelowView() : this.hits.length - 1;
    else this.current = (this.current + direction + this.hits.length) % this.hits.length;
    this.showCount();
    this.mark(true);
  }

  /** The first hit at or after the message at the top of the viewport (the search starts where the reader is). */
  private firstBelowView(): number {
    const ids = this.feed.ids();
    const top = this.feed.drawnElements().find((el) => el.offsetTop + el.offsetHeight > this.feed.el.scrollTop);
    const from = top ? ids.indexOf(top.dataset.messageId ?? "") : 0;
    const index = this.hits.findIndex((id) => ids.indexOf(id) >= from);
    return index < 0 ? 0 : index;
  }

  private showCount(): void {
    const q = this.input.value.trim();
    const where = this.hidden ? " · in the part not shown (Show more, or Open in editor)" : "";
    this.count.textContent = !q
      ? ""
      : this.hits.length === 0
        ? "No results"
        : `${Math.max(this.current, 0) + 1} of ${this.hits.length} messages${where}`;
  }

  /** Draw the current hit (scrolling to it with `reveal`) and highlight the matches drawn. */
  private mark(reveal = false): void {
    const id = this.hits[this.current];
    if (id === undefined) return clearHighlights();
    const el = reveal ? this.feed.reveal(id, true) : this.feed.element(id);
    if (!el) return;
    const q = this.input.value.trim().toLowerCase();
    let ranges = matchRanges(el, q);
    if (ranges.length === 0) {
      // Only inside folded blocks (a tool's output, thinking): open them.
      for (const details of el.querySelectorAll("details:not([open])")) (details as HTMLDetailsElement).open = true;
      ranges = matchRanges(el, q);
    }
    if (ranges.length === 0) {
      // Only in the part of a long text not drawn: drawn up to it, or said to be there.
      const reach = reachMatch(el, q);
      if (reach === "drawn") ranges = matchRanges(el, q);
      else if (reach === "beyond") {
        this.hidden = true;
        this.showCount();
      }
    }
    for (const other of this.feed.drawnElements()) {
      if (other !== el && this.hits.includes(other.dataset.messageId ?? "")) ranges.push(...matchRanges(other, q));
    }
    // A match inside a folded block that was built before and closed again: open it.
    for (const range of ranges.filter((r) => el.contains(r.startContainer))) {
      for (let at = range.startContainer.parentElement; at && at !== el; at = at.parentElement) {
        if (at instanceof HTMLDetailsElement && !at.open) at.open = true;
      }
    }
    const current = ranges.filter((r) => el.contains(r.startContainer));
    setHighlight(HIGHLIGHT, ranges);
    setHighlight(CURRENT, current.slice(0, 1));
    current[0]?.startContainer.parentElement?.scrollIntoView({ block: "nearest" });
  }
}

/** Ranges over the text nodes of `root` where `q` occurs (case-insensitive). */
function matchRanges(root: Element, q: string): Range[] {
  const out: Range[] = [];
  if (!q) return out;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = (node.nodeValue ?? "").toLowerCase();
    for (let at = text.indexOf(q); at >= 0; at = text.indexOf(q, at + q.length)) {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + q.length);
      out.push(range);
    }
  }
  return out;
}

interface HighlightRegistry {
  set(name: string, value: unknown): void;
  delete(name: string): void;
}
type HighlightCtor = new (...ranges: Range[]) => unknown;

function registry(): { highlights: HighlightRegistry; Highlight: HighlightCtor } | null {
  const css = (globalThis as { CSS?: { highlights?: HighlightRegistry } }).CSS;
  const Highlight = (globalThis as { Highlight?: HighlightCtor }).Highlight;
  return css?.highlights && Highlight ? { highlights: css.highlights, Highlight } : null;
}

function setHighlight(name: string, ranges: Range[]): void {
  const r = registry();
  if (r) r.highlights.set(name, new r.Highlight(...ranges));
}

function clearHighlights(): void {
  const r = registry();
  r?.highlights.delete(HIGHLIGHT);
  r?.highlights.delete(CURRENT);
}
