/**
 * An open compaction draft against the text of its editor, without the editor: whether the
 * text is an edit, the edit measured again once typing pauses (each measure answers a new
 * draft that replaces the one before), and what Apply commits. Pure (no vscode import):
 * compactDraft.ts supplies the editor's text and draws the card.
 */
import type { EditState } from "./draftCard";
import type { DraftOptions, DraftRpc } from "./draftRpc";
import { ErrorCodes, type CompactDraft } from "./protocol";
import { errorCode, errorMessage } from "./rpc";

/** An edit is measured again once typing pauses this long. */
export const MEASURE_AFTER_MS = 700;
/** What the server's warnings say of a draft whose summary was edited. */
export const EDITED_WARNING = "the summary was edited before it was applied";

export interface DraftEditPorts {
  drafts: Pick<DraftRpc, "preview" | "discard">;
  /** The text the draft's editor holds now. */
  text(): string;
  /** What the card says changed (the draft, or how the text stands): it is drawn again. */
  changed(): void;
  log(message: string): void;
}

/** What Apply commits: the draft, and the edited text (undefined: the draft as written). */
export interface DraftCommit {
  draftId: string;
  summary: string | undefined;
}

export class DraftEdit {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private measuring: Promise<void> = Promise.resolve();
  private closed = false;
  /** What the card on show says (drawing it again loads its page again: only on a change). */
  private drawn: string;

  constructor(
    readonly sessionId: string,
    private current: CompactDraft,
    private readonly ports: DraftEditPorts,
    private readonly measureAfterMs = MEASURE_AFTER_MS,
  ) {
    this.drawn = this.cardKey();
  }

  /** The draft as last written or measured. */
  get draft(): CompactDraft {
    return this.current;
  }

  /** How the editor's text stands: edited at all, and whether the card's figures are its. */
  get state(): EditState {
    const pending = this.isEdit(this.ports.text());
    return { edited: pending || this.current.warnings.includes(EDITED_WARNING), measured: !pending };
  }

  /** The editor's text changed: the card says so now, the figures follow once typing pauses. */
  textChanged(): void {
    if (this.closed) return;
    this.draw();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.measureNow(), this.measureAfterMs);
  }

  /** What Apply commits, once the text on show has been measured (when it could be). */
  async commit(): Promise<DraftCommit> {
    this.measureNow();
    await this.measuring;
    const text = this.ports.text();
    return { draftId: this.current.draftId, summary: this.isEdit(text) ? text : undefined };
  }

  /**
   * The draft once the measures under way have answered, none started: what a Regenerate or
   * a Discard names (each measure replaces the draft, whose id is then no longer the session's).
   */
  async settled(): Promise<CompactDraft> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.measuring;
    return this.current;
  }

  /**
   * Drops the draft on the server, once a measure under way has answered. A draft the server
   * no longer has (another preview of the session replaced it) has nothing left to drop.
   */
  async discard(): Promise<void> {
    const { draftId } = await this.settled();
    try {
      await this.ports.drafts.discard(this.sessionId, draftId);
    } catch (error) {
      if (errorCode(error) !== ErrorCodes.draftNotFound) throw error;
    }
  }

  /** The draft goes (applied, discarded, replaced by another): nothing more is measured. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  /** The card is drawn again when what it says changed: the draft, or how the text stands. */
  private draw(): void {
    const key = this.cardKey();
    if (key === this.drawn) return;
    this.drawn = key;
    this.ports.changed();
  }

  private cardKey(): string {
    const { edited, measured } = this.state;
    return `${this.current.draftId} ${edited} ${measured}`;
  }

  private isEdit(text: string): boolean {
    return text.trim() !== this.current.summary.trim();
  }

  private measureNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const text = this.ports.text();
    if (this.closed || text.trim() === "" || !this.isEdit(text)) return;
    this.measuring = this.measuring.then(async () => {
      if (this.closed) return;
      try {
        // the id read now: a measure before this one replaced the draft
        const options: DraftOptions = { draftId: this.current.draftId, summary: text };
        const draft = await this.ports.drafts.preview(this.sessionId, options);
        if (this.closed) return;
        this.current = draft;
        this.drawn = this.cardKey();
        this.ports.changed(); // its figures, whatever else stands
      } catch (error) {
        this.ports.log(`measuring the edited summary failed: ${errorMessage(error)}`);
      }
    });
  }
}
