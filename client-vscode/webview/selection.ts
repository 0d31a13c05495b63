// Which messages are selected: click selects one, shift-click (or shift+arrow) extends from
// the anchor to a range, a right-click outside the selection selects that message. Pure
// bookkeeping over the view's ids; the DOM wiring lives in main.ts.

export class Selection {
  private selected = new Set<string>();
  private anchor: string | null = null;

  has(id: string): boolean {
    return this.selected.has(id);
  }

  /** The selected ids in view order. */
  ordered(ids: readonly string[]): string[] {
    return ids.filter((id) => this.selected.has(id));
  }

  /** A click on `id`: select just it, or with `extend` the range from the anchor to it. */
  click(id: string, ids: readonly string[], extend: boolean): void {
    if (extend && this.anchor !== null && ids.includes(this.anchor)) {
      const a = ids.indexOf(this.anchor);
      const b = ids.indexOf(id);
      const [from, to] = a <= b ? [a, b] : [b, a];
      this.selected = new Set(ids.slice(from, to + 1));
      return;
    }
    this.selected = new Set([id]);
    this.anchor = id;
  }

  /** A right-click: the menu acts on the selection, so an unselected target becomes it. */
  contextMenu(id: string, ids: readonly string[]): boolean {
    if (this.selected.has(id)) return false;
    this.click(id, ids, false);
    return true;
  }

  clear(): boolean {
    const had = this.selected.size > 0;
    this.selected.clear();
    this.anchor = null;
    return had;
  }

  /** Forget ids no longer in the view; true when that changed the selection. */
  prune(ids: readonly string[]): boolean {
    const present = new Set(ids);
    const before = this.selected.size;
    this.selected = new Set([...this.selected].filter((id) => present.has(id)));
    if (this.anchor !== null && !present.has(this.anchor)) this.anchor = this.selected.values().next().value ?? null;
    return this.selected.size !== before;
  }
}
