// Under a summary: the messages its compaction replaced, as the transcript holds them, read a
// page at a time (`baton/session/replaced`) once the disclosure opens, shown greyed and
// read-only (no actions, no selection of their own: they are not in the model's view). A
// right-click names the message (its compaction and place in the list) for Copy Message. The
// feed keeps one list per compaction, so a card drawn again keeps what was read.
import { renderBlock } from "./blocks";
import { button, collapsed, compactNumber, h } from "./dom";
import { toolContext, toolNames } from "./toolCalls";
import type { Message } from "./wire";

/** One page of the answer (`replaced` from the host). */
export interface ReplacedPage {
  messages: Message[];
  offset: number;
  totalMessages: number;
  error?: string;
}

export class ReplacedList {
  readonly el: HTMLDetailsElement;
  private readonly list = h("div", { class: "baton-replaced-list" });
  private readonly status = h("div", { class: "baton-replaced-status baton-meta", role: "status" });
  private readonly count = h("span", { class: "baton-meta" });
  private readonly more: HTMLButtonElement;
  private messages: Message[] = [];
  private total: number | undefined;
  private waiting = false;
  /** Show more was pressed with the focus on it: the button goes while the page is read, the focus comes back with it. */
  private handOn = false;

  /** `load(offset)` asks the host for the page from `offset`; `receive` gets it. */
  constructor(
    private readonly boundaryId: string,
    private readonly load: (offset: number) => void,
  ) {
    this.more = button("Show more", () => this.ask(), { class: "secondary baton-replaced-more" });
    this.more.hidden = true;
    this.el = collapsed(
      "baton-replaced",
      [h("span", {}, "Summarized messages"), this.count],
      this.list,
      this.status,
      this.more,
    );
    this.el.addEventListener("toggle", () => {
      if (this.el.open && this.total === undefined && !this.waiting) this.ask();
    });
  }

  private ask(): void {
    this.handOn = this.more.contains(document.activeElement);
    this.waiting = true;
    this.more.hidden = true;
    this.status.textContent = "Reading them from the transcript…";
    this.load(this.messages.length);
  }

  receive(page: ReplacedPage): void {
    if (page.error === undefined && page.offset !== this.messages.length) return; // a page asked for before
    this.waiting = false;
    const shown = this.messages.length;
    if (page.error !== undefined) {
      this.status.textContent = `They could not be read: ${page.error}`;
      this.more.textContent = "Try again";
      this.more.hidden = false;
      this.focusAgain(this.more);
      return;
    }
    this.messages = [...this.messages, ...page.messages];
    this.total = page.totalMessages;
    // drawn again whole: a call's result may come on a later page than the call
    const ctx = { toolNames: toolNames(this.messages), ...toolContext(this.messages) };
    this.list.replaceChildren(...this.messages.map((m, i) => replacedMessage(m, ctx, this.boundaryId, i)));
    const total = this.total;
    const loaded = this.messages.length;
    this.count.textContent = ` · ${total.toLocaleString("en-US")} ${total === 1 ? "message" : "messages"}`;
    this.status.textContent =
      total === 0 ? "The transcript holds none of them." : loaded < total ? `${loaded} of ${total} shown` : "";
    this.more.textContent = "Show more";
    this.more.hidden = loaded >= total || page.messages.length === 0;
    this.focusAgain(this.list.children[shown] as HTMLElement | undefined); // the first message it shows
  }

  /**
   * The keyboard pressed Show more, which hid while the page was read and left the focus on
   * the page's body: it goes to `to`, unless the user has put it elsewhere meanwhile.
   */
  private focusAgain(to: HTMLElement | undefined): void {
    const asked = this.handOn;
    this.handOn = false;
    const idle = document.activeElement === null || document.activeElement === document.body;
    if (asked && idle && to !== undefined) to.focus();
  }
}

/**
 * One replaced message: who and when, its blocks; greyed by its class. Its menu context (the
 * nearest one wins over the summary's) offers Copy Message only, for the message at `index`
 * of what compaction `boundaryId` replaced; a tab stop, for the menu key.
 */
function replacedMessage(message: Message, ctx: Parameters<typeof renderBlock>[1], boundaryId: string, index: number): HTMLElement {
  const when = message.createdAt ? new Date(message.createdAt).toLocaleString() : undefined;
  const menu = { webviewSection: "replacedMessage", messageId: message.id, boundaryId, replacedIndex: index };
  return h(
    "div",
    {
      class: `baton-replaced-message role-${message.role}`,
      "data-replaced-id": message.id,
      "data-vscode-context": JSON.stringify(menu),
      // a tab stop: from the keyboard, the menu key opens its menu (Copy Message) on it alone
      tabindex: "0",
    },
    h(
      "div",
      { class: "baton-replaced-head" },
      h("span", { class: "baton-role", title: when }, label(message)),
      message.tokens ? h("span", { class: "baton-meta" }, ` ${compactNumber(message.tokens)} tokens`) : null,
    ),
    ...message.content.map((b) => renderBlock(b, ctx)),
  );
}

function label(message: Message): string {
  if (message.kind === "summary") return "Earlier summary";
  if (message.kind === "attachment") return message.attachment?.label ?? "Restored";
  if (message.role === "assistant") return "Assistant";
  return message.content.length > 0 && message.content.every((b) => b.type === "tool_result") ? "Tool result" : "You";
}
