// What the next send attaches, as chips above the input box (the host says which: the
// active file or its visible range, the selection, picked files), each with a remove
// button; `@` in the box opens a picker of the workspace's files (the host searches); a
// file dropped on the panel or pasted into the box attaches too.
import { button, h } from "./dom";
import type { AttachmentChip, FileItem } from "../src/webviewMessages";

export interface ChipHandlers {
  remove(id: string): void;
  findFiles(query: string): void;
  attachFile(path: string): void;
  attachUris(uris: string[]): void;
}

const URI_TYPES = ["application/vnd.code.uri-list", "text/uri-list"];
const QUERY_DELAY_MS = 80;

/** The `@query` just before the caret, or null. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const match = /(^|\s)@([^\s@]*)$/.exec(text.slice(0, caret));
  if (!match) return null;
  return { start: caret - match[2]!.length - 1, query: match[2]! };
}

/** The file URIs a drop or paste carries (VS Code's own list first, then the standard one). */
export function transferUris(data: DataTransfer | null): string[] {
  if (!data) return [];
  for (const type of URI_TYPES) {
    const text = data.getData(type);
    const uris = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
    if (uris.length > 0) return uris;
  }
  const plain = data.getData("text/plain").trim();
  return /^file:\/\/\S+$/.test(plain) ? [plain] : [];
}

export class ChipBar {
  readonly el = h("div", { class: "baton-chips", role: "list", "aria-label": "Attached to the next message" });
  readonly picker = h("div", { class: "baton-file-picker", role: "listbox", id: "baton-file-picker", "aria-label": "Attach a file" });
  private items: FileItem[] = [];
  private active = 0;
  private mention: { start: number; query: string } | null = null;
  private timer = 0;

  constructor(
    private readonly input: HTMLTextAreaElement,
    keyTarget: HTMLElement,
    private readonly handlers: ChipHandlers,
  ) {
    this.el.hidden = true;
    this.picker.hidden = true;
    input.addEventListener("input", () => this.follow());
    input.addEventListener("click", () => this.follow());
    input.addEventListener("blur", () => window.setTimeout(() => this.close(), 150));
    // capture, on the composer: the picker takes Enter before the box sends
    keyTarget.addEventListener("keydown", (event) => this.keydown(event), true);
    input.addEventListener("paste", (event) => {
      const uris = transferUris(event.clipboardData);
      if (uris.length === 0) return;
      event.preventDefault();
      this.handlers.attachUris(uris);
    });
  }

  /** Let `area` take dropped files. */
  acceptDrops(area: HTMLElement): void {
    area.addEventListener("dragover", (event) => {
      const types = [...(event.dataTransfer?.types ?? [])];
      if (!URI_TYPES.some((t) => types.includes(t))) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
    });
    area.addEventListener("drop", (event) => {
      const uris = transferUris(event.dataTransfer);
      if (uris.length === 0) return;
      event.preventDefault();
      this.handlers.attachUris(uris);
    });
  }

  render(chips: readonly AttachmentChip[]): void {
    this.el.replaceChildren(
      ...chips.map((chip) =>
        h(
          "span",
          { class: `baton-attach-chip kind-${chip.kind}${chip.auto ? " auto" : ""}`, role: "listitem", title: chip.detail, "data-chip-id": chip.id },
          h("span", { class: "baton-attach-icon", "aria-hidden": "true" }, chip.kind === "selection" ? "⌶" : "▤"),
          h("span", { class: "baton-attach-label" }, chip.label),
          button("×", () => this.handlers.remove(chip.id), { class: "baton-attach-remove", "aria-label": `Remove ${chip.label}`, title: "Do not attach" }),
        ),
      ),
    );
    this.el.hidden = chips.length === 0;
  }

  /** The host's rows for a query; stale ones (the query moved on) are dropped. */
  results(query: string, items: readonly FileItem[]): void {
    if (this.mention === null || this.mention.query !== query) return;
    this.items = [...items];
    this.active = 0;
    this.drawPicker();
  }

  private follow(): void {
    const mention = mentionAt(this.input.value, this.input.selectionStart ?? this.input.value.length);
    if (mention === null) return this.close();
    const changed = this.mention?.query !== mention.query;
    this.mention = mention;
    if (this.picker.hidden) {
      this.items = [];
      this.drawPicker();
    }
    if (changed) {
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => this.handlers.findFiles(mention.query), QUERY_DELAY_MS);
    }
  }

  private drawPicker(): void {
    this.picker.hidden = false;
    this.input.setAttribute("aria-controls", this.picker.id);
    this.input.setAttribute("aria-expanded", "true");
    if (this.items.length === 0) {
      this.picker.replaceChildren(h("div", { class: "baton-file-picker-empty" }, this.mention?.query ? "No file matches" : "Type to find a file"));
      return;
    }
    this.picker.replaceChildren(
      ...this.items.map((item, i) => {
        const row = h(
          "div",
          { class: "baton-file-picker-row", role: "option", id: `baton-pick-${i}`, "aria-selected": String(i === this.active), title: item.path },
          h("span", { class: "baton-file-picker-name" }, item.name.split(/[\\/]/).pop() ?? item.name),
          h("span", { class: "baton-file-picker-path" }, item.name),
          item.open ? h("span", { class: "baton-file-picker-open" }, "open") : null,
        );
        row.addEventListener("mousedown", (event) => {
          event.preventDefault(); // keep the focus in the box
          this.choose(i);
        });
        return row;
      }),
    );
    this.input.setAttribute("aria-activedescendant", `baton-pick-${this.active}`);
  }

  private keydown(event: KeyboardEvent): void {
    if (this.picker.hidden || event.target !== this.input) return;
    const move = (by: number): void => {
      event.preventDefault();
      event.stopPropagation();
      if (this.items.length === 0) return;
      this.active = (this.active + by + this.items.length) % this.items.length;
      this.drawPicker();
    };
    if (event.key === "ArrowDown") return move(1);
    if (event.key === "ArrowUp") return move(-1);
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      return this.close();
    }
    if ((event.key === "Enter" || event.key === "Tab") && !event.shiftKey && this.items.length > 0) {
      event.preventDefault();
      event.stopPropagation();
      this.choose(this.active);
    }
  }

  private choose(index: number): void {
    const item = this.items[index];
    const mention = this.mention;
    if (item === undefined || mention === null) return;
    // the `@query` goes from the box: the chip says what was attached
    const value = this.input.value;
    const end = mention.start + 1 + mention.query.length;
    this.input.value = value.slice(0, mention.start) + value.slice(end);
    this.input.setSelectionRange(mention.start, mention.start);
    this.close();
    this.input.dispatchEvent(new Event("input"));
    this.handlers.attachFile(item.path);
  }

  private close(): void {
    window.clearTimeout(this.timer);
    this.mention = null;
    this.items = [];
    this.picker.hidden = true;
    this.input.removeAttribute("aria-activedescendant");
    this.input.setAttribute("aria-expanded", "false");
  }
}
