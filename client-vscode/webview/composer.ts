// The input box: Enter sends, Shift+Enter is a new line, Stop while a reply runs, the note
// with "Set API Key" when there is no key (everything else keeps working), and the line
// that says what the draft would weigh once sent. A sent prompt leaves the box at once but
// comes back into it when the host says it was not sent (no key, too large, ...).
import type { DraftLine } from "../src/webviewMessages";
import { button, h } from "./dom";

export interface ComposerHandlers {
  send(text: string): void;
  stop(): void;
  setApiKey(): void;
  draftChanged(draft: string): void;
}

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly keyNote: HTMLElement;
  private readonly lockNote: HTMLElement;
  private readonly draftLine: HTMLElement;
  private readOnly = false;
  private busy = false;
  private busyElsewhere = false;
  private opening = false;

  constructor(private readonly handlers: ComposerHandlers) {
    this.input = h("textarea", {
      id: "baton-input",
      class: "baton-input",
      rows: "1",
      placeholder: "Ask anything",
      title: "Enter sends; Shift+Enter starts a new line",
      "aria-label": "Message",
    });
    this.input.addEventListener("keydown", (event) => this.keydown(event));
    this.input.addEventListener("input", () => {
      this.fit();
      this.handlers.draftChanged(this.input.value);
    });
    this.sendButton = button("Send", () => this.submit(), { class: "baton-send" });
    this.stopButton = button("Stop", () => this.handlers.stop(), { class: "baton-stop secondary" });
    this.stopButton.hidden = true;
    this.keyNote = h(
      "div",
      { class: "baton-note baton-key-note", role: "status" },
      h("span", {}, "No API key: replies need one; all else works."),
      button("Set API Key", () => this.handlers.setApiKey(), { class: "baton-set-key secondary" }),
    );
    this.keyNote.hidden = true;
    this.lockNote = h(
      "div",
      { class: "baton-note baton-lock-note", role: "status" },
      "This conversation is open in another Baton process: it is read-only here.",
    );
    this.lockNote.hidden = true;
    this.draftLine = h("div", { class: "baton-draft-usage", role: "status", "aria-live": "polite" });
    this.draftLine.hidden = true;
    this.el = h(
      "div",
      { class: "baton-composer" },
      this.keyNote,
      this.lockNote,
      h("div", { class: "baton-input-row" }, this.input, this.sendButton, this.stopButton),
      this.draftLine,
    );
  }

  setDraft(draft: string): void {
    this.input.value = draft;
    this.fit();
  }

  /** What the draft would weigh once sent (null, or an empty box: no line). */
  setDraftUsage(line: DraftLine | null): void {
    const show = line !== null && this.input.value.trim() !== "";
    this.draftLine.hidden = !show;
    if (!show) return;
    this.draftLine.dataset.verdict = line.verdict;
    this.draftLine.replaceChildren(
      h("span", { class: "baton-draft-figure" }, line.text),
      ...(line.warning ? [h("span", { class: "baton-draft-warning" }, line.warning)] : []),
    );
  }

  /** A prompt that was not sent goes back into the box (before anything typed since). */
  restore(text: string): void {
    const typed = this.input.value;
    this.setDraft(typed.trim() === "" ? text : `${text}\n${typed}`);
    this.handlers.draftChanged(this.input.value);
    this.input.focus();
  }

  /**
   * How a send ended for its text. A panel reloaded while the send ran shows the text in the
   * box again once its session is on show (sentPrompt.ts): then it stays there once when it
   * was not sent (the user may have written on after it), and goes when it was.
   */
  sendEnded(stored: boolean, text: string): void {
    const held = this.input.value === text;
    if (!stored && this.input.value.includes(text)) this.input.focus();
    else if (!stored) this.restore(text);
    else if (held) {
      this.setDraft("");
      this.handlers.draftChanged("");
    }
  }

  get draft(): string {
    return this.input.value;
  }

  setHasApiKey(hasKey: boolean): void {
    this.keyNote.hidden = hasKey;
  }

  /** A session another Baton process holds: readable here, nothing to send. */
  setReadOnly(readOnly: boolean): void {
    this.readOnly = readOnly;
    this.lockNote.hidden = !readOnly;
    this.input.disabled = readOnly;
    this.sendWaits();
  }

  /**
   * Another session is on its way to the panel: Send waits for it (the text stays in the
   * box), so a prompt never goes to a session the user has just left, nor to one not yet shown.
   */
  setOpening(opening: boolean): void {
    this.opening = opening;
    this.sendWaits();
  }

  /**
   * A reply runs in this session (`busy`: Stop, for it) or in another one (`elsewhere`:
   * Send waits for it, one send at a time, and the text stays in the box).
   */
  setBusy(busy: boolean, elsewhere = false): void {
    const onSend = document.activeElement === this.sendButton;
    const onStop = document.activeElement === this.stopButton;
    this.busy = busy;
    this.busyElsewhere = elsewhere && !busy;
    this.sendButton.hidden = busy;
    this.stopButton.hidden = !busy;
    // the button the keyboard is on goes: the focus goes to what takes its place (Stop), or
    // back to the box once the reply has ended, not to the page's body
    if (busy && onSend) this.stopButton.focus();
    else if (!busy && onStop) this.input.focus();
    this.input.setAttribute("aria-busy", String(busy));
    this.sendWaits();
  }

  private sendWaits(): void {
    this.sendButton.disabled = this.readOnly || this.opening || this.busyElsewhere;
    this.sendButton.title = this.opening
      ? "Opening the session…"
      : this.busyElsewhere
        ? "A reply is being written in another conversation"
        : "";
  }

  private keydown(event: KeyboardEvent): void {
    if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    event.preventDefault(); // Enter sends; Shift+Enter falls through to a new line
    this.submit();
  }

  private submit(): void {
    const text = this.input.value;
    if (this.busy || this.busyElsewhere || this.readOnly || this.opening || text.trim() === "") return;
    this.setDraft("");
    this.draftLine.hidden = true;
    // the prompt is kept with its session (sentPrompt.ts) until the host says how it went
    this.handlers.send(text);
  }

  /** Grow with the text up to a third of the view (CSSOM height: allowed by the CSP). */
  private fit(): void {
    this.input.style.height = "auto";
    const max = Math.max(80, Math.floor(window.innerHeight / 3));
    this.input.style.height = `${Math.min(this.input.scrollHeight + 2, max)}px`;
  }
}
