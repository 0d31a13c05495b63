// The conversation as a virtualized feed: every message of the view has a row (its height
// measured once drawn, estimated until then: layout.ts), and only the rows near the viewport
// are in the DOM, between two spacers that stand for the rest. The scroll position is held
// by an anchor (the message at the top of the viewport and how far into it) across height
// changes, new pages and new messages; at the end it stays at the end. Elements are reused
// while a message is unchanged (so open <details> stay open). The pending prompt and reply
// that deltas stream into sit after the rows (pending.ts). One message's DOM is built by `messageElement`
// (messageView.ts), the one place a message's rendering lives.
import { codeOf, copyCode } from "./blocks";
import { restoredBySummary, type SummaryPlace, summaryPlaces } from "./boundary";
import { h } from "./dom";
import { estimateHeight, Layout } from "./layout";
import { copyText, messageText, openEditor } from "./messageActions";
import { type MessageExtra, messageElement } from "./messageView";
import { PendingTurn } from "./pending";
import { type ReplacedPage, ReplacedList } from "./replaced";
import { resultsFor, type ToolContext, toolContext, toolNames } from "./toolCalls";
import type { Message } from "./wire";

export interface FeedHandlers {
  undo(boundaryId: string | undefined): void;
  /** Edit and resend: the prompt `messageId` is sent again as `text`. */
  edit(messageId: string, text: string): void;
  /** Retry: a new reply to the last prompt. */
  retry(): void;
  /** A code block's Insert (at the active editor's cursor). */
  insertCode(code: string): void;
  /** A code block's Apply (to the file it names, else the active editor's): a diff first. */
  applyCode(code: string, file: string | undefined): void;
  /** A summary's "Summarized messages" opened: the page of compaction `boundaryId`'s from `offset`. */
  loadReplaced(boundaryId: string, offset: number): void;
}

/** Where the viewport is: at the end, or `delta` px into the row of message `id` (row `row`). */
export type Anchor = { end: true } | { end?: false; id: string | undefined; row: number; delta: number };

/** Pixels drawn beyond each edge of the viewport. */
const OVERSCAN_PX = 900;
/** Elements kept for messages scrolled out of the window (so they come back as they were). */
const KEEP_ELEMENTS = 300;
/** How close to the bottom counts as "at the end". */
const END_SLACK_PX = 24;

interface Rendered {
  generation: number; // the render() it was checked in (the same one: no check again)
  signature: string;
  el: HTMLElement;
}

export class Feed {
  readonly el: HTMLElement;
  /** Called for each element as it enters the DOM (the selection paints it). */
  decorate: (el: HTMLElement, id: string) => void = () => undefined;
  private readonly topSpacer = h("div", { class: "baton-spacer", "aria-hidden": "true" });
  private readonly bottomSpacer = h("div", { class: "baton-spacer", "aria-hidden": "true" });
  private messages: readonly Message[] = [];
  private idList: string[] = [];
  private rowOf = new Map<string, number>();
  private offset = 0; // the view's index of messages[0] (the rows before it are not loaded)
  private readonly layout = new Layout();
  private readonly measured = new Map<string, number>(); // id -> height at `measuredWidth`
  private measuredWidth = 0;
  private cache = new Map<string, Rendered>();
  private drawn: { start: number; end: number; els: HTMLElement[] } = { start: 0, end: 0, els: [] };
  private restored = new Map<string, string[]>();
  private places = new Map<string, SummaryPlace>();
  private lastSummary: string | undefined;
  private readOnly = false;
  private busy = false;
  private generation = 0;
  private toolNames = new Map<string, string>();
  private tools: ToolContext = toolContext([]);
  private atEndNow = true;
  private drawing = false;
  private readonly resize: ResizeObserver;
  private readonly pendingTurn: PendingTurn;
  private replacedLists = new Map<string, ReplacedList>(); // by compaction: what was read stays

  constructor(private readonly handlers: FeedHandlers) {
    this.el = h("div", { class: "baton-feed", role: "feed", "aria-label": "Conversation", tabindex: "-1" });
    this.el.append(this.topSpacer, this.bottomSpacer);
    this.pendingTurn = new PendingTurn(this.el);
    this.el.addEventListener("click", (event) => {
      const target = event.target as Element;
      const copy = target.closest<HTMLElement>(".baton-copy");
      if (copy) void copyCode(copy);
      this.messageAction(target);
      const insert = target.closest<HTMLElement>(".baton-insert");
      if (insert) this.handlers.insertCode(codeOf(insert).code);
      const apply = target.closest<HTMLElement>(".baton-apply");
      if (apply) {
        const { code, file } = codeOf(apply);
        this.handlers.applyCode(code, file);
      }
    });
    this.el.addEventListener("scroll", () => {
      if (this.drawing) return;
      this.atEndNow = this.isAtEnd();
      this.draw(this.capture());
    });
    // A drawn message changed height (a <details> opened, an image loaded, the width
    // changed): measure again and keep the anchor where it was.
    this.resize = new ResizeObserver(() => {
      if (this.drawing || this.el.hidden) return;
      this.draw(this.capture());
    });
    this.resize.observe(this.el);
  }

  /** A click on a message's own action (Edit, Retry, Copy). */
  private messageAction(target: Element): void {
    const action = target.closest<HTMLElement>(".baton-edit, .baton-retry, .baton-copy-message");
    const article = action?.closest<HTMLElement>("article[data-message-id]");
    const message = article ? this.messages[(this.rowOf.get(article.dataset.messageId ?? "") ?? -1) - this.offset] : undefined;
    if (!action || !article || !message) return;
    if (action.classList.contains("baton-retry")) this.handlers.retry();
    else if (action.classList.contains("baton-edit")) openEditor(article, messageText(message), (text) => this.handlers.edit(message.id, text));
    else void copyText(action, messageText(message));
  }

  /** The loaded message ids in view order. */
  ids(): readonly string[] {
    return this.idList;
  }

  /** The loaded messages in view order. */
  all(): readonly Message[] {
    return this.messages;
  }

  /** The element of message `id` while it is drawn. */
  element(id: string): HTMLElement | undefined {
    const row = this.rowOf.get(id);
    if (row === undefined || row < this.drawn.start || row >= this.drawn.end) return undefined;
    return this.drawn.els[row - this.drawn.start];
  }

  /** The drawn message elements, in order. */
  drawnElements(): readonly HTMLElement[] {
    return this.drawn.els;
  }

  /** The view's index of the first loaded message (0 once every page is in). */
  get firstLoaded(): number {
    return this.offset;
  }

  /**
   * Show `messages` (the model's current view, or its last part from index `offset` of
   * `total`), reusing unchanged elements. While a send runs (`busy`) the prompt just sent
   * and the streamed reply stay until the view holds them; once it has ended they go.
   */
  render(messages: readonly Message[], busy: boolean, readOnly = false, offset = 0, total?: number): void {
    const anchor = this.capture();
    this.generation += 1;
    this.messages = messages;
    this.offset = offset;
    this.idList = messages.map((m) => m.id);
    this.rowOf = new Map(this.idList.map((id, i) => [id, i + offset]));
    this.toolNames = toolNames(messages);
    this.tools = toolContext(messages);
    this.restored = restoredBySummary(messages);
    this.places = summaryPlaces(messages);
    this.lastSummary = undefined;
    for (const m of messages) if (m.kind === "summary") this.lastSummary = m.id;
    this.readOnly = readOnly;
    this.busy = busy;
    const rows = Math.max(total ?? 0, offset + messages.length);
    this.relayout(rows);
    this.dropStaleCache();
    this.pendingTurn.settle(messages, busy, (id) => this.rowOf.has(id));
    this.draw(anchor);
  }

  /** Where the viewport is now, to come back to (saved with the view state). */
  capture(): Anchor {
    if (this.atEndNow || this.layout.count === 0) return { end: true };
    const y = this.el.scrollTop;
    const row = this.layout.indexAt(y);
    return { id: this.idAt(row), row, delta: y - this.layout.top(row) };
  }

  /** Put the viewport back at `anchor` (a message that is gone: its row, clamped). */
  restore(anchor: Anchor): void {
    this.atEndNow = anchor.end === true;
    this.draw(anchor);
  }

  isAtEnd(): boolean {
    const f = this.el;
    return f.scrollHeight - f.scrollTop - f.clientHeight < END_SLACK_PX;
  }

  scrollToEnd(): void {
    this.atEndNow = true;
    this.draw({ end: true });
  }

  /** Draw message `id` and scroll it into view (nearest edge, or to the top); its element. */
  reveal(id: string, toTop = false): HTMLElement | undefined {
    const row = this.rowOf.get(id);
    if (row === undefined) return undefined;
    const top = this.layout.top(row);
    const bottom = top + this.layout.height(row);
    const view = this.el.clientHeight;
    let y = this.el.scrollTop;
    if (toTop || top < y || bottom - top > view) y = top - 8;
    else if (bottom > y + view) y = bottom - view + 8;
    this.atEndNow = false;
    this.draw({ id, row, delta: y - top });
    return this.element(id);
  }

  /**
   * Draw the rows the viewport (plus overscan) covers for `anchor`, measure them, and put
   * the anchor back; again while measuring moved things (estimates were off).
   */
  private draw(anchor: Anchor): void {
    if (this.drawing) return;
    this.drawing = true;
    try {
      const width = this.el.clientWidth;
      if (width > 0 && width !== this.measuredWidth) {
        // Another width: every measured height is stale (they wrap differently).
        this.measuredWidth = width;
        this.measured.clear();
        this.relayout(this.layout.count);
      }
      for (let pass = 0; pass < 4; pass++) {
        this.scrollTo(anchor);
        const y = this.el.scrollTop;
        const view = this.el.clientHeight || 800;
        const first = this.offset;
        const last = this.offset + this.messages.length;
        const start = Math.max(first, this.layout.indexAt(y - OVERSCAN_PX));
        const end = Math.min(last, this.layout.indexAt(y + view + OVERSCAN_PX) + 1);
        this.place(start, Math.max(start, end));
        const moved = this.measure();
        this.scrollTo(anchor);
        if (!moved) break;
      }
      this.atEndNow = anchor.end === true || this.isAtEnd();
    } finally {
      this.drawing = false;
    }
  }

  private scrollTo(anchor: Anchor): void {
    this.topSpacer.style.height = `${this.layout.top(this.drawn.start)}px`;
    this.bottomSpacer.style.height = `${this.layout.total() - this.layout.top(this.drawn.end)}px`;
    if (anchor.end) {
      this.el.scrollTop = this.el.scrollHeight;
      return;
    }
    const row = (anchor.id !== undefined ? this.rowOf.get(anchor.id) : undefined) ?? anchor.row;
    const clamped = Math.max(0, Math.min(row, this.layout.count - 1));
    this.el.scrollTop = this.layout.top(clamped) + (clamped === row ? anchor.delta : 0);
  }

  /** Make rows [start, end) the drawn ones, moving only what changed. */
  private place(start: number, end: number): void {
    const els: HTMLElement[] = [];
    for (let row = start; row < end; row++) els.push(this.rowElement(row));
    const keep = new Set(els);
    for (const el of this.drawn.els) {
      if (!keep.has(el)) {
        this.resize.unobserve(el);
        el.remove();
      }
    }
    let at: ChildNode = this.topSpacer;
    for (const el of els) {
      if (at.nextSibling !== el) {
        at.after(el);
        this.resize.observe(el);
      }
      at = el;
    }
    for (const el of els) if (!this.drawn.els.includes(el)) this.decorate(el, el.dataset.messageId ?? "");
    this.drawn = { start, end, els };
  }

  /** Read the drawn rows' heights into the layout; true when one changed. */
  private measure(): boolean {
    let changed = false;
    this.drawn.els.forEach((el, i) => {
      const px = el.getBoundingClientRect().height; // fractional: rounding would add up over rows
      const id = el.dataset.messageId ?? "";
      if (px > 0) this.measured.set(id, px);
      if (px > 0 && this.layout.set(this.drawn.start + i, px)) changed = true;
    });
    return changed;
  }

  private rowElement(row: number): HTMLElement {
    const message = this.messages[row - this.offset];
    if (!message) throw new Error(`row ${row} is not loaded`);
    const extra: MessageExtra = {
      files: this.restored.get(message.id),
      last: message.id === this.lastSummary,
      readOnly: this.readOnly,
      place: this.places.get(message.id),
      row: message.kind === "summary" ? row : undefined, // only a summary's title reads it
      retry: message.role === "assistant" && message.id === this.idList[this.idList.length - 1] && !this.busy,
    };
    const old = this.cache.get(message.id);
    let el: HTMLElement;
    if (old && old.generation === this.generation) el = old.el;
    else {
      const signature = JSON.stringify([message, extra, namesFor(message, this.toolNames), resultsFor(message, this.tools)]);
      el =
        old && old.signature === signature
          ? old.el
          : messageElement(message, { toolNames: this.toolNames, ...this.tools }, extra, this.handlers.undo, (id) =>
              this.replacedList(id),
            );
      this.cache.delete(message.id);
      this.cache.set(message.id, { generation: this.generation, signature, el });
    }
    el.setAttribute("aria-posinset", String(row + 1));
    el.setAttribute("aria-setsize", String(this.layout.count));
    return el;
  }

  /** The list of what compaction `boundaryId` replaced (one per compaction, moved into a card drawn again). */
  private replacedList(boundaryId: string): HTMLElement {
    let list = this.replacedLists.get(boundaryId);
    if (!list) {
      list = new ReplacedList((offset) => this.handlers.loadReplaced(boundaryId, offset));
      this.replacedLists.set(boundaryId, list);
    }
    return list.el;
  }

  /** A page of what compaction `boundaryId` replaced, for its card's list. */
  replacedPage(boundaryId: string, page: ReplacedPage): void {
    this.replacedLists.get(boundaryId)?.receive(page);
  }

  /** Another session is shown: the lists read for this one go. */
  forgetReplaced(): void {
    this.replacedLists.clear();
  }

  private relayout(rows: number): void {
    const width = this.measuredWidth || this.el.clientWidth || 400;
    const heights = new Array<number>(rows);
    for (let row = 0; row < rows; row++) {
      const message = this.messages[row - this.offset];
      heights[row] = (message && this.measured.get(message.id)) || estimateHeight(message, width);
    }
    this.layout.reset(heights);
  }

  /** Forget elements of messages no longer in the view, and the oldest beyond the keep. */
  private dropStaleCache(): void {
    for (const id of [...this.cache.keys()]) if (!this.rowOf.has(id)) this.cache.delete(id);
    for (const id of this.measured.keys()) if (!this.rowOf.has(id)) this.measured.delete(id);
    const extra = this.cache.size - KEEP_ELEMENTS;
    if (extra > 0) [...this.cache.keys()].slice(0, extra).forEach((id) => this.cache.delete(id));
  }

  private idAt(row: number): string | undefined {
    return this.idList[row - this.offset];
  }

  /** Append streamed reply text to the pending assistant element for `messageId`. */
  delta(messageId: string, text: string): void {
    if (this.rowOf.has(messageId)) return; // the finished message is already shown
    this.pendingTurn.delta(messageId, text, () => {
      if (this.atEndNow) this.scrollToEnd();
    });
  }

  /** Show a prompt that was just sent until the view holds it or the send ends. */
  showPrompt(text: string): void {
    this.pendingTurn.showPrompt(text);
  }
}

function namesFor(message: Message, toolNames: Map<string, string>): string[] {
  return message.content.flatMap((b) => (b.type === "tool_result" ? [toolNames.get(b.tool_use_id) ?? ""] : []));
}
