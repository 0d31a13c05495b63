// The context-usage chart: one bar per category of Usage.breakdown (the known ones in a
// fixed order, any other key after them), as a share of the context window.
import { compactNumber, h } from "./dom";
import type { Usage } from "./wire";

const KNOWN: readonly [key: string, label: string][] = [
  ["system", "System"],
  ["tools", "Tools"],
  ["messages", "Messages"],
  ["summary", "Summary"],
  ["attachments", "Restored files"],
  ["unattributed", "Unattributed"],
  ["free", "Free"],
];

export class UsageChart {
  readonly el: HTMLDetailsElement;
  private readonly title: HTMLElement;
  private readonly rows: HTMLElement;

  constructor() {
    this.title = h("span", { class: "baton-usage-title" });
    this.rows = h("div", { class: "baton-usage-rows", role: "list", "aria-label": "Context usage by category" });
    this.el = h("details", { class: "baton-usage", open: true }, h("summary", {}, this.title), this.rows);
    this.el.hidden = true;
  }

  render(usage: Usage | null): void {
    this.el.hidden = usage === null;
    if (usage === null) return;
    const window = Math.max(usage.contextWindow, 1);
    const estimated = usage.estimated ? " (estimated)" : "";
    this.title.textContent =
      `${Math.round(usage.percentUsed)}% used · ${compactNumber(usage.usedTokens)}/${compactNumber(usage.contextWindow)}` +
      `${estimated} · auto-compact at ${compactNumber(usage.autoCompactThreshold)}`;
    this.el.dataset.state = usage.state;
    const rows = categories(usage.breakdown as unknown as { [key: string]: unknown }).map(([key, label, tokens]) => {
      const fill = h("span", { class: `baton-usage-fill cat-${key}` });
      fill.style.width = `${Math.min(100, (100 * tokens) / window).toFixed(2)}%`; // CSSOM: allowed by the CSP
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

/** [key, label, tokens] for every numeric breakdown entry: known keys first, then the rest. */
export function categories(breakdown: { [key: string]: unknown }): [string, string, number][] {
  const out: [string, string, number][] = [];
  const known = new Set(KNOWN.map(([key]) => key));
  const extra = Object.keys(breakdown)
    .filter((key) => !known.has(key))
    .sort();
  for (const [key, label] of [...KNOWN, ...extra.map((key): [string, string] => [key, titleCase(key)])]) {
    const value = breakdown[key];
    if (typeof value === "number" && Number.isFinite(value)) out.push([key, label, value]);
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
