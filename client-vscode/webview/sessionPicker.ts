// The session picker: every session with its title, last activity, size in tokens and
// source, a search by title, rename in place, delete after a confirmation, and New Chat.
import { button, compactNumber, h } from "./dom";
import { Popover } from "./popover";
import type { Session } from "./wire";

export interface SessionPickerHandlers {
  /** The picker opened: the host answers with the list as it is now (`sessions`). */
  list(): void;
  select(sessionId: string): void;
  rename(sessionId: string, title: string): void;
  remove(sessionId: string): void;
  newChat(): void;
  importSession(): void;
}

export class SessionPicker {
  readonly popover: Popover;
  private readonly search: HTMLInputElement;
  private readonly listEl: HTMLElement;
  private readonly status: HTMLElement;
  private sessions: readonly Session[] = [];
  private current: string | null = null;
  private editing: string | null = null; // the row being renamed
  private confirming: string | null = null; // the row asking "Delete?"

  constructor(opener: HTMLElement, private readonly handlers: SessionPickerHandlers) {
    this.popover = new Popover("baton-session-picker", "Sessions", opener);
    this.search = h("input", {
      type: "search",
      class: "baton-session-search",
      placeholder: "Search sessions by title",
      "aria-label": "Search sessions",
    });
    this.search.addEventListener("input", () => this.draw());
    this.search.addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      event.preventDefault(); // the Enter is this box's: not a click of the button the focus goes back to
      const first = this.visible()[0];
      if (first) this.open(first.sessionId);
    });
    this.listEl = h("ul", { class: "baton-session-list", "aria-label": "Sessions" });
    this.status = h("p", { class: "baton-picker-status", role: "status" });
  }

  get isOpen(): boolean {
    return this.popover.isOpen;
  }

  toggle(sessions: readonly Session[], current: string | null): void {
    if (this.popover.isOpen) {
      this.popover.close();
      return;
    }
    this.sessions = sessions;
    this.current = current;
    this.editing = this.confirming = null;
    this.search.value = "";
    this.popover.open([
      this.search,
      this.listEl,
      this.status,
      h(
        "div",
        { class: "baton-picker-actions" },
        button("New Chat", () => this.act(() => this.handlers.newChat()), { class: "baton-picker-new" }),
        button("Import Claude Code Session…", () => this.act(() => this.handlers.importSession()), {
          class: "secondary",
        }),
      ),
    ]);
    this.draw();
    this.search.focus();
    this.handlers.list();
  }

  /** The list as the host has it now (on open, after a rename or a delete, any update). */
  update(sessions: readonly Session[], current: string | null): void {
    this.sessions = sessions;
    this.current = current;
    if (this.editing && !sessions.some((s) => s.sessionId === this.editing)) this.editing = null;
    if (this.popover.isOpen && this.editing === null) this.draw();
  }

  private visible(): Session[] {
    const query = this.search.value.trim().toLowerCase();
    return this.sessions.filter((s) => !query || title(s).toLowerCase().includes(query));
  }

  private draw(): void {
    const shown = this.visible();
    const place = this.keyboardPlace();
    this.listEl.replaceChildren(...shown.map((s) => this.row(s)));
    if (place) this.controls(place.sessionId)[place.index]?.focus();
    this.status.textContent =
      this.sessions.length === 0
        ? "No sessions yet."
        : shown.length === 0
          ? `No session's title matches "${this.search.value.trim()}".`
          : "";
    this.status.hidden = this.status.textContent === "";
  }

  /**
   * The row and the control within it that has the focus, if one has: drawing the rows anew
   * (each update of the list) puts the focus back there, not on the page's body.
   */
  private keyboardPlace(): { sessionId: string; index: number } | undefined {
    const focused = document.activeElement;
    const row = focused instanceof HTMLElement && this.listEl.contains(focused) ? focused.closest<HTMLElement>("[data-session-id]") : null;
    const sessionId = row?.dataset.sessionId;
    if (!sessionId || !focused) return undefined;
    return { sessionId, index: this.controls(sessionId).indexOf(focused as HTMLElement) };
  }

  private controls(sessionId: string): HTMLElement[] {
    const row = [...this.listEl.querySelectorAll<HTMLElement>("[data-session-id]")].find((r) => r.dataset.sessionId === sessionId);
    return row ? [...row.querySelectorAll<HTMLElement>("button, input")] : [];
  }

  private row(s: Session): HTMLElement {
    const isCurrent = s.sessionId === this.current;
    const item = h("li", {
      class: "baton-session-row",
      "data-session-id": s.sessionId,
      "aria-current": isCurrent ? "true" : false,
    });
    if (this.editing === s.sessionId) {
      item.append(...this.renameForm(s));
      return item;
    }
    const open = h(
      "button",
      { type: "button", class: "baton-session-open", title: `Open "${title(s)}"` },
      h("span", { class: "baton-session-title" }, title(s), isCurrent ? h("span", { class: "baton-session-badge" }, "current") : null),
      h("span", { class: "baton-session-meta" }, ...facts(s).map((f) => h("span", {}, f))),
    );
    open.addEventListener("click", () => this.open(s.sessionId));
    item.append(open);
    if (this.confirming === s.sessionId) {
      item.append(
        h(
          "div",
          { class: "baton-session-confirm", role: "alert" },
          h("span", {}, `Delete "${title(s)}"? It leaves the list; its transcript stays on disk.`),
          button("Delete", () => this.act(() => this.handlers.remove(s.sessionId)), { class: "baton-danger" }),
          button("Cancel", () => this.redraw(null, null), { class: "secondary" }),
        ),
      );
      return item;
    }
    if (!s.readOnly) {
      item.append(
        h(
          "span",
          { class: "baton-session-actions" },
          button("Rename", () => this.redraw(s.sessionId, null), { class: "secondary", "aria-label": `Rename "${title(s)}"` }),
          button("Delete", () => this.redraw(null, s.sessionId), { class: "secondary", "aria-label": `Delete "${title(s)}"` }),
        ),
      );
    }
    return item;
  }

  private renameForm(s: Session): Node[] {
    const input = h("input", { type: "text", class: "baton-session-rename", "aria-label": "New title", maxlength: "200" });
    input.value = s.title;
    const save = (): void => {
      const value = input.value.trim();
      if (value === "" || value === s.title) {
        this.redraw(null, null);
        return;
      }
      this.editing = null;
      this.handlers.rename(s.sessionId, value);
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        save();
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation(); // the rename ends, the picker stays
        this.redraw(null, null);
      }
    });
    requestAnimationFrame(() => {
      input.focus();
      input.select();
    });
    return [input, button("Save", save), button("Cancel", () => this.redraw(null, null), { class: "secondary" })];
  }

  private redraw(editing: string | null, confirming: string | null): void {
    this.editing = editing;
    this.confirming = confirming;
    this.draw();
  }

  private open(sessionId: string): void {
    this.act(() => {
      if (sessionId !== this.current) this.handlers.select(sessionId);
    });
  }

  private act(run: () => void): void {
    this.popover.close(); // the focus goes back to the picker's button, not to the page's body
    run();
  }
}

function title(s: Session): string {
  return s.title.trim() || s.sessionId;
}

/** The row's second line: last activity, size, source, and anything odd about it. */
export function facts(s: Session, now = Date.now()): string[] {
  const out = [lastActivity(s.updatedAt, now)];
  out.push(s.contextTokens === undefined ? "size unknown" : `${compactNumber(s.contextTokens)} tokens`);
  if (s.source) out.push(`${s.source.kind === "claude-code" ? "Imported from" : "Compacted from"} ${s.source.file}`);
  if (s.model) out.push(s.model);
  if (s.readOnly) out.push("read-only");
  return out;
}

export function lastActivity(stamp: string, now = Date.now()): string {
  const at = Date.parse(stamp);
  if (Number.isNaN(at)) return "unknown time";
  const minutes = Math.floor((now - at) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.floor(hours / 24);
  if (days < 7) return `${days} day${days === 1 ? "" : "s"} ago`;
  return new Date(at).toLocaleDateString("en-US", { month: "short", day: "numeric", year: "numeric" });
}
