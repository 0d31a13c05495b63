// A unified diff (the server's, of an edit) as lines coloured by the theme's diff colours:
// added and removed lines keep their +/- sign, so the change reads without colour too.
import { h } from "./dom";

export type DiffLineKind = "add" | "del" | "hunk" | "meta" | "context" | "note";

/** What a diff line is, by its first characters. */
export function diffLineKind(line: string): DiffLineKind {
  if (line.startsWith("+++ ") || line.startsWith("--- ") || line.startsWith("diff ") || line.startsWith("index ")) return "meta";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("\\")) return "note";
  return "context";
}

/** The lines added and removed. */
export function diffCounts(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diffLines(diff)) {
    const kind = diffLineKind(line);
    if (kind === "add") added += 1;
    else if (kind === "del") removed += 1;
  }
  return { added, removed };
}

function diffLines(diff: string): string[] {
  const lines = diff.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

const LABELS: { [kind in DiffLineKind]?: string } = { add: "added", del: "removed" };

/** The diff as a <pre> of one element per line (a screen reader hears added / removed). */
export function diffElement(diff: string, label = "Changes"): HTMLElement {
  const { added, removed } = diffCounts(diff);
  const pre = h("pre", { class: "baton-diff", "aria-label": `${label}: ${added} lines added, ${removed} removed`, tabindex: "0" });
  for (const line of diffLines(diff)) {
    const kind = diffLineKind(line);
    const said = LABELS[kind];
    pre.appendChild(
      h(
        "div",
        { class: `baton-diff-line baton-diff-${kind}` },
        said ? h("span", { class: "baton-visually-hidden" }, `${said}: `) : null,
        line === "" ? " " : line,
      ),
    );
  }
  return pre;
}
