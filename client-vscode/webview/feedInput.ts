// Mouse and keyboard on the message feed: click, shift-click and the arrow keys select,
// a right-click selects what it lands on, focus moves as a roving tab stop; the selection
// is painted, posted to the host when it changes, and summed up in a bar under the feed.
import { button, h } from "./dom";
import type { Feed } from "./feed";
import { Selection } from "./selection";

const MESSAGE = "article[data-vscode-context]";

export class FeedInput {
  /** "N messages selected", from two up; goes between the feed and the input box. */
  readonly bar = h("div", { class: "baton-selection-bar", role: "status" });
  private readonly selection = new Selection();
  private lastPosted: string | null = null; // null: post the first selection, even empty
  private focused: string | null = null; // the roving tab stop's message
  /** The message that held the focus when a render took it out (`before`: the ids loaded then). */
  private lostFocus: { id: string; before: readonly string[]; summary: boolean } | undefined;
  private sessionId: string | null = null; // the session on show, which every message's menu names

  constructor(
    private readonly feed: Feed,
    private readonly post: (messageIds: string[]) => void,
  ) {
    this.bar.hidden = true;
    const el = feed.el;
    // The feed draws only the messages near the viewport: paint each as it is drawn.
    feed.decorate = (article, id) => {
      article.classList.toggle("selected", this.selection.has(id));
      article.tabIndex = id === this.focused ? 0 : -1;
    };
    // Shift-click extends the message selection, not the text selection.
    el.addEventListener("mousedown", (event) => {
      if (event.shiftKey && target(event)) event.preventDefault();
    });
    el.addEventListener("click", (event) => this.click(event));
    // Runs before VS Code's own contextmenu listener (on the window), which builds the menu
    // from the nearest data-vscode-context: never preventDefault here.
    el.addEventListener("contextmenu", (event) => {
      const article = target(event);
      // a message a compaction replaced, under its summary: its own menu (Copy), no selection
      if (!article || (event.target as Element).closest(".baton-replaced-message")) return;
      if (this.selection.contextMenu(article.dataset.messageId ?? "", this.feed.ids())) this.changed();
      this.focus(article, event.button !== 2); // the menu key: keep the message in sight
    });
    el.addEventListener("keydown", (event) => this.keydown(event));
    feed.focusGone = (id, before, summary) => (this.lostFocus = { id, before, summary });
  }

  /**
   * The session on show: every message's menu names it, and the selection's first and last
   * message (VS Code merges the feed's context into theirs), so its command acts there, on
   * that selection, even once the host holds another session as current.
   */
  setSession(sessionId: string | null): void {
    this.sessionId = sessionId;
    this.nameInMenus(this.selection.ordered(this.feed.ids()));
  }

  /** After the feed changed: drop what left the view (`reset`: everything) and post if that changed it. */
  refresh(reset: boolean): void {
    if (reset) this.selection.clear();
    this.selection.prune(this.feed.ids());
    this.changed();
    this.handFocusOn();
  }

  /**
   * The message the keyboard was on left the view (compacted from its menu, say), or is in
   * rows not loaded yet: once every row is, the focus goes back to it, else to the first
   * message after it still there, else to the view's last; not left on the page's body,
   * where the arrow keys move nothing. A summary its Undo took out hands it to the first
   * message brought back in its place. Unless the user has put it elsewhere meanwhile.
   */
  private handFocusOn(): void {
    const lost = this.lostFocus;
    if (lost === undefined || this.feed.firstLoaded > 0) return;
    this.lostFocus = undefined;
    if (document.activeElement !== null && document.activeElement !== document.body) return;
    const ids = this.feed.ids();
    const left = new Set(ids);
    const next =
      (lost.summary ? broughtBack(lost, ids) : undefined) ??
      lost.before.slice(Math.max(0, lost.before.indexOf(lost.id))).find((id) => left.has(id)) ??
      ids.at(-1);
    const article = next !== undefined ? this.feed.reveal(next) : undefined;
    if (article) this.focus(article);
  }

  private click(event: MouseEvent): void {
    // A disclosure (a folded tool call, result, thinking) opens without selecting the message.
    const interactive = (event.target as Element).closest("a, button, input, textarea, select, summary");
    const dragged = !event.shiftKey && !(window.getSelection()?.isCollapsed ?? true); // text being selected
    if (interactive || dragged) return;
    const article = target(event);
    if (article) this.select(article, event.shiftKey);
    else if (this.selection.clear()) this.changed();
  }

  private keydown(event: KeyboardEvent): void {
    if ((event.target as Element).closest("textarea, input")) return; // an edit box's own keys
    const ids = this.feed.ids();
    const current = (event.target as Element).closest<HTMLElement>(MESSAGE);
    if (!current || ids.length === 0) return;
    const index = ids.indexOf(current.dataset.messageId ?? "");
    const move = (to: number): void => {
      // The message may not be drawn yet: the feed draws it and brings it into view.
      const el = this.feed.reveal(ids[Math.max(0, Math.min(ids.length - 1, to))] ?? "");
      if (!el) return;
      event.preventDefault();
      this.focus(el, true);
      if (event.shiftKey) this.select(el, true, true);
    };
    switch (event.key) {
      case "ArrowDown":
      case "PageDown": // the feed pattern's keys
        return move(index + 1);
      case "ArrowUp":
      case "PageUp":
        return move(index - 1);
      case "Home":
        return move(0);
      case "End":
        return move(ids.length - 1);
      case " ":
      case "Enter":
        if (event.target !== current) return; // a button or summary inside the message
        event.preventDefault();
        this.select(current, event.shiftKey, true);
        return;
      case "Escape":
        if (this.selection.clear()) this.changed();
        return;
    }
  }

  private select(article: HTMLElement, extend: boolean, keyboard = false): void {
    this.selection.click(article.dataset.messageId ?? "", this.feed.ids(), extend);
    this.focus(article, keyboard);
    this.changed();
  }

  /** Roving tabindex: the focused message is the feed's one tab stop. */
  private focus(article: HTMLElement, reveal = false): void {
    for (const el of this.feed.el.querySelectorAll<HTMLElement>("article[tabindex='0']")) el.tabIndex = -1;
    article.tabIndex = 0;
    this.focused = article.dataset.messageId ?? null;
    article.focus({ preventScroll: true }); // a click must not make the feed jump
    if (reveal) article.scrollIntoView({ block: "nearest" });
  }

  private changed(): void {
    const ids = this.feed.ids();
    for (const el of this.feed.drawnElements()) el.classList.toggle("selected", this.selection.has(el.dataset.messageId ?? ""));
    if (this.focused === null || !ids.includes(this.focused)) this.focused = ids[ids.length - 1] ?? null;
    const stop = this.focused ? this.feed.element(this.focused) : undefined;
    if (stop && !this.feed.el.querySelector("article[tabindex='0']")) stop.tabIndex = 0;
    const messageIds = this.selection.ordered(ids);
    this.nameInMenus(messageIds);
    const key = JSON.stringify(messageIds);
    if (key === this.lastPosted) return;
    this.lastPosted = key;
    this.post(messageIds);
    this.showBar(messageIds.length);
  }

  private nameInMenus(messageIds: readonly string[]): void {
    const span = messageIds.length >= 2 ? { selectedFirst: messageIds[0], selectedLast: messageIds.at(-1) } : {};
    this.feed.el.dataset.vscodeContext = JSON.stringify({ sessionId: this.sessionId, ...span });
  }

  /** From two messages up, say so and how to act on them (the menu's Compact Selected). */
  private showBar(count: number): void {
    this.bar.hidden = count < 2;
    if (count < 2) return;
    const clear = (): void => {
      const held = this.bar.contains(document.activeElement);
      this.selection.clear();
      this.changed();
      // the bar goes with the focus on its Clear: back to the message the keyboard was on
      const article = held && this.focused !== null ? this.feed.reveal(this.focused) : undefined;
      if (article) this.focus(article);
    };
    this.bar.replaceChildren(
      h("span", {}, `${count} messages selected: right-click one for Compact Selected`),
      button("Clear", clear, { class: "link" }),
    );
  }
}

/** The first message that came where `lost.id` was (after the one before it still there), when new. */
function broughtBack(lost: { id: string; before: readonly string[] }, ids: readonly string[]): string | undefined {
  const left = new Set(ids);
  const at = Math.max(0, lost.before.indexOf(lost.id));
  const previous = lost.before.slice(0, at).reverse().find((id) => left.has(id));
  const first = ids[previous === undefined ? 0 : ids.indexOf(previous) + 1];
  return first !== undefined && !lost.before.includes(first) ? first : undefined;
}

function target(event: Event): HTMLElement | null {
  return (event.target as Element | null)?.closest<HTMLElement>(MESSAGE) ?? null;
}
