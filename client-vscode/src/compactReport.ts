/** What a compaction did or would do, or its undo, in words: notifications and the preview document. */
import type { CompactResult, Message, Usage } from "./protocol";
import { formatTokens, percentOfWindow } from "./meterText";

const DIRECTION_WORDS: Record<string, string> = {
  all: "the whole conversation",
  up_to: "up to the message",
  from: "from the message on",
  range: "the selected messages",
};

/** One line for a notification after a compaction. */
export function compactSummaryLine(result: CompactResult): string {
  const summarized = result.summarizedMessageIds.length;
  const restored = result.restoredFiles.length;
  return (
    `Baton: compacted ${DIRECTION_WORDS[result.direction] ?? result.direction}: ` +
    `${formatTokens(result.preTokens)} -> ${formatTokens(result.postTokens)} tokens (estimated), ` +
    `${plural(summarized, "message")} summarized` +
    (restored > 0 ? `, ${plural(restored, "file")} restored` : "") +
    "."
  );
}

/** The notification after an undo: how full the context is now, "~" first when estimated, as the meter says. */
export function undoneLine(usage: Usage): string {
  const rough = usage.estimated ? "~" : "";
  return `Baton: undone, the messages are back in the view; the context is ${rough}${Math.round(percentOfWindow(usage))}% full.`;
}

/** The preview of a dry run as Markdown: what is summarized, kept and restored, with figures. */
export function previewReport(result: CompactResult, title: string, view: readonly Message[]): string {
  const byId = new Map(view.map((message) => [message.id, message]));
  const row = (id: string): string => {
    const message = byId.get(id);
    if (message === undefined) {
      return `| \`${id}\` | | | |`;
    }
    return `| \`${id}\` | ${message.role}${message.kind !== "message" ? ` (${message.kind})` : ""} | ${formatTokens(message.tokens)} | ${cell(firstText(message))} |`;
  };
  const tokensOf = (ids: readonly string[]): number => ids.reduce((sum, id) => sum + (byId.get(id)?.tokens ?? 0), 0);
  const lines = [
    `# Compaction preview: ${title}`,
    "",
    `Direction: ${DIRECTION_WORDS[result.direction] ?? result.direction}; summarizer: ${result.summarizer}.`,
    "",
    `Context now: ${formatTokens(result.preTokens)} tokens; after compaction: ${formatTokens(result.postTokens)} tokens (estimated until the next reply's usage).`,
    ...(result.warnings ?? []).flatMap((warning) => ["", `Note: ${warning.replace(/\.$/, "")}.`]),
    "",
    `## Summarized (${plural(result.summarizedMessageIds.length, "message")}, ${formatTokens(tokensOf(result.summarizedMessageIds))} tokens)`,
    "",
    ...table(result.summarizedMessageIds.map(row)),
    "",
    `## Kept verbatim (${plural(result.keptMessageIds.length, "message")}, ${formatTokens(tokensOf(result.keptMessageIds))} tokens)`,
    "",
    ...table(result.keptMessageIds.map(row)),
    "",
    `## Restored files (${result.restoredFiles.length})`,
    "",
    ...(result.restoredFiles.length === 0
      ? ["None."]
      : result.restoredFiles.map((file) => `- ${file.uri}: ${formatTokens(file.tokens)} tokens${file.truncated ? " (truncated)" : ""}`)),
    "",
    "Nothing has changed: this is a dry run. Baton: Compact Conversation does it.",
    "",
  ];
  return lines.join("\n");
}

function table(rows: string[]): string[] {
  return rows.length === 0 ? ["None."] : ["| message | role | tokens | starts with |", "|---|---|---:|---|", ...rows];
}

function firstText(message: Message): string {
  for (const block of message.content) {
    const b = block as Record<string, unknown>;
    if (b.type === "text" && typeof b.text === "string" && b.text.trim() !== "") {
      return b.text;
    }
    if (b.type === "tool_use") return `[tool ${String(b.name ?? "")}]`;
    if (b.type === "tool_result") return "[tool result]";
  }
  return "";
}

function cell(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const short = flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
  return short.replace(/\|/g, "\\|");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
