// A long session's pages in the webview: the host sends the view's last page first; once
// it has painted, the messages before it are asked for (`loadEarlier`) and the whole view is
// drawn from them and the page. A new last page of the session shown keeps the earlier
// messages drawn meanwhile.
import type { FromWebview, ToWebview } from "../src/webviewMessages";
import type { Feed } from "./feed";

export type SessionUpdate = Extract<ToWebview, { type: "session" }>;
type Earlier = Extract<ToWebview, { type: "earlier" }>;

/** What the pages need of the view around them. */
export interface PagesView {
  /** Whether a send runs (the feed keeps the prompt and reply streaming in meanwhile). */
  busy(): boolean;
  post(message: FromWebview): void;
  /** The feed has drawn an update's messages (`changed`: another session's). */
  drawn(changed: boolean): void;
}

export class ViewPages {
  private shownUpdate: SessionUpdate | null = null; // the last session update drawn (for its pages)
  private earlierAsked = 0;

  constructor(
    private readonly feed: Feed,
    private readonly view: PagesView,
  ) {}

  /**
   * Draw the update's messages. A last page of a session already shown keeps the earlier
   * messages drawn before until the host sends the new ones (`earlier`), when the page
   * starts where they left off; else the rows before the page wait, estimated, for them.
   */
  show(update: SessionUpdate, changed: boolean): void {
    const open = update.session !== null;
    const readOnly = update.session?.readOnly === true;
    let messages = open ? update.messages : [];
    let offset = open ? (update.offset ?? 0) : 0;
    const held = this.feed.all();
    if (!changed && offset > 0 && this.feed.firstLoaded === 0 && held[offset]?.id === messages[0]?.id) {
      messages = [...held.slice(0, offset), ...messages];
      offset = 0;
    }
    this.shownUpdate = update;
    this.feed.render(messages, this.view.busy(), readOnly, offset, open ? (update.totalMessages ?? messages.length) : 0);
    this.view.drawn(changed);
  }

  /** Draw the last update again (a send started: its prompts offer no Edit meanwhile). */
  redraw(): void {
    if (this.shownUpdate !== null) this.show(this.shownUpdate, false);
  }

  /** Once the last page is drawn (the next frame has painted), ask for the messages before it. */
  askEarlier(): void {
    const update = this.shownUpdate;
    const sessionId = update?.session?.sessionId;
    const before = update?.offset ?? 0;
    if (!update || sessionId === undefined || before <= 0) return;
    const ask = ++this.earlierAsked;
    requestAnimationFrame(() =>
      setTimeout(() => {
        if (ask === this.earlierAsked && this.shownUpdate === update) this.view.post({ type: "loadEarlier", sessionId, before });
      }, 0),
    );
  }

  /** The messages before the last page: the whole view is drawn from them and the page. */
  showEarlier(message: Earlier): void {
    const update = this.shownUpdate;
    if (!update || update.session?.sessionId !== message.sessionId) return;
    if ((update.offset ?? 0) !== message.messages.length || update.totalMessages !== message.totalMessages) return;
    const whole: SessionUpdate = { ...update, messages: [...message.messages, ...update.messages] };
    delete whole.offset;
    delete whole.totalMessages;
    this.show(whole, false);
  }
}
