/** The status-bar meter's text, colour and tooltip, from a Usage (pure: no vscode import). */
import type { Usage } from "./protocol";

/**
 * 124_300 -> "124K", 1_000_000 -> "1M", 950 -> "950": one decimal under 100K and under 10M,
 * rounded half up (9_950 is "10K", never "9.9K"), in the unit the figure rounds to (999_600
 * is "1M", not "1000K").
 */
export function formatTokens(tokens: number): string {
  const n = Math.max(0, Math.round(tokens));
  if (n < 1_000) return String(n);
  return inUnit(n, 1_000, 100, "K") ?? inUnit(n, 1_000_000, 10, "M") ?? `${Math.round(n / 1_000_000)}M`;
}

/**
 * `n` in `unit`s with one decimal below `whole` of them and none from it, or undefined when
 * it rounds to 1000 units or more. Rounded on whole numbers: 9.95 as a float is 9.9499..., and
 * toFixed(1) would cut it to 9.9.
 */
function inUnit(n: number, unit: number, whole: number, suffix: string): string | undefined {
  const tenths = Math.floor((n * 10 + unit / 2) / unit);
  if (tenths < whole * 10) return `${tenths / 10}${suffix}`;
  const units = Math.floor((n + unit / 2) / unit);
  return units < 1_000 ? `${units}${suffix}` : undefined;
}

/** "62% 124K/200K", as the server words it (`Usage.text.meter`). */
export function meterText(usage: Usage): string {
  return usage.text.meter;
}

/** The theme colour id for the item's background, or undefined for the default. */
export function meterBackground(usage: Usage): string | undefined {
  switch (usage.state) {
    case "warning":
      return "statusBarItem.warningBackground";
    case "error":
    case "blocking":
      return "statusBarItem.errorBackground";
    default:
      return undefined;
  }
}

const CATEGORIES: (keyof Usage["breakdown"])[] = ["system", "tools", "messages", "summary", "attachments", "unattributed", "free"];

/**
 * The tooltip as Markdown: breakdown table, auto-compact point, where the figure comes from
 * (estimated or the API's), compactions. Every sentence is the server's (`Usage.text`).
 */
export function meterTooltip(usage: Usage, title: string, compactions: number): string {
  const label = (key: string): string => usage.text.labels[key] ?? key;
  const rough = usage.estimated ? "~" : ""; // as the meter marks an estimate
  const lines = [
    `**Baton: ${escapeMarkdown(title)}**`,
    "",
    `${rough}${formatTokens(usage.usedTokens)} of ${formatTokens(usage.contextWindow)} tokens (${Math.round(percentOfWindow(usage))}%), model \`${usage.model}\``,
    "",
    "| | tokens |",
    "|---|---:|",
    ...CATEGORIES.filter((key) => key !== "unattributed" || usage.breakdown[key] > 0).map(
      (key) => `| ${label(key)} | ${formatTokens(usage.breakdown[key])} |`,
    ),
    "",
    usage.text.autoCompact,
    "",
    usage.text.basis,
    "",
    `Compactions: ${compactions}`,
    ...(usage.warnings ?? []).flatMap((warning) => ["", `$(warning) ${escapeMarkdown(warning)}`]),
  ];
  return lines.join("\n");
}

/** The share of the window used, past 100 when the context is (`percentUsed` stops at 100). */
export function percentOfWindow(usage: Pick<Usage, "usedTokens" | "contextWindow" | "percentUsed">): number {
  const { usedTokens, contextWindow } = usage;
  return usedTokens > contextWindow && contextWindow > 0 ? (100 * usedTokens) / contextWindow : usage.percentUsed;
}

/** Escapes Markdown's punctuation so a session title shows as typed. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>$]/g, (c) => `\\${c}`);
}
