// The compaction boundary as the view shows it: the summary folded with the files restored
// after it and its Undo, and each restored file (an attachment message) folded on its own.
import { markdownElement } from "./blocks";
import { button, collapsed, folded, h } from "./dom";
import type { Message } from "./wire";

/** How the server heads an attachment's text (server/baton/core/compaction/retention/facts.py). */
const ATTACHMENT_KINDS: readonly [prefix: string, label: string][] = [
  ["Restored file: ", "Restored file"],
  ["Project instructions: ", "Project instructions"],
];

interface Attachment {
  label: string;
  path: string;
  body: string;
}

/**
 * For each summary (by message id), the files its compaction restored: the attachments that
 * carry its boundary id, or without ids, those after it up to the next summary.
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
    } else if (m.kind === "attachment") {
      const owner = m.boundaryId ? byBoundary.get(m.boundaryId) : current;
      owner?.push(attachmentOf(m).path);
    }
  }
  return out;
}

/** An attachment message: what it is, the path its first line names, and the rest. */
export function attachmentOf(message: Message): Attachment {
  const text = message.content.map((b) => (b.type === "text" ? b.text : "")).join("\n");
  const [first = "", ...rest] = text.split("\n");
  for (const [prefix, label] of ATTACHMENT_KINDS) {
    if (first.startsWith(prefix)) return { label, path: first.slice(prefix.length), body: rest.join("\n") };
  }
  return { label: "Attachment", path: first || "attachment", body: rest.join("\n") };
}

/** The summary's body: folded Markdown, its restored files, Undo (see below for when). */
export function summaryBody(
  message: Message,
  files: readonly string[],
  last: boolean,
  undo: ((boundaryId: string | undefined) => void) | null, // null: read-only, no Undo
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
    [h("span", {}, "Earlier conversation summarized"), label ? h("span", { class: "baton-meta" }, label) : null],
    markdownElement(text),
    list,
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
    undoButton ? h("div", { class: "baton-summary-actions" }, undoButton) : null,
  );
}

/** A restored file, folded: its name and folder, the content when opened. */
export function attachmentBody(message: Message): HTMLElement {
  const { label, path, body } = attachmentOf(message);
  return h(
    "div",
    { class: "baton-message-body" },
    folded(
      "baton-attachment",
      [
        h("span", { class: "baton-tool-label" }, label),
        " ",
        h("code", { title: path }, basename(path)),
        h("span", { class: "baton-meta" }, ` ${dirname(path)}`),
      ],
      () => [markdownElement(body)],
    ),
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
