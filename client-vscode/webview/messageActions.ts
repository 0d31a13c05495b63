// A message's own actions, in its header: Edit on a prompt (the prompt becomes an input
// box; Send posts the edit, which sends it again in place of the old one and what followed),
// Retry on the view's last reply, and Copy. The feed handles the clicks.
import { button, h } from "./dom";
import type { Message } from "./wire";

/** A prompt the user typed: a user message of the conversation that is not only tool results. */
export function isPrompt(message: Message): boolean {
  const kind = message.kind ?? "message";
  const onlyResults = message.content.length > 0 && message.content.every((b) => b.type === "tool_result");
  return message.role === "user" && kind === "message" && !onlyResults;
}

/** What the message says as text (what Copy copies and Edit starts from). */
export function messageText(message: Message): string {
  return message.content
    .map((b) => (b.type === "text" ? b.text : ""))
    .filter((t) => t !== "")
    .join("\n\n");
}

/** The header's action buttons for `message` (none for a read-only view's edits). */
export function messageActions(message: Message, opts: { retry: boolean; readOnly: boolean; editable: boolean }): HTMLElement | null {
  const buttons: HTMLElement[] = [];
  const kind = message.kind ?? "message";
  if (kind !== "message") return null;
  if (!opts.readOnly && opts.editable && isPrompt(message)) {
    buttons.push(h("button", { type: "button", class: "baton-edit link", title: "Edit this prompt and send it again" }, "Edit"));
  }
  if (!opts.readOnly && opts.retry) {
    const title = message.role === "user" ? "Ask for a reply to this prompt again" : "Ask for a new reply to the last prompt";
    buttons.push(h("button", { type: "button", class: "baton-retry link", title }, "Retry"));
  }
  if (message.content.some((b) => b.type === "text" && b.text !== "")) {
    buttons.push(h("button", { type: "button", class: "baton-copy-message link", title: "Copy the message's text" }, "Copy"));
  }
  return buttons.length ? h("span", { class: "baton-message-actions" }, ...buttons) : null;
}

/**
 * Turn `article`'s body into an input box holding `text`: Send calls `send` with the new
 * text (the feed's next render replaces the element), Cancel (or Escape) puts the body back.
 */
export function openEditor(article: HTMLElement, text: string, send: (text: string) => void): void {
  const body = article.querySelector<HTMLElement>(".baton-message-body");
  if (!body || article.querySelector(".baton-edit-box")) return;
  const input = h("textarea", { class: "baton-input baton-edit-input", "aria-label": "Edit the prompt", rows: "4" });
  input.value = text;
  const close = (): void => {
    const hadFocus = box.contains(document.activeElement);
    box.remove();
    body.hidden = false;
    // the focus goes back where the edit came from, not to the page's body
    if (hadFocus) (article.querySelector<HTMLElement>(".baton-edit") ?? article).focus({ preventScroll: true });
  };
  const submit = (): void => {
    if (input.value.trim() === "") return;
    send(input.value);
    close();
  };
  const box = h(
    "div",
    { class: "baton-edit-box" },
    input,
    h(
      "div",
      { class: "baton-edit-actions" },
      button("Send", submit, { class: "baton-edit-send", title: "Send the edited prompt (Ctrl+Enter); the turns after it leave the view" }),
      button("Cancel", close, { class: "secondary baton-edit-cancel" }),
    ),
  );
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      submit();
    }
  });
  body.hidden = true;
  body.after(box);
  input.focus();
}

/** Put `text` on the clipboard; the button says how that went for a moment. */
export async function copyText(button: HTMLElement, text: string): Promise<void> {
  const label = button.textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Copy failed";
  }
  setTimeout(() => (button.textContent = label), 1500);
}
