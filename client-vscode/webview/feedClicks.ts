// The feed's clicks, taken once on the feed's element for every message in it: a code
// block's Copy, Insert and Apply (blocks.ts), a message's Edit, Retry and Copy
// (messageActions.ts), and a long text's Open in editor (longText.ts).
import { codeOf, copyCode } from "./blocks";
import { copyText, messageText, openEditor } from "./messageActions";
import type { Message } from "./wire";

/** What the feed's clicks ask of the host. */
export interface ClickHandlers {
  /** Edit and resend: the prompt `messageId` is sent again as `text`. */
  edit(messageId: string, text: string): void;
  /** Retry: a new reply to the last prompt. */
  retry(): void;
  /** A code block's Insert (at the active editor's cursor). */
  insertCode(code: string): void;
  /** A code block's Apply (to the file it names, else the active editor's): a diff first. */
  applyCode(code: string, file: string | undefined): void;
  /** A long text's Open in editor: the session document at message `messageId`. */
  openMessage(messageId: string): void;
}

/** Handle the clicks inside `feed`; `messageOf` finds a loaded message by id. */
export function handleClicks(
  feed: HTMLElement,
  handlers: ClickHandlers,
  messageOf: (id: string) => Message | undefined,
): void {
  feed.addEventListener("click", (event) => {
    const target = event.target as Element;
    const copy = target.closest<HTMLElement>(".baton-copy");
    if (copy) void copyCode(copy);
    messageAction(target, handlers, messageOf);
    const insert = target.closest<HTMLElement>(".baton-insert");
    if (insert) handlers.insertCode(codeOf(insert).code);
    const apply = target.closest<HTMLElement>(".baton-apply");
    if (apply) {
      const { code, file } = codeOf(apply);
      handlers.applyCode(code, file);
    }
    const open = target.closest<HTMLElement>(".baton-open-message");
    const id = open?.closest<HTMLElement>("article[data-message-id]")?.dataset.messageId;
    if (id !== undefined) handlers.openMessage(id);
  });
}

/** A click on a message's own action (Edit, Retry, Copy). */
function messageAction(target: Element, handlers: ClickHandlers, messageOf: (id: string) => Message | undefined): void {
  const action = target.closest<HTMLElement>(".baton-edit, .baton-retry, .baton-copy-message");
  const article = action?.closest<HTMLElement>("article[data-message-id]");
  const message = article ? messageOf(article.dataset.messageId ?? "") : undefined;
  if (!action || !article || !message) return;
  if (action.classList.contains("baton-retry")) handlers.retry();
  else if (action.classList.contains("baton-edit")) openEditor(article, messageText(message), (text) => handlers.edit(message.id, text));
  else void copyText(action, messageText(message));
}
