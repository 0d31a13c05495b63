/**
 * What a send attaches from the editor, as chips the panel shows and the user can remove:
 * the active file (its visible range when large), the selection, and files picked with `@`
 * or dropped on the panel. Pure (no vscode import): the editor side supplies snapshots.
 */
import type { LineRange } from "./protocol";
import type { SendAttachment } from "./toolWire";
import type { AttachmentChip, FileItem } from "./webviewMessages";

/** A file longer than this attaches its visible range rather than all of it. */
export const LARGE_FILE_LINES = 400;
/** The most files the `@` picker lists at once. */
export const PICKER_LIMIT = 50;

/** The active text editor as the attachments need it. */
export interface EditorSnapshot {
  /** absolute file path */
  path: string;
  /** the path as the user reads it (workspace-relative) */
  name: string;
  languageId: string;
  lineCount: number;
  /** the first visible range, 1-based inclusive */
  visible?: LineRange;
  /** the selection when it is not empty, 1-based inclusive */
  selection?: LineRange;
  /** the text of the lines in `range`, or the whole text */
  text(range?: LineRange): string;
}

/** An open document's text, for a picked file that is open (unsaved edits included). */
export type OpenText = (path: string) => { text: string; languageId: string } | undefined;

interface Picked {
  path: string;
  name: string;
}

export class AttachmentSet {
  private picked: Picked[] = [];
  /** Keys of the automatic chips the user removed; they stay off while the editor shows the same. */
  private dismissed = new Set<string>();

  /** The chips to show for the editor as it is now. */
  chips(editor: EditorSnapshot | undefined): AttachmentChip[] {
    this.forgetStale(editor);
    const chips: AttachmentChip[] = [];
    if (editor !== undefined) {
      const active = activeChip(editor);
      if (!this.dismissed.has(active.id)) chips.push(active);
      const selection = selectionChip(editor);
      if (selection !== undefined && !this.dismissed.has(selection.id)) chips.push(selection);
    }
    for (const file of this.picked) {
      if (editor !== undefined && file.path === editor.path && chips.some((c) => c.kind === "file" && c.auto)) continue;
      chips.push({ id: pickedId(file.path), kind: "file", label: basename(file.name), detail: file.name, path: file.path, auto: false });
    }
    return chips;
  }

  /** Removes a chip (an automatic one stays off until the editor shows something else). */
  remove(id: string): void {
    if (id.startsWith("picked:")) this.picked = this.picked.filter((p) => pickedId(p.path) !== id);
    else this.dismissed.add(id);
  }

  /** Adds a file (from the picker, a drop or a paste); false when it is already there. */
  pick(path: string, name: string): boolean {
    if (this.picked.some((p) => p.path === path)) return false;
    this.picked.push({ path, name });
    return true;
  }

  /** The attachments a send carries now: the chips on show, with the editor's text. */
  build(editor: EditorSnapshot | undefined, openText: OpenText): SendAttachment[] {
    const out: SendAttachment[] = [];
    for (const chip of this.chips(editor)) {
      if (chip.auto && editor !== undefined) {
        const range = chip.range;
        const attachment: SendAttachment = { kind: chip.kind, path: editor.path, text: editor.text(range), languageId: editor.languageId };
        if (range !== undefined) attachment.range = range;
        out.push(attachment);
        continue;
      }
      const open = openText(chip.path);
      out.push(open === undefined ? { kind: "file", path: chip.path } : { kind: "file", path: chip.path, text: open.text, languageId: open.languageId });
    }
    return out;
  }

  /** After a send: the picked files went with it; the editor's chips stay and follow the editor. */
  sent(): void {
    this.picked = [];
  }

  private forgetStale(editor: EditorSnapshot | undefined): void {
    const live = new Set<string>();
    if (editor !== undefined) {
      live.add(activeChip(editor).id);
      const selection = selectionChip(editor);
      if (selection !== undefined) live.add(selection.id);
    }
    for (const key of this.dismissed) if (!live.has(key)) this.dismissed.delete(key);
  }
}

function activeChip(editor: EditorSnapshot): AttachmentChip {
  const name = basename(editor.name);
  if (editor.lineCount > LARGE_FILE_LINES && editor.visible !== undefined) {
    const range = editor.visible;
    const lines = `${range.startLine}-${range.endLine}`;
    return {
      id: `active:${editor.path}`, // the same chip while the file is active, wherever it scrolls
      kind: "file",
      label: `${name}:${lines}`,
      detail: `${editor.name}, the visible lines ${lines} of ${editor.lineCount}`,
      path: editor.path,
      range,
      auto: true,
    };
  }
  return { id: `active:${editor.path}`, kind: "file", label: name, detail: `${editor.name}, the active file`, path: editor.path, auto: true };
}

function selectionChip(editor: EditorSnapshot): AttachmentChip | undefined {
  const range = editor.selection;
  if (range === undefined) return undefined;
  const lines = range.startLine === range.endLine ? `${range.startLine}` : `${range.startLine}-${range.endLine}`;
  return {
    id: `selection:${editor.path}:${range.startLine}-${range.endLine}`,
    kind: "selection",
    label: `${basename(editor.name)}:${lines}`,
    detail: `the selection in ${editor.name}, lines ${lines}`,
    path: editor.path,
    range,
    auto: true,
  };
}

function pickedId(path: string): string {
  return `picked:${path}`;
}

function basename(name: string): string {
  return name.split(/[\\/]/).pop() ?? name;
}

/**
 * The picker's rows for `query`: open editors first, then names that contain the query
 * (case-insensitive), the ones whose file name starts with it before the rest.
 */
export function rankFiles(query: string, items: readonly FileItem[], limit = PICKER_LIMIT): FileItem[] {
  const q = query.trim().toLowerCase();
  const seen = new Set<string>();
  const scored: { item: FileItem; score: number; index: number }[] = [];
  items.forEach((item, index) => {
    if (seen.has(item.path)) return;
    seen.add(item.path);
    const name = item.name.toLowerCase();
    const base = basename(name);
    if (q !== "" && !name.includes(q)) return;
    const score = (item.open ? 0 : 4) + (q === "" || base.startsWith(q) ? 0 : base.includes(q) ? 1 : 2);
    scored.push({ item, score, index });
  });
  scored.sort((a, b) => a.score - b.score || a.item.name.length - b.item.name.length || a.index - b.index);
  return scored.slice(0, limit).map((s) => s.item);
}
