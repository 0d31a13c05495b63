// How a text too long to draw at once is drawn: its first part, and a line saying how much
// shows with Show more, Copy all and Open in editor. Every place that draws a message's text
// (Markdown, code, a tool's input or output, thinking, an opened paste) goes through here,
// so one message of megabytes never freezes the panel and every character stays reachable.
import { button, h } from "./dom";
import { copyText } from "./messageActions";

/**
 * How many characters of a text are drawn at first, and how many more each Show more adds.
 * Parsing, highlighting and laying out a text costs about 180 ms a megabyte in the panel;
 * 100,000 characters (some 1,500 lines of a log) draw in a frame or two, and are more than
 * a reader scrolls through before reaching for the editor.
 */
export const LONG_TEXT_CHARS = 100_000;

/** How far find draws a text to reach a match (further, it says the match is not shown). */
export const FIND_REACH_CHARS = 5 * LONG_TEXT_CHARS;

/** A prompt's text past these is a paste: folded with its size, opened on demand. */
const PASTE_LINES = 40;
const PASTE_CHARS = 4_000;

export function isLongPaste(text: string): boolean {
  if (text.length > PASTE_CHARS) return true;
  let lines = 1;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) if (++lines > PASTE_LINES) return true;
  return false;
}

/** How many lines `text` has, counted without splitting a text of megabytes into an array. */
export function lineCount(text: string): number {
  let lines = 1;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

/**
 * Where a text drawn from `from` to about `limit` characters ends: after the last line
 * break in the second half of that stretch when there is one (a line is not cut), else at
 * `limit` (a line of megabytes), never between the two halves of a surrogate pair. The
 * whole text when it ends before `limit`.
 */
export function clipEnd(text: string, limit: number, from = 0): number {
  if (text.length <= limit) return text.length;
  const newline = text.lastIndexOf("\n", limit - 1);
  if (newline >= from + (limit - from) / 2) return newline + 1;
  const code = text.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}

/** What a text is drawn as: Markdown (its fenced blocks are code) or one block of code. */
export type TextKind = "markdown" | "code";

/** A long text drawn in part, by its wrapper element: what find asks of it. */
interface Clipped {
  readonly text: string;
  /** How many of its characters are drawn. */
  shown(): number;
  /** Draw it to character `end` (at least). */
  showTo(end: number): void;
}
const clipped = new WeakMap<HTMLElement, Clipped>();

/**
 * `text` drawn by `draw`: whole when short (exactly as `draw` makes it); else its first
 * part and the clip line. Show more draws the text again, one piece to the new length,
 * rather than appending the next part as plain text: a cut inside a fenced block or a list
 * would leave what follows outside it, and the cost of drawing again is that of the part
 * the reader asked to see.
 */
export function longText(text: string, kind: TextKind, draw: (part: string) => HTMLElement): HTMLElement {
  if (text.length <= LONG_TEXT_CHARS) return draw(text);
  const wrap = h("div", { class: "baton-long-text" });
  const note = h("span", { class: "baton-clip-note" });
  const line = h(
    "div",
    { class: "baton-clip" },
    note,
    button("Show more", () => showTo(clipEnd(text, end + LONG_TEXT_CHARS, end)), {
      class: "secondary baton-show-more",
      title: "Draw the next part of the text",
    }),
    button("Copy all", (event) => void copyText(event.currentTarget as HTMLElement, text), {
      class: "secondary baton-copy-all",
      title: "Copy the whole text, not only the part shown",
    }),
    h("button", { type: "button", class: "secondary baton-open-message", title: "Open the session document at this message" }, "Open in editor"),
  );
  let end = 0;
  let part: HTMLElement | null = null;
  const showTo = (next: number): void => {
    if (next <= end) return;
    end = Math.min(next, text.length);
    const drawn = draw(text.slice(0, end));
    if (end < text.length && cutInCode(text.slice(0, end), kind)) withoutCodeButtons(drawn);
    if (part) part.replaceWith(drawn);
    else wrap.prepend(drawn);
    part = drawn;
    if (end >= text.length) {
      line.remove();
      return;
    }
    note.textContent = `Showing the first ${end.toLocaleString("en-US")} of ${text.length.toLocaleString("en-US")} characters.`;
  };
  showTo(clipEnd(text, LONG_TEXT_CHARS));
  wrap.append(line);
  clipped.set(wrap, { text, shown: () => end, showTo });
  return wrap;
}

/**
 * Find's match `q` (lower-case) in the long texts drawn in part inside `root`: a text whose
 * first match lies past what is drawn is drawn up to it when that is within FIND_REACH_CHARS.
 * "drawn" when one was (or is) reachable so, "beyond" when the only matches lie further,
 * "none" when no text drawn in part holds one.
 */
export function reachMatch(root: Element, q: string): "drawn" | "beyond" | "none" {
  let result: "drawn" | "beyond" | "none" = "none";
  for (const wrap of root.querySelectorAll<HTMLElement>(".baton-long-text")) {
    const long = clipped.get(wrap);
    if (!long) continue;
    const at = long.text.toLowerCase().indexOf(q);
    if (at < 0) continue;
    if (at + q.length <= long.shown()) return "drawn";
    if (at + q.length > FIND_REACH_CHARS) {
      result = "beyond";
      continue;
    }
    // through the end of the match's line, unless that line runs on for pages
    const matchEnd = at + q.length;
    const stop = lineEnd(long.text, matchEnd);
    long.showTo(stop - matchEnd <= 1_000 ? stop : matchEnd);
    return "drawn";
  }
  return result;
}

function lineEnd(text: string, from: number): number {
  const at = text.indexOf("\n", from);
  return at < 0 ? text.length : at + 1;
}

/** Whether a text cut here ends inside a block of code (Markdown's fenced block left open). */
function cutInCode(part: string, kind: TextKind): boolean {
  if (kind === "code") return true;
  let open: string | null = null; // the fence that opened the block we are in
  const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
  let start = 0;
  while (start < part.length) {
    let end = part.indexOf("\n", start);
    if (end < 0) end = part.length;
    // only a line that starts with a fence character can open or close a block
    const lead = part.slice(start, Math.min(end, start + 4)).trimStart()[0];
    if (lead === "`" || lead === "~") {
      const fence = FENCE.exec(part.slice(start, end));
      if (fence) {
        const marks = fence[1] ?? "";
        if (open === null) {
          if (!(marks[0] === "`" && (fence[2] ?? "").includes("`"))) open = marks;
        } else if (marks[0] === open[0] && marks.length >= open.length && (fence[2] ?? "").trim() === "") open = null;
      }
    }
    start = end + 1;
  }
  return open !== null;
}

/**
 * The last code block drawn was cut: its Copy, Insert and Apply would take part of it for
 * the whole, so they go (Copy all on the clip line copies the whole text).
 */
function withoutCodeButtons(drawn: HTMLElement): void {
  const blocks = drawn.querySelectorAll<HTMLElement>("pre.baton-code");
  const last = blocks[blocks.length - 1];
  if (!last) return;
  last.classList.add("baton-code-cut");
  for (const el of last.querySelectorAll(".baton-copy, .baton-insert, .baton-apply, .baton-code-actions")) el.remove();
}
