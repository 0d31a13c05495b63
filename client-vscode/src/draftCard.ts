/**
 * A compaction draft in words and as the card beside its editor (Apply / Regenerate /
 * Discard, the sizes, the cost, what it drops). Pure: no vscode import, so it is unit-tested.
 */
import { compactSummaryLine } from "./compactReport";
import { formatTokens } from "./meterText";
import type { CompactDraft, CompactResult } from "./protocol";

/** The buttons' messages from the card's webview to the extension. */
export type CardAction = "apply" | "regenerate" | "discard";

export function isCardAction(value: unknown): value is CardAction {
  return value === "apply" || value === "regenerate" || value === "discard";
}

/**
 * Whether `baton.previewBeforeCompact` asks for a draft first: `true` alone, as the server
 * reads a switch (a word such as "no" in settings.json is no yes: the server warns and keeps
 * false, so the commands do not ask either).
 */
export function previewFirstSetting(value: unknown): boolean {
  return value === true;
}

/**
 * The notification after a compaction: what it did, then what it dropped. `elsewhere`: the
 * title of the conversation compacted when another one is on show by then.
 */
export function afterCompactionLine(result: CompactResult, elsewhere?: string): string {
  const went = result.dropped?.text;
  let line = compactSummaryLine(result);
  if (elsewhere !== undefined) line = line.replace(/^Baton: compacted /, `Baton: compacted “${elsewhere}”, `);
  return went ? `${line} ${went}.` : line;
}

/**
 * What Apply or Regenerate of a draft the server no longer has says (it answered
 * draft_not_found): a session keeps one draft, so another preview of it replaced this one,
 * or another window or client applied or discarded it. `edited`: the user's text is kept.
 */
export function goneDraftLine(edited: boolean): string {
  const kept = edited ? " Your edited summary stays in its editor, to copy from." : "";
  return (
    "Baton: this compaction draft is no longer there: another preview of the session replaced it, " +
    `or it was applied or discarded elsewhere. Nothing was compacted; run Preview Compaction again for a new draft.${kept}`
  );
}

/**
 * What the editor says once a change of baton.dataDir closed what it had open of the folder
 * before (the server no longer reads it): `documents` session documents and the compaction
 * draft, if one was open (its conversation's title, and whether its summary was edited).
 * Undefined when nothing was open.
 */
export function oldDataDirLine(documents: number, draft: { title: string; edited: boolean } | undefined): string | undefined {
  const closed: string[] = [];
  if (draft !== undefined) closed.push(`the compaction draft of “${draft.title}”`);
  if (documents > 0) closed.push(documents === 1 ? "1 conversation document" : `${documents} conversation documents`);
  if (closed.length === 0) return undefined;
  let line = `Baton: baton.dataDir changed, so ${closed.join(" and ")} of the data dir used before closed: the server no longer reads that folder.`;
  if (draft !== undefined) {
    line += " Nothing was compacted; the draft stays in that folder, to preview again once the setting is back.";
    if (draft.edited) line += " Your edited summary stays in its editor, to copy from.";
  }
  return line;
}

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c] ?? c);
}

/** How the editor's text stands against the draft: edited at all, and measured as it is. */
export interface EditState {
  edited: boolean;
  measured: boolean;
}

/** The card's whole page: a strict CSP (only its own nonce'd script), the figures, buttons. */
export function draftCardHtml(draft: CompactDraft, nonce: string, state: EditState, cspSource: string): string {
  const { edited, measured } = state;
  const e = escapeHtml;
  const cost = draft.cost;
  const dropped = (draft.dropped?.lines ?? []).map((l) => `<li>${e(l)}</li>`).join("");
  const warnings = draft.warnings.map((w) => `<p class="warning">${e(w)}</p>`).join("");
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'unsafe-inline'; script-src 'nonce-${nonce}';">
<style>body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);padding:0 12px}
.figures{font-size:1.3em;margin:8px 0}.warning{color:var(--vscode-editorWarning-foreground)}
button{margin:4px 6px 4px 0;padding:4px 12px;color:var(--vscode-button-foreground);background:var(--vscode-button-background);border:none;cursor:pointer}
button.secondary{color:var(--vscode-button-secondaryForeground);background:var(--vscode-button-secondaryBackground)}</style>
</head><body>
<h2>Compaction draft</h2>
<p class="figures" data-draft-id="${e(draft.draftId)}" data-post-tokens="${draft.postTokens}" data-measured="${measured}">${e(formatTokens(draft.preTokens))} → <b class="baton-draft-post">~${e(formatTokens(draft.postTokens))}</b> tokens</p>
<p>${e(draft.direction)} · ${e(draft.summarizer)} summary · ${draft.summarizedMessageIds.length} messages summarized, ${draft.keptMessageIds.length} kept${draft.pinnedMessageIds.length ? ` (${draft.pinnedMessageIds.length} pinned)` : ""}, ${draft.restoredFiles.length} files restored</p>
<p>${edited ? `<b>The summary has been edited:</b> Apply commits your text${measured ? " (these are its figures)" : " (measuring it again…)"}.` : "Edit the summary in its editor tab; Apply commits what it holds then."}</p>
<div><button id="apply">Apply</button><button id="regenerate" class="secondary">Regenerate…</button><button id="discard" class="secondary">Discard</button></div>
<h3>Cost</h3><p class="baton-draft-cost">${e(cost.text)}</p>
<h3>What it drops</h3><ul class="baton-draft-dropped">${dropped}</ul>
${warnings}
<script nonce="${nonce}">const vscode = acquireVsCodeApi();
for (const id of ["apply", "regenerate", "discard"]) document.getElementById(id).addEventListener("click", () => vscode.postMessage({ action: id }));</script>
</body></html>`;
}
