// The server's permission requests as cards above the input box: what the tool would do
// (the server's title, the path, the edit as a diff or the call's input) and the options
// the request offers (an edit's read Accept / Reject). A card goes once answered or withdrawn.
// A card asked by a conversation not on show (the user went elsewhere while its reply ran
// its tools) names that conversation, so its edit is not taken for this one's.
import { optionLabel } from "../src/toolWire";
import { button, h } from "./dom";
import { diffElement } from "./diff";
import { codeBlock } from "./markdown";
import { titleElement } from "./toolCalls";
import type { PermissionOutcome, ToolPermissionParams } from "./wire";

export class PermissionCards {
  readonly el = h("div", { class: "baton-permissions", "aria-live": "assertive" });
  /** A restart of the server waiting for the reply these cards hold: said above them. */
  private readonly restart = h("div", { class: "baton-permission-restart", role: "status" });
  private readonly cards = new Map<string, HTMLElement>();
  private shown: string | null = null;

  /**
   * `back`: where the focus goes once the last card answered from the keyboard goes (the
   * input box); `titleOf`: a listed conversation's title.
   */
  constructor(
    private readonly answer: (toolUseId: string, outcome: PermissionOutcome) => void,
    private readonly back: () => void,
    private readonly titleOf: (sessionId: string) => string | undefined,
  ) {
    this.el.hidden = true;
    this.restart.hidden = true;
    this.el.appendChild(this.restart);
  }

  /** The line about a restart that waits for the cards (null: none). */
  restartNote(message: string | null): void {
    this.restart.textContent = message ?? "";
    this.restart.hidden = message === null;
  }

  /** The conversation on show (null: none): each card not its own names the one that asked. */
  sessionShown(sessionId: string | null): void {
    this.shown = sessionId;
    for (const card of this.cards.values()) this.nameAsker(card);
  }

  private nameAsker(card: HTMLElement): void {
    const line = card.querySelector<HTMLElement>(".baton-permission-session");
    const asker = card.dataset.sessionId;
    if (!line || asker === undefined) return;
    line.textContent = `Asked in “${this.titleOf(asker) ?? asker}”`;
    line.hidden = asker === this.shown;
  }

  show(request: ToolPermissionParams): void {
    this.cards.get(request.toolUseId)?.remove();
    const titleId = `permission-${request.toolUseId}`;
    const primary: PermissionOutcome = "allowOnce";
    const buttons = request.options.map((option) =>
      button(
        optionLabel(request, option.id, option.label),
        () => {
          this.done(request.toolUseId);
          this.answer(request.toolUseId, option.id);
        },
        { class: `baton-permission-${option.id}${option.id === primary ? "" : " secondary"}`, "data-outcome": option.id },
      ),
    );
    let detail: HTMLElement;
    if (request.diff) detail = diffElement(request.diff, request.title);
    else {
      detail = h("div", { class: "baton-permission-input" });
      detail.innerHTML = codeBlock(JSON.stringify(request.input, null, 2), "json"); // escaped by highlight.js
    }
    const card = h(
      "section",
      {
        class: `baton-permission kind-${request.kind}`,
        role: "alertdialog",
        "aria-labelledby": titleId,
        "data-tool-use-id": request.toolUseId,
        "data-session-id": request.sessionId,
      },
      h("div", { class: "baton-permission-session" }),
      h(
        "header",
        { class: "baton-permission-head", id: titleId },
        h("span", { class: "baton-permission-ask" }, request.kind === "edit" ? "Apply this edit?" : "Allow this tool call?"),
        " ",
        titleElement(request.title, "baton-permission-title"),
      ),
      request.path ? h("div", { class: "baton-permission-path", title: request.path }, request.path) : null,
      detail,
      h("div", { class: "baton-permission-actions" }, ...buttons),
    );
    this.nameAsker(card);
    this.cards.set(request.toolUseId, card);
    this.el.appendChild(card);
    this.el.hidden = false;
    // the first option takes the focus unless the user is typing somewhere, or on another card
    const active = document.activeElement;
    const typing = active instanceof HTMLTextAreaElement || active instanceof HTMLInputElement;
    if (!typing && !(active instanceof HTMLElement && this.el.contains(active))) buttons[0]?.focus({ preventScroll: true });
  }

  /**
   * The request was answered (here or elsewhere) or withdrawn. A card that had the focus
   * hands it on, to the next card's first option or else back, not to the page's body.
   */
  done(toolUseId: string): void {
    const card = this.cards.get(toolUseId);
    const focused = card !== undefined && card.contains(document.activeElement);
    card?.remove();
    this.cards.delete(toolUseId);
    this.el.hidden = this.cards.size === 0;
    if (!focused) return;
    const next = [...this.cards.values()][0]?.querySelector<HTMLElement>(".baton-permission-actions button");
    if (next) next.focus({ preventScroll: true });
    else this.back();
  }
}
