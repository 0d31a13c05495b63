// A tool call of the model as one line (the server's title, status and summary), opening on
// the call's input, its result (folded when long) and, for an edit, the diff. The titles,
// summaries and diffs are the server's (ToolCallInfo): the view only shows them.
import { append, folded, h } from "./dom";
import { diffElement } from "./diff";
import { lineCount, longText } from "./longText";
import { codeBlock } from "./markdown";
import type { ToolCallInfo, ToolMessage, ToolResultBlock, ToolUseBlock } from "./wire";

/** A result longer than this many lines opens folded to its first lines. */
export const LONG_RESULT_LINES = 20;

const STATUS: { [status in ToolCallInfo["status"]]: { glyph: string; word: string } } = {
  pending: { glyph: "○", word: "waiting" },
  running: { glyph: "◌", word: "running" },
  done: { glyph: "✓", word: "done" },
  denied: { glyph: "⊘", word: "denied" },
  failed: { glyph: "✗", word: "failed" },
};

/** A title with its `code` spans as <code> ("Search `parse_date`"). */
export function titleElement(title: string, className = "baton-toolcall-title"): HTMLElement {
  const el = h("span", { class: className });
  title.split("`").forEach((part, i) => append(el, i % 2 === 1 ? h("code", {}, part) : part));
  return el;
}

export function toolCallLine(info: ToolCallInfo, use: ToolUseBlock, result: ToolResultBlock | undefined): HTMLElement {
  const status = STATUS[info.status] ?? STATUS.done;
  const summary = [
    h("span", { class: "baton-toolcall-status", "aria-hidden": "true" }, status.glyph),
    titleElement(info.title),
    info.summary ? h("span", { class: "baton-toolcall-summary" }, `(${info.summary})`) : null,
    info.status !== "done" ? h("span", { class: "baton-toolcall-word" }, status.word) : h("span", { class: "baton-visually-hidden" }, status.word),
  ];
  const details = folded(`baton-tool baton-toolcall status-${info.status}`, summary, () => body(info, use, result));
  details.dataset.toolUseId = info.toolUseId;
  details.dataset.status = info.status;
  return details;
}

function body(info: ToolCallInfo, use: ToolUseBlock, result: ToolResultBlock | undefined): HTMLElement[] {
  const parts: HTMLElement[] = [];
  if (info.diff) parts.push(h("div", { class: "baton-tool-body baton-toolcall-diff" }, diffElement(info.diff, info.title)));
  parts.push(
    h("div", { class: "baton-tool-body baton-toolcall-input" }, h("div", { class: "baton-tool-label" }, "Input"), code(JSON.stringify(use.input ?? {}, null, 2), "json")),
  );
  parts.push(h("div", { class: "baton-tool-body baton-toolcall-result" }, h("div", { class: "baton-tool-label" }, result?.is_error ? "Error" : "Result"), resultElement(result)));
  return parts;
}

/** Terminal escape codes (colours, cursor moves, titles) in a tool's output: never shown. */
const ESCAPES = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]/g;
export function stripEscapes(text: string): string {
  return text.includes("\x1b") ? text.replace(ESCAPES, "") : text;
}

function resultElement(result: ToolResultBlock | undefined): HTMLElement {
  if (result === undefined) return h("div", { class: "baton-muted" }, "(no result yet)");
  const text = stripEscapes(resultText(result));
  if (text === "") return h("div", { class: "baton-muted" }, "(no output)");
  const lines = lineCount(text);
  if (lines <= LONG_RESULT_LINES) return code(text);
  let cut = -1; // the end of the head's last line
  for (let i = 0; i < LONG_RESULT_LINES; i++) cut = text.indexOf("\n", cut + 1);
  const head = text.slice(0, cut);
  const wrap = h("div", { class: "baton-toolcall-long" }, code(head));
  const more = folded("baton-toolcall-more", `Show all ${lines} lines`, () => [code(text)]);
  more.addEventListener("toggle", () => {
    const first = wrap.firstElementChild as HTMLElement | null;
    if (first) first.hidden = more.open;
  });
  wrap.appendChild(more);
  return wrap;
}

/** A result's text parts joined (images and other parts named). */
export function resultText(result: ToolResultBlock): string {
  if (typeof result.content === "string") return result.content;
  return (result.content ?? [])
    .map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : `[${String(part.type)}]`))
    .join("\n");
}

/** A block of code with its Copy button (a long one in part: longText.ts). */
function code(text: string, lang = ""): HTMLElement {
  return longText(text, "code", (part) => {
    const el = h("div", {});
    el.innerHTML = codeBlock(part, lang); // highlight.js output: escaped
    for (const pre of el.querySelectorAll("pre.baton-code")) {
      pre.prepend(h("button", { type: "button", class: "baton-copy secondary", "aria-label": "Copy code" }, "Copy"));
    }
    return el;
  });
}

/** Each call's tool name by its id (a result's line names the tool that was called). */
export function toolNames(messages: readonly ToolMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) for (const b of m.content) if (b.type === "tool_use") names.set(b.id, b.name);
  return names;
}

/** What the feed's blocks need to draw tool calls: the server's infos and the results, by call. */
export interface ToolContext {
  toolCalls: Map<string, ToolCallInfo>;
  toolResults: Map<string, ToolResultBlock>;
}

/**
 * `asked`: the diffs of the edits permission was asked for, by call. Until its result comes
 * a replace's line is not known to the server, whose diff then has unnumbered hunks (`@@ @@`);
 * the request's diff, of the whole file, is numbered, and is shown instead.
 */
export function toolContext(messages: readonly ToolMessage[], asked: ReadonlyMap<string, string> = new Map()): ToolContext {
  const toolCalls = new Map<string, ToolCallInfo>();
  const toolResults = new Map<string, ToolResultBlock>();
  for (const message of messages) {
    for (const info of message.toolCalls ?? []) {
      const diff = asked.get(info.toolUseId);
      const waiting = info.status === "pending" || info.status === "running";
      toolCalls.set(info.toolUseId, diff !== undefined && waiting && info.diff !== undefined ? { ...info, diff } : info);
    }
    for (const block of message.content) if (block.type === "tool_result") toolResults.set(block.tool_use_id, block);
  }
  return { toolCalls, toolResults };
}

/** What a message's calls are drawn from now, their lines and results (it is drawn again when one changes). */
export function callsFor(message: ToolMessage, ctx: ToolContext): unknown[] {
  return message.content.flatMap((b) =>
    b.type === "tool_use" && ctx.toolCalls.has(b.id) ? [ctx.toolResults.get(b.id) ?? null, ctx.toolCalls.get(b.id)?.diff ?? null] : [],
  );
}
