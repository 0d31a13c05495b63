// The header's model picker: the current model with its window, and a menu of the models
// to choose from (the host asks `baton/models`); a choice switches the session's model.
import { button, compactNumber, h } from "./dom";
import { Popover } from "./popover";
import type { ModelCatalog, ModelOption } from "./wire";

export interface ModelPickerHandlers {
  /** The menu opened: the host answers with `models`. */
  list(): void;
  choose(model: string): void;
}

export class ModelPicker {
  readonly button: HTMLButtonElement;
  readonly popover: Popover;

  constructor(private readonly handlers: ModelPickerHandlers) {
    this.button = button("", () => this.toggle(), {
      class: "secondary baton-model-button",
      "aria-haspopup": "menu",
      "aria-expanded": "false",
    });
    this.popover = new Popover("baton-model-picker", "Models", this.button);
  }

  /** The model in use and its window (from the usage, which follows a switch at once). */
  show(model: string, contextWindow: number): void {
    const short = model.replace(/^claude-/, ""); // the header is narrow; the tooltip has it all
    const label = contextWindow > 0 ? `${short} · ${compactNumber(contextWindow)}` : short;
    this.button.textContent = label;
    this.button.title = `Model: ${model}${contextWindow > 0 ? ` (${contextWindow.toLocaleString("en-US")}-token window)` : ""}. Choose another`;
    this.button.setAttribute("aria-label", `Model: ${model}${contextWindow > 0 ? ` · ${compactNumber(contextWindow)}` : ""}`);
  }

  private toggle(): void {
    if (this.popover.isOpen) {
      this.popover.close();
      return;
    }
    this.popover.open([h("p", { class: "baton-picker-status", role: "status" }, "Loading models…")]);
    this.handlers.list();
  }

  /** The host's answer: the menu's rows, or why there are none. */
  render(catalog: ModelCatalog | null, message?: string): void {
    if (!this.popover.isOpen) return;
    if (catalog === null) {
      this.popover.fill([h("p", { class: "baton-picker-status", role: "status" }, message ?? "No models to choose from.")]);
      return;
    }
    const note =
      catalog.source === "api"
        ? "From the Anthropic Models API"
        : `Configured models${catalog.reason ? `: ${catalog.reason}` : ""}`;
    const rows = catalog.models.map((m) => this.row(m));
    const list = h("div", { class: "baton-model-list", role: "menu", "aria-label": "Models" }, ...rows);
    list.addEventListener("keydown", (event) => arrows(event, rows));
    this.popover.fill([h("p", { class: "baton-picker-note" }, note), list]);
    (rows.find((r) => r.getAttribute("aria-checked") === "true") ?? rows[0])?.focus();
  }

  private row(m: ModelOption): HTMLButtonElement {
    const current = m.current;
    const window = `${compactNumber(m.contextWindow)} window${m.windowFrom === "assumed" ? " (assumed)" : ""}`;
    const el = h(
      "button",
      {
        type: "button",
        class: "baton-model-row",
        role: "menuitemradio",
        "aria-checked": current ? "true" : "false",
        "data-model": m.id,
        title: `${m.id}: ${m.contextWindow.toLocaleString("en-US")}-token window, up to ${m.maxOutput.toLocaleString("en-US")} output tokens`,
      },
      h("span", { class: "baton-model-check", "aria-hidden": "true" }, current ? "✓" : ""),
      h(
        "span",
        { class: "baton-model-name" },
        m.displayName,
        m.displayName !== m.id ? h("span", { class: "baton-model-id" }, m.id) : null,
      ),
      h("span", { class: "baton-model-window" }, window),
    );
    el.addEventListener("click", () => {
      this.popover.close();
      if (!current) this.handlers.choose(m.id);
    });
    return el;
  }
}

/** A menu's keys: Up and Down move between its items (wrapping), Home and End go to the ends. */
function arrows(event: KeyboardEvent, items: readonly HTMLElement[]): void {
  const at = items.indexOf(document.activeElement as HTMLElement);
  const to: { [key: string]: number } = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 };
  const next = to[event.key];
  if (next === undefined || items.length === 0) return;
  event.preventDefault();
  items[(next + items.length) % items.length]?.focus();
}
