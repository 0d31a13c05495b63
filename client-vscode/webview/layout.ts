// The virtualized feed's geometry: one height per message of the view (measured once drawn,
// at the feed's width, estimated from its content until then), their running offsets, and
// which messages a stretch of the scroll range covers. Pure bookkeeping: no DOM.
import { clipEnd, isLongPaste, LONG_TEXT_CHARS } from "./longText";
import type { Message } from "./wire";

/** Pixels the message chrome takes (header, padding) beside its body. */
const CHROME_PX = 34;
const LINE_PX = 19; // 13px text at line-height 1.45
const CODE_LINE_PX = 17;
const FOLDED_PX = 26; // a collapsed tool call, result or thinking line
const CHAR_PX = 7; // an average glyph of the UI font
const CLIP_PX = 52; // a long text's clip line: how much shows, and its buttons below
const PASTE_PX = FOLDED_PX + LINE_PX; // a folded paste: its label and first line

/** A message's height before it has been drawn, from its text at the feed's `width`. */
export function estimateHeight(message: Message | undefined, width: number): number {
  if (!message) return CHROME_PX + LINE_PX * 2; // not loaded yet: a short message
  if (message.kind === "summary" || message.kind === "attachment") return CHROME_PX + FOLDED_PX + 8;
  const perLine = Math.max(20, Math.floor((width - 24) / CHAR_PX));
  let px = CHROME_PX;
  const paste = message.role === "user"; // a prompt's long text is folded (messageView.ts)
  for (const block of message.content) {
    if (block.type === "text") px += paste && isLongPaste(block.text) ? PASTE_PX : textHeight(block.text, perLine);
    else if (block.type === "image") px += 90;
    else px += FOLDED_PX;
  }
  return Math.round(px);
}

/** A text's height as drawn: a long one by its first part and clip line (longText.ts). */
function textHeight(text: string, perLine: number): number {
  const drawn = clipEnd(text, LONG_TEXT_CHARS);
  let px = drawn < text.length ? CLIP_PX : 0;
  let inCode = false;
  let start = 0;
  // A walk over the lines without splitting the whole text into an array.
  while (start <= drawn) {
    let end = text.indexOf("\n", start);
    if (end < 0 || end > drawn) end = drawn;
    const length = end - start;
    if (text.startsWith("```", start)) {
      inCode = !inCode;
      px += 8;
    } else if (inCode) px += CODE_LINE_PX;
    else px += length === 0 ? 6 : Math.ceil(length / perLine) * LINE_PX;
    start = end + 1;
  }
  return px;
}

/** Heights and offsets of `count` rows; `top(i)` is row i's distance from the first row's top. */
export class Layout {
  private heights: number[] = [];
  private offsets: number[] = [0]; // offsets[i] = top(i); offsets[count] = total
  private dirtyFrom = 0;

  get count(): number {
    return this.heights.length;
  }

  /** Start over with these heights (one per row). */
  reset(heights: number[]): void {
    this.heights = heights;
    this.offsets = new Array<number>(heights.length + 1);
    this.offsets[0] = 0;
    this.dirtyFrom = 0;
  }

  height(i: number): number {
    return this.heights[i] ?? 0;
  }

  /** Set row i's height; true when it changed. */
  set(i: number, px: number): boolean {
    if (i < 0 || i >= this.heights.length || this.heights[i] === px) return false;
    this.heights[i] = px;
    this.dirtyFrom = Math.min(this.dirtyFrom, i);
    return true;
  }

  top(i: number): number {
    this.settle();
    return this.offsets[Math.max(0, Math.min(i, this.heights.length))] ?? 0;
  }

  total(): number {
    return this.top(this.heights.length);
  }

  /** The row at offset `y` (the last one past the end, 0 before the start or when empty). */
  indexAt(y: number): number {
    this.settle();
    const n = this.heights.length;
    if (n === 0 || y <= 0) return 0;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.offsets[mid] ?? 0) <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private settle(): void {
    const n = this.heights.length;
    if (this.dirtyFrom > n) return;
    let y = this.offsets[this.dirtyFrom] ?? 0;
    for (let i = this.dirtyFrom; i < n; i++) {
      this.offsets[i] = y;
      y += this.heights[i] ?? 0;
    }
    this.offsets[n] = y;
    this.dirtyFrom = n + 1;
  }
}

/** The heights measured of drawn messages, by id, at one width of the feed. */
export class MeasuredHeights {
  private readonly byId = new Map<string, number>();
  private width = 0;

  /** The feed is `width` wide: true when that is another width, whose wrapping makes every height measured stale (forgotten). */
  resized(width: number): boolean {
    if (width <= 0 || width === this.width) return false;
    this.width = width;
    this.byId.clear();
    return true;
  }

  set(id: string, px: number): void {
    this.byId.set(id, px);
  }

  /** One height per row: measured, else estimated at the width measured at (`fallbackWidth` before any). */
  heights(rows: number, messageAt: (row: number) => Message | undefined, fallbackWidth: number): number[] {
    const width = this.width || fallbackWidth;
    const heights = new Array<number>(rows);
    for (let row = 0; row < rows; row++) {
      const message = messageAt(row);
      heights[row] = (message && this.byId.get(message.id)) || estimateHeight(message, width);
    }
    return heights;
  }

  /** Forget the heights of messages no longer in the view. */
  keep(inView: (id: string) => boolean): void {
    for (const id of this.byId.keys()) if (!inView(id)) this.byId.delete(id);
  }
}
