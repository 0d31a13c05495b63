// The conversation as a virtualized feed: every message of the view has a row (its height
// measured once drawn, estimated until then: layout.ts), and only the rows near the viewport
// are in the DOM, between two spacers that stand for the rest. The scroll position is held
// by an anchor (the message at the top of the viewport and how far into it) across height
// changes, new pages and new messages; at the end it stays at the end. Elements are reused
// while a message is unchanged (so open <details> stay open). The pending prompt and reply
// that deltas stream into sit after the rows (pending.ts). A row's element comes from
// rowElements.ts (built by `messageElement`, messageView.ts, the one place a message's
// rendering lives); the clicks in the feed are handled by feedClicks.ts.
import { h } from "./dom";
import { handleClicks, type ClickHandlers } from "./feedClicks";
import { Layout, MeasuredHeights } from "./layout";
import { PendingTurn } from "./pending";
import { type RowHandlers, RowElements } from "./rowElements";
import type { Message } from "./wire";

export interface FeedHandlers extends RowHandlers, ClickHandlers {}

/** Where the viewport is: at the end, or `delta` px into the row of message `id` (row `row`). */
export type Anchor = { end: true } | { end?: false; id: string | undefined; row: number; delta: number };

/** Pixels drawn beyond each edge of the viewport. */
const OVERSCAN_PX = 900;
/** How close to the bottom counts as "at the end". */
const END_SLACK_PX = 24;

export class Feed {
  readonly el: HTMLElement;
  /** Called for each element as it enters the DOM (the selection paints it). */
  decorate: (el: HTMLElement, id: string) => void = () => undefined;
  /** Called once a render took the message holding the focus out of the view (`before`: the ids loaded until then; `summary`: it was one). */
  focusGone: (id: string, before: readonly string[], summary: boolean) => void = () => undefined;
  private readonly topSpacer = h("div", { class: "baton-spacer", "aria-hidden": "true" });
  private readonly bottomSpacer = h("div", { class: "baton-spacer", "aria-hidden": "true" });
  private messages: readonly Message[] = [];
  private idList: string[] = [];
  private rowOf = new Map<string, number>();
  private offset = 0; // the view's index of messages[0] (the rows before it are not loaded)
  private readonly layout = new Layout();
  private readonly measured = new MeasuredHeights();
  private drawn: { start: number; end: number; els: HTMLElement[] } = { start: 0, end: 0, els: [] };
  /** The rows' elements, and what they show besides their messages (what a compaction replaced, asked diffs). */
  readonly rows: RowElements;
  private atEndNow = true;
  /** Where the viewport was, on a message in rows not loaded yet (a new last page came first): kept until they are. */
  private awaited: { id: string; delta: number } | undefined;
  private drawing = false;
  private readonly resize: ResizeObserver;
  private readonly pendingTurn: PendingTurn;

  constructor(handlers: FeedHandlers) {
    this.el = h("div", { class: "baton-feed", role: "feed", "aria-label": "Conversation", tabindex: "-1" });
    this.el.append(this.topSpacer, this.bottomSpacer);
    this.pendingTurn = new PendingTurn(this.el);
    this.rows = new RowElements(handlers);
    handleClicks(this.el, handlers, (id) => this.messages[(this.rowOf.get(id) ?? -1) - this.offset]);
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
    const focused = this.drawn.els.find((el) => el.contains(document.activeElement))?.dataset.messageId;
    const before = this.idList;
    const wasSummary = focused !== undefined && this.messages[(this.rowOf.get(focused) ?? -1) - this.offset]?.kind === "summary";
    this.rows.update(messages, busy, readOnly);
    this.messages = messages;
    this.offset = offset;
    this.idList = messages.map((m) => m.id);
    this.rowOf = new Map(this.idList.map((id, i) => [id, i + offset]));
    const rows = Math.max(total ?? 0, offset + messages.length);
    this.relayout(rows);
    this.dropStaleCache();
    this.pendingTurn.settle(messages, busy, (id) => this.rowOf.has(id));
    this.draw(this.awaitedOr(anchor));
    if (focused !== undefined && !this.rowOf.has(focused)) this.focusGone(focused, before, wasSummary);
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
    this.draw(this.awaitedOr(anchor));
  }

  /**
   * `anchor`, or the message the viewport waits for once it is loaded. An anchor on a message
   * in rows not loaded yet (a reload on a place mid-session; a compaction's last page, which
   * does not follow the messages held) waits for them: placed by its row, the place was lost.
   */
  private awaitedOr(anchor: Anchor): Anchor {
    const wanted = this.awaited ?? (anchor.end || anchor.id === undefined ? undefined : { id: anchor.id, delta: anchor.delta });
    const row = wanted !== undefined ? this.rowOf.get(wanted.id) : undefined;
    // still in rows not loaded: awaited; once every row is, it is gone (summarized, say)
    this.awaited = wanted !== undefined && row === undefined && this.offset > 0 ? wanted : undefined;
    return wanted !== undefined && row !== undefined ? { id: wanted.id, row, delta: wanted.delta } : anchor;
  }

  isAtEnd(): boolean {
    const f = this.el;
    return f.scrollHeight - f.scrollTop - f.clientHeight < END_SLACK_PX;
  }

  scrollToEnd(): void {
    this.atEndNow = true;
    this.awaited = undefined;
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
    this.awaited = undefined;
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
      if (this.measured.resized(this.el.clientWidth)) this.relayout(this.layout.count);
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
    // the keyboard's message, drawn anew (a send started: its prompts lose Edit): it keeps the focus
    const focused = document.activeElement;
    const refocus = this.drawn.els.find((el) => !keep.has(el) && focused !== null && el.contains(focused))?.dataset.messageId;
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
    if (refocus !== undefined) els.find((el) => el.dataset.messageId === refocus)?.focus({ preventScroll: true });
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
    const el = this.rows.element(message, row, message.id === this.idList[this.idList.length - 1]);
    el.setAttribute("aria-posinset", String(row + 1));
    el.setAttribute("aria-setsize", String(this.layout.count));
    return el;
  }

  private relayout(rows: number): void {
    this.layout.reset(this.measured.heights(rows, (row) => this.messages[row - this.offset], this.el.clientWidth || 400));
  }

  /** Forget the elements and heights of messages no longer in the view (and the oldest elements beyond the keep). */
  private dropStaleCache(): void {
    this.rows.dropStale((id) => this.rowOf.has(id));
    this.measured.keep((id) => this.rowOf.has(id));
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

  /** What the running send is doing, under the turn until its next text (pending.ts). */
  status(text: string): void {
    this.pendingTurn.status(text);
  }

  /** Another session is shown: the prompt being sent and its streamed reply were not its. */
  forgetPending(): void {
    this.pendingTurn.clear();
  }
}
