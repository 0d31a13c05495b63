// A panel that drops down under the header (the model and session pickers): one open at a
// time, closed by Escape, a click outside it or its opener, and focus back to the opener.
import { h } from "./dom";

let openOne: Popover | null = null;

export class Popover {
  readonly el: HTMLElement;
  private readonly body: HTMLElement;

  constructor(className: string, label: string, private readonly opener: HTMLElement) {
    this.body = h("div", { class: "baton-popover-body" });
    this.el = h("div", { class: `baton-popover ${className}`, role: "dialog", "aria-label": label }, this.body);
    this.el.hidden = true;
  }

  get isOpen(): boolean {
    return !this.el.hidden;
  }

  open(content: Node[]): void {
    if (openOne && openOne !== this) openOne.close(false);
    openOne = this;
    this.fill(content);
    this.el.hidden = false;
    this.opener.setAttribute("aria-expanded", "true");
    document.addEventListener("mousedown", this.outside, true);
    document.addEventListener("keydown", this.escape); // bubbling: a rename's Escape stops first
  }

  fill(content: Node[]): void {
    this.body.replaceChildren(...content);
  }

  close(refocus = true): void {
    if (this.el.hidden) return;
    this.el.hidden = true;
    this.opener.setAttribute("aria-expanded", "false");
    document.removeEventListener("mousedown", this.outside, true);
    document.removeEventListener("keydown", this.escape);
    if (openOne === this) openOne = null;
    if (refocus) this.opener.focus();
  }

  private readonly escape = (event: KeyboardEvent): void => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    this.close();
  };

  private readonly outside = (event: MouseEvent): void => {
    const target = event.target as Node | null;
    if (target && (this.el.contains(target) || this.opener.contains(target))) return;
    this.close(false);
  };
}
