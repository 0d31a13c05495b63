// The server's permission requests as cards above the input box: what the tool would do
// (the server's title, the path, the edit as a diff or the call's input) and the options
// the request offers (an edit's read Accept / Reject). A card goes once answered or withdrawn.
import { optionLabel } from "../src/toolWire";
import { button, h } from "./dom";
import { diffElement } from "./diff";
import { codeBlock } from "./markdown";
import { titleElement } from "./toolCalls";
import type { PermissionOutcome, ToolPermissionParams } from "./wire";

export class PermissionCards {
  readonly el = h("div", { class: "baton-permissions", "aria-live": "assertive" });
  private readonly cards = new Map<string, HTMLElement>();

  constructor(private readonly answer: (toolUseId: string, outcome: PermissionOutcome) => void) {
    this.el.hidden = true;
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
      { class: `baton-permission kind-${request.kind}`, role: "alertdialog", "aria-labelledby": titleId, "data-tool-use-id": request.toolUseId },
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
    this.cards.set(request.toolUseId, card);
    this.el.appendChild(card);
    this.el.hidden = false;
    // the first option takes the focus unless the user is typing somewhere
    const typing = document.activeElement instanceof HTMLTextAreaElement || document.activeElement instanceof HTMLInputElement;
    if (!typing) buttons[0]?.focus({ preventScroll: true });
  }

  /** The request was answered (here or elsewhere) or withdrawn. */
  done(toolUseId: string): void {
    this.cards.get(toolUseId)?.remove();
    this.cards.delete(toolUseId);
    this.el.hidden = this.cards.size === 0;
  }
}
