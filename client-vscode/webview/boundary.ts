// The compaction boundary as the view shows it: the summary folded with the files restored
// after it and its Undo, and each restored file (an attachment message) folded on its own.
import { markdownElement } from "./blocks";
import { button, collapsed, folded, h } from "./dom";
import { droppedList } from "./dropped";
import type { Message } from "./wire";

/**
 * For each summary (by message id), the files its compaction restored: the attachments that
 * carry its boundary id, or without ids, those after it up to the next summary. A file the
 * editor attached to a prompt (its attachment has a `kind`) is no compaction's.
 */
export function restoredBySummary(messages: readonly Message[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const byBoundary = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const m of messages) {
    if (m.kind === "summary") {
      current = [];
      out.set(m.id, current);
      if (m.boundaryId) byBoundary.set(m.boundaryId, current);
    } else if (m.kind === "attachment" && m.attachment?.kind === undefined) {
      const owner = m.boundaryId ? byBoundary.get(m.boundaryId) : current;
      if (m.attachment) owner?.push(m.attachment.path); // a note names no file
    }
  }
  return out;
}

/** An attachment's text: the heading line the model reads (`<label>: <path>`) is left out
 * when the server names the file in `attachment`, which the view shows instead. */
function attachmentText(message: Message): string {
  const text = message.content.map((b) => (b.type === "text" ? b.text : "")).join("\n");
  return message.attachment ? text.slice(text.indexOf("\n") + 1) : text;
}

/** Where a summary sits among the conversation's messages: what its title says it replaced. */
export type SummaryPlace = "earlier" | "later" | "middle";

export const SUMMARY_TITLES: { [place in SummaryPlace]: string } = {
  earlier: "Earlier conversation summarized",
  later: "Later conversation summarized",
  middle: "Part of the conversation summarized",
};

/** How many messages a summary replaced, as its `dropped` lines say ("29 messages summarized"). */
export function summarizedCount(message: Message): number | undefined {
  for (const line of message.dropped ?? []) {
    const m = /^([\d,]+) messages? summarized$/.exec(line);
    if (m?.[1]) return Number(m[1].replaceAll(",", ""));
  }
  return undefined;
}

/**
 * A summary's title: what it replaced. A part between two stretches of conversation is named
 * by the positions its messages had in the view ("Messages 12-40 summarized"), `row` being
 * the summary's own index in the view, where the first of them stood; without the count, a part.
 */
export function summaryTitle(message: Message, place: SummaryPlace, row?: number): string {
  const count = summarizedCount(message);
  if (place !== "middle" || row === undefined || !count) return SUMMARY_TITLES[place];
  const first = row + 1;
  return count === 1 ? `Message ${first} summarized` : `Messages ${first}-${first + count - 1} summarized`;
}

/** For each summary (by id): earlier (no conversation before it), later (none after), or a part between. */
export function summaryPlaces(messages: readonly Message[]): Map<string, SummaryPlace> {
  const out = new Map<string, SummaryPlace>();
  const said = (m: Message): boolean => (m.kind ?? "message") === "message";
  let before = false;
  const pending: string[] = [];
  for (const m of messages) {
    if (m.kind === "summary") {
      out.set(m.id, before ? "later" : "earlier");
      if (before) pending.push(m.id);
    } else if (said(m)) {
      for (const id of pending.splice(0)) out.set(id, "middle"); // conversation on both sides
      before = true;
    }
  }
  return out;
}

/** The summary's body: folded Markdown, its restored files and what it dropped; under it
 * the messages it replaced (folded, read when opened); Undo (see below for when). */
export function summaryBody(
  message: Message,
  files: readonly string[],
  last: boolean,
  undo: ((boundaryId: string | undefined) => void) | null, // null: read-only, no Undo
  place: SummaryPlace = "earlier",
  row?: number, // the summary's index in the view
  replaced: HTMLElement | null = null, // what the compaction replaced, read when opened
): HTMLElement {
  // The summary body comes wrapped in <summary> tags for the model; here they are noise.
  // A summary the API wrote (`summarizer: "server"`) is one compaction block.
  const text = message.content
    .map((b) => (b.type === "text" ? b.text : b.type === "compaction" ? (b.content ?? "") : ""))
    .join("\n\n")
    .replace(/^[ \t]*<\/?summary>[ \t]*$/gm, "");
  const label =
    files.length === 0 ? "" : files.length === 1 ? " · 1 file restored" : ` · ${files.length} files restored`;
  const list = files.length
    ? h(
        "div",
        { class: "baton-restored" },
        h("div", { class: "baton-restored-title" }, "Restored files"),
        h("ul", {}, ...files.map((f) => h("li", { title: f }, h("code", {}, basename(f))))),
      )
    : null;
  const details = collapsed(
    "baton-summary",
    [h("span", {}, summaryTitle(message, place, row)), label ? h("span", { class: "baton-meta" }, label) : null],
    markdownElement(text),
    list,
    droppedList(message),
  );
  // Without a boundary id the host undoes the last compaction, so only the last summary offers it.
  const boundaryId = message.boundaryId ?? undefined;
  const undoButton =
    undo && (boundaryId !== undefined || last)
      ? button("Undo", () => undo(boundaryId), {
          class: "baton-undo secondary",
          title: "Undo this compaction: bring back the summarized messages",
        })
      : null;
  return h(
    "div",
    { class: "baton-message-body" },
    details,
    replaced,
    undoButton ? h("div", { class: "baton-summary-actions" }, undoButton) : null,
  );
}

/** A restored file, folded: its label, name and folder, the content when opened; an
 * attachment that names no file (the note after the API's own summary) under "Note". */
export function attachmentBody(message: Message): HTMLElement {
  const file = message.attachment;
  const title = file
    ? [
        h("span", { class: "baton-tool-label" }, file.label),
        " ",
        h("code", { title: file.path }, basename(file.path)),
        h("span", { class: "baton-meta" }, ` ${dirname(file.path)}`),
      ]
    : [h("span", { class: "baton-tool-label" }, "Note")];
  return h(
    "div",
    { class: "baton-message-body" },
    folded("baton-attachment", title, () => [markdownElement(attachmentText(message))]),
  );
}

function dirname(path: string): string {
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  return cut > 0 ? path.slice(0, cut) : "";
}

function basename(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}
