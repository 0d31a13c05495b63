/** The status-bar meter's text, colour and tooltip, from a Usage (pure: no vscode import). */
import type { Usage } from "./protocol";

/** 124_300 -> "124K", 1_000_000 -> "1M", 950 -> "950". */
export function formatTokens(tokens: number): string {
  const n = Math.max(0, Math.round(tokens));
  // 999_600 is 1M, not "1000K": a figure is shown in the unit it rounds to
  if (n >= 999_500) {
    const m = n / 1_000_000;
    return `${trim(m >= 10 ? m.toFixed(0) : m.toFixed(1))}M`;
  }
  if (n >= 1_000) {
    const k = n / 1_000;
    return `${trim(k >= 100 ? k.toFixed(0) : k.toFixed(1))}K`;
  }
  return String(n);
}

function trim(figure: string): string {
  return figure.endsWith(".0") ? figure.slice(0, -2) : figure;
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
  const lines = [
    `**Baton: ${escapeMarkdown(title)}**`,
    "",
    `${formatTokens(usage.usedTokens)} of ${formatTokens(usage.contextWindow)} tokens (${Math.round(usage.percentUsed)}%), model \`${usage.model}\``,
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

/** Escapes Markdown's punctuation so a session title shows as typed. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>$]/g, (c) => `\\${c}`);
}
