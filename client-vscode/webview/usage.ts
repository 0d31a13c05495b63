// The context-usage chart: a stacked bar of Usage.breakdown always in sight, and on demand one
// bar per category (the known ones in a fixed order, any other key after them), each as a
// share of the context window. The words are the server's (`Usage.text`): its usage line and
// each category's label.
import { percentOfWindow } from "../src/meterText";
import { button, compactNumber, h } from "./dom";
import type { Usage } from "./wire";

const KNOWN: readonly string[] = ["system", "tools", "messages", "summary", "attachments", "unattributed", "free"];

export class UsageChart {
  readonly el: HTMLDetailsElement;
  private readonly title: HTMLElement;
  private readonly stack: HTMLElement;
  private readonly rows: HTMLElement;
  private readonly warnings: HTMLElement;

  /**
   * `open`: whether the per-category rows show; `onToggle` hears the user change it;
   * `openDocument` opens the session document (where the usage diagnostic lives).
   */
  constructor(open: boolean, onToggle: (open: boolean) => void, openDocument: () => void) {
    this.title = h("span", { class: "baton-usage-title" });
    this.stack = h("span", { class: "baton-usage-stack", "aria-hidden": "true" });
    this.rows = h("div", { class: "baton-usage-rows", role: "list", "aria-label": "Context usage by category" });
    const summary = h("summary", {}, this.title, this.stack);
    this.warnings = h("ul", { class: "baton-usage-warnings", "aria-label": "Why the figures may be off" });
    const actions = h(
      "div",
      { class: "baton-usage-actions" },
      button("Open as Document", openDocument, {
        class: "link",
        title: "The conversation as a document: its usage diagnostic, code actions to compact",
      }),
    );
    this.el = h("details", { class: "baton-usage", open }, summary, this.rows, this.warnings, actions);
    this.el.addEventListener("toggle", () => onToggle(this.el.open));
    this.el.hidden = true;
  }

  render(usage: Usage | null): void {
    this.el.hidden = usage === null;
    if (usage === null) return;
    const window = Math.max(usage.contextWindow, 1);
    const share = (tokens: number, of = window): string => `${Math.max(0, Math.min(100, (100 * tokens) / of)).toFixed(2)}%`;
    const notes = [usage.text.panel];
    const warnings = [...(usage.warnings ?? [])];
    if (usage.estimatorExact === false) warnings.unshift("Token counts come from an approximate tokenizer.");
    if (warnings.length) notes.push(warnings.length === 1 ? "1 warning" : `${warnings.length} warnings`);
    this.title.textContent = notes.join(" · ");
    this.warnings.replaceChildren(...warnings.map((w) => h("li", {}, w)));
    this.warnings.hidden = warnings.length === 0;
    this.el.dataset.state = usage.state;
    const all = categories(usage.breakdown as unknown as { [key: string]: unknown }, usage.text.labels);
    // The stacked bar: every category but free space, then a tick at the auto-compact threshold
    // (none when auto-compact is off or paused: nothing happens there).
    // Past the window the bar spans what is used, so the parts keep their proportions and fill
    // it, and a mark shows where the window ends.
    const over = usage.usedTokens > window;
    const span = over ? usage.usedTokens : window;
    const segments = all
      .filter(([key, , tokens]) => key !== "free" && tokens > 0)
      .map(([key, label, tokens]) => {
        const seg = h("span", { class: `baton-usage-seg cat-${key}`, title: `${label}: ${compactNumber(tokens)}` });
        seg.style.width = share(tokens, span); // CSSOM: allowed by the CSP, unlike a style attribute
        return seg;
      });
    const runs = usage.autoCompactEnabled && !usage.autoCompactPaused;
    const tick = runs ? h("span", { class: "baton-usage-tick" }) : null;
    if (tick) tick.style.left = share(usage.autoCompactThreshold, span);
    const limit = over ? h("span", { class: "baton-usage-limit" }) : null;
    if (limit) limit.style.left = share(window, span);
    this.stack.replaceChildren(...segments, ...(tick ? [tick] : []), ...(limit ? [limit] : []));
    if (over) {
      this.stack.dataset.over = "true";
      const percent = Math.round(percentOfWindow(usage));
      this.stack.title = `${usage.usedTokens.toLocaleString("en-US")} tokens: ${percent}% of the ${window.toLocaleString("en-US")}-token window`;
    } else {
      delete this.stack.dataset.over;
      this.stack.removeAttribute("title");
    }
    const rows = all.map(([key, label, tokens]) => {
      const fill = h("span", { class: `baton-usage-fill cat-${key}${tokens > 0 ? "" : " empty"}` });
      fill.style.width = share(tokens);
      return h(
        "div",
        {
          class: "baton-usage-row",
          role: "listitem",
          "data-category": key,
          "aria-label": `${label}: ${tokens.toLocaleString("en-US")} tokens`,
        },
        h("span", { class: "baton-usage-label" }, label),
        h("span", { class: "baton-usage-bar", "aria-hidden": "true" }, fill),
        h("span", { class: "baton-usage-value" }, compactNumber(tokens)),
      );
    });
    this.rows.replaceChildren(...rows);
  }
}

/**
 * [key, label, tokens] for every numeric breakdown entry: known keys first, then the rest;
 * each labelled as `labels` (the server's) says, else by its key.
 */
export function categories(
  breakdown: { [key: string]: unknown },
  labels: { [key: string]: string } = {},
): [string, string, number][] {
  const out: [string, string, number][] = [];
  const known = new Set(KNOWN);
  const extra = Object.keys(breakdown)
    .filter((key) => !known.has(key))
    .sort();
  for (const key of [...KNOWN, ...extra]) {
    const value = breakdown[key];
    if (typeof value === "number" && Number.isFinite(value)) out.push([key, labels[key] ?? titleCase(key), value]);
  }
  // Free space last, whatever else there is.
  const free = out.findIndex(([key]) => key === "free");
  if (free >= 0) out.push(...out.splice(free, 1));
  return out;
}

function titleCase(key: string): string {
  const words = key.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}
