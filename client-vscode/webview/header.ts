// The session header (the session and model pickers, Find, New Chat) and the welcome shown
// when no session is open.
import { button, h } from "./dom";
import { ModelPicker } from "./modelPicker";
import { SessionPicker } from "./sessionPicker";
import type { ModelCatalog, Session, Usage } from "./wire";

export interface HeaderHandlers {
  selectSession(sessionId: string): void;
  /** Open the session picker (the header's, also from the welcome). */
  pickSession(): void;
  newChat(): void;
  importSession(): void;
  /** Open the find box (search every message of the conversation). */
  find(): void;
}

/** What the pickers ask of the host. */
export interface PickerHandlers {
  listSessions(): void;
  renameSession(sessionId: string, title: string): void;
  deleteSession(sessionId: string): void;
  listModels(): void;
  chooseModel(model: string): void;
}

export class Header {
  /** The header bar and, under it, the pickers' drop-downs. */
  readonly el: HTMLElement;
  private readonly bar: HTMLElement;
  private readonly sessionButton: HTMLButtonElement;
  private readonly models: ModelPicker;
  private readonly sessions: SessionPicker;
  private listed: readonly Session[] = [];
  private current: Session | null = null;
  private usage: Usage | null = null; // the last usage shown: the model's window

  constructor(handlers: HeaderHandlers, pickers: PickerHandlers) {
    this.sessionButton = button("", () => this.openSessions(), {
      class: "secondary baton-session-button",
      "aria-haspopup": "dialog",
      "aria-expanded": "false",
    });
    this.models = new ModelPicker({ list: () => pickers.listModels(), choose: (model) => pickers.chooseModel(model) });
    this.sessions = new SessionPicker(this.sessionButton, {
      list: () => pickers.listSessions(),
      select: (sessionId) => handlers.selectSession(sessionId),
      rename: (sessionId, title) => pickers.renameSession(sessionId, title),
      remove: (sessionId) => pickers.deleteSession(sessionId),
      newChat: () => handlers.newChat(),
      importSession: () => handlers.importSession(),
    });
    this.bar = h(
      "header",
      { class: "baton-header" },
      this.sessionButton,
      this.models.button,
      button("Find", () => handlers.find(), {
        class: "secondary baton-find-open",
        title: "Find in the conversation (Ctrl+F)",
        "aria-label": "Find in the conversation",
      }),
      button("New Chat", () => handlers.newChat(), { class: "baton-new-chat" }),
    );
    this.el = h("div", { class: "baton-top" }, this.bar, this.sessions.popover.el, this.models.popover.el);
  }

  render(current: Session | null, sessions: readonly Session[]): void {
    this.bar.hidden = current === null;
    this.current = current;
    this.listed =
      current && !sessions.some((s) => s.sessionId === current.sessionId) ? [current, ...sessions] : sessions;
    if (current) {
      const name = label(current);
      this.sessionButton.textContent = name;
      this.sessionButton.title = `Session: ${name}. All sessions: search, rename, delete`;
      this.sessionButton.setAttribute("aria-label", `Session: ${name}`);
      const usage = this.usage?.sessionId === current.sessionId ? this.usage : null; // at least as new
      this.models.show(usage?.model ?? current.model, usage?.contextWindow ?? 0);
    } else {
      this.models.popover.close(false);
    }
    this.sessions.update(this.listed, current?.sessionId ?? null);
  }

  /** The usage names the model in use and its window (it follows a switch at once). */
  setUsage(usage: Usage | null): void {
    this.usage = usage;
    if (usage && this.current && usage.sessionId === this.current.sessionId) this.models.show(usage.model, usage.contextWindow);
  }

  /** The host's list as it is now (the picker asked, or a rename or delete changed it). */
  setSessions(sessions: readonly Session[]): void {
    this.render(this.current, sessions);
  }

  setModels(catalog: ModelCatalog | null, message?: string): void {
    this.models.render(catalog, message);
  }

  openSessions(): void {
    this.sessions.toggle(this.listed, this.current?.sessionId ?? null);
  }
}

/** Above the feed while no session is open: until the host's first update (the server may still be starting, or failing to) a line that says so, then the welcome. */
export class WelcomeSlot {
  readonly el = h("div", { class: "baton-welcome-slot" });

  constructor(private readonly handlers: HeaderHandlers) {
    this.el.replaceChildren(h("p", { class: "baton-starting", role: "status" }, "Waiting for the Baton server…"));
  }

  /** No session is open: the welcome, with these sessions. */
  show(sessions: readonly Session[]): void {
    this.el.replaceChildren(welcome(sessions, this.handlers));
  }

  /** A session is open, or the wait ended in an error: the slot empties; true when the focus was in it. */
  clear(): boolean {
    const held = this.el.contains(document.activeElement);
    this.el.replaceChildren();
    return held;
  }
}

function welcome(sessions: readonly Session[], handlers: HeaderHandlers): HTMLElement {
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
