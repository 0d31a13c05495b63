// What a compaction dropped, under its summary: the lines the server wrote for it
// (`Message.dropped`: messages summarized, tool results cleared, files not restored, facts
// only the ledger keeps or lost), folded with the summary.
import { h } from "./dom";
import type { Message } from "./wire";

export function droppedList(message: Message): HTMLElement | null {
  const lines = message.dropped ?? [];
  if (lines.length === 0) return null;
  return h(
    "div",
    { class: "baton-dropped" },
    h("div", { class: "baton-restored-title" }, "What it dropped"),
    h("ul", {}, ...lines.map((line) => h("li", {}, line))),
  );
}
