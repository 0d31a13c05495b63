/** The status-bar meter's text, colour and tooltip, from a Usage (pure: no vscode import). */
import type { Usage } from "./protocol";

/** 124_300 -> "124K", 1_000_000 -> "1M", 950 -> "950". */
export function formatTokens(tokens: number): string {
  const n = Math.max(0, Math.round(tokens));
  if (n >= 1_000_000) {
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

/** "62% 124K/200K". */
export function meterText(usage: Usage): string {
  return `${Math.round(usage.percentUsed)}% ${formatTokens(usage.usedTokens)}/${formatTokens(usage.contextWindow)}`;
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

const CATEGORIES: [keyof Usage["breakdown"], string][] = [
  ["system", "System prompt"],
  ["tools", "Tools"],
  ["messages", "Messages"],
  ["summary", "Summary"],
  ["attachments", "Attachments"],
  ["unattributed", "Unattributed (the original client's system prompt and tools)"],
  ["free", "Free"],
];

/** The tooltip as Markdown: breakdown table, auto-compact point, estimate flag, compactions. */
export function meterTooltip(usage: Usage, title: string, compactions: number): string {
  const lines = [
    `**Baton: ${escapeMarkdown(title)}**`,
    "",
    `${formatTokens(usage.usedTokens)} of ${formatTokens(usage.contextWindow)} tokens (${Math.round(usage.percentUsed)}%), model \`${usage.model}\``,
    "",
    "| | tokens |",
    "|---|---:|",
    ...CATEGORIES.filter(([key]) => key !== "unattributed" || usage.breakdown[key] > 0).map(
      ([key, label]) => `| ${label} | ${formatTokens(usage.breakdown[key])} |`,
    ),
    "",
    autoCompactLine(usage),
    "",
    usage.estimated ? "Estimated offline (tiktoken, calibrated)." : "Exact (from the API).",
    "",
    `Compactions: ${compactions}`,
    ...(usage.warnings ?? []).flatMap((warning) => ["", `$(warning) ${escapeMarkdown(warning)}`]),
  ];
  return lines.join("\n");
}

function autoCompactLine(usage: Usage): string {
  if (!usage.autoCompactEnabled) {
    return "Auto-compact is off.";
  }
  const at = `auto-compact at ${formatTokens(usage.autoCompactThreshold)} (${Math.round(usage.percentLeft)}% left)`;
  return usage.autoCompactPaused ? `${capitalize(at)}; paused after repeated failures.` : `${capitalize(at)}.`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Escapes Markdown's punctuation so a session title shows as typed. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>$]/g, (c) => `\\${c}`);
}
