// The session header (picker, New Chat) and the welcome shown when no session is open.
import { button, h } from "./dom";
import type { Session } from "./wire";

export interface HeaderHandlers {
  selectSession(sessionId: string): void;
  pickSession(): void;
  newChat(): void;
  importSession(): void;
  /** Open the find box (search every message of the conversation). */
  find(): void;
}

export class Header {
  readonly el: HTMLElement;
  private readonly picker: HTMLSelectElement;

  constructor(private readonly handlers: HeaderHandlers) {
    this.picker = h("select", { class: "baton-picker", "aria-label": "Session" });
    this.picker.addEventListener("change", () => {
      if (this.picker.value) this.handlers.selectSession(this.picker.value);
    });
    this.el = h(
      "header",
      { class: "baton-header" },
      this.picker,
      button("…", () => handlers.pickSession(), {
        class: "secondary baton-more",
        title: "All sessions (search)",
        "aria-label": "All sessions",
      }),
      button("Find", () => handlers.find(), {
        class: "secondary baton-find-open",
        title: "Find in the conversation (Ctrl+F)",
        "aria-label": "Find in the conversation",
      }),
      button("New Chat", () => handlers.newChat(), { class: "baton-new-chat" }),
    );
  }

  render(current: Session | null, sessions: readonly Session[]): void {
    this.el.hidden = current === null;
    const list =
      current && !sessions.some((s) => s.sessionId === current.sessionId) ? [current, ...sessions] : sessions;
    this.picker.replaceChildren(
      ...list.map((s) => h("option", { value: s.sessionId, selected: s.sessionId === current?.sessionId }, label(s))),
    );
    if (current) this.picker.value = current.sessionId;
  }
}

export function welcome(sessions: readonly Session[], handlers: HeaderHandlers): HTMLElement {
  const recent = sessions.slice(0, 8);
  return h(
    "section",
    { class: "baton-welcome", "aria-labelledby": "baton-welcome-title" },
    h("h2", { id: "baton-welcome-title" }, "Baton"),
    h(
      "p",
      {},
      "Chat with a model while Baton keeps the context in check: token usage, compaction you can undo, and the files you were editing restored.",
    ),
    h(
      "div",
      { class: "baton-welcome-actions" },
      button("New Chat", () => handlers.newChat(), { class: "baton-new-chat" }),
      button("Import Claude Code Session", () => handlers.importSession(), { class: "baton-import secondary" }),
    ),
    recent.length
      ? h(
          "nav",
          { class: "baton-recent", "aria-label": "Recent sessions" },
          h("h3", {}, "Recent sessions"),
          h(
            "ul",
            {},
            ...recent.map((s) =>
              h(
                "li",
                {},
                button(label(s), () => handlers.selectSession(s.sessionId), { class: "link" }),
              ),
            ),
          ),
          sessions.length > recent.length
            ? button("All sessions…", () => handlers.pickSession(), { class: "link" })
            : null,
        )
      : null,
  );
}

function label(s: Session): string {
  return s.title.trim() || s.sessionId;
}
