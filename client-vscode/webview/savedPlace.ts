// Where the view was, kept across a reload with the view state: the session it showed and
// the place read in it. After a reload the host shows its own choice first; the view asks
// for the saved session, and puts the viewport back where it was once that one shows.
import type { Feed } from "./feed";
import type { Host } from "./host";
import type { SessionUpdate } from "./viewPages";

export class SavedPlace {
  private restoreScroll = true; // until the saved session has been shown (or another chosen)
  private scrollSaved = 0;

  constructor(
    private readonly host: Host,
    private readonly feed: Feed,
    /** The session on show (none yet: undefined). */
    private readonly shownId: () => string | undefined,
  ) {
    const el = feed.el;
    el.addEventListener("scroll", () => {
      if (this.scrollSaved) return;
      this.scrollSaved = requestAnimationFrame(() => {
        this.scrollSaved = 0;
        // Only the saved session's position: not an interim one shown while it is asked for.
        if (this.shownId() !== this.host.state.sessionId) return;
        const at = this.feed.capture();
        const scrollAnchor = at.end || at.id === undefined ? null : { id: at.id, delta: at.delta };
        this.host.save({ scrollTop: el.scrollTop, scrollAnchor });
      });
    });
  }

  /**
   * The saved session to ask for, when `update`, the first after a reload, is the host's own
   * choice while the saved one is still there (the update is then an interim one).
   */
  wanted(update: SessionUpdate, first: boolean): string | undefined {
    const saved = this.host.state.sessionId;
    const shown = update.session?.sessionId ?? null;
    const interim = first && saved !== null && saved !== shown && update.sessions.some((s) => s.sessionId === saved);
    return interim ? saved : undefined;
  }

  /**
   * `shown` (null: the welcome) is drawn: unless it is an interim one, it is saved as the
   * view's session. The saved place is put back the first time the saved session shows, else
   * the view goes to its end when the session changed or the view was there (`stick`).
   */
  placed(shown: string | null, interim: boolean, changed: boolean, stick: boolean): void {
    const open = shown !== null;
    const anchor = this.host.state.scrollAnchor;
    const restoring = this.restoreScroll && open && shown === this.host.state.sessionId && (anchor ?? null) !== null;
    if (!interim) {
      this.restoreScroll = false;
      this.host.save({ sessionId: shown });
    }
    if (restoring && anchor) this.feed.restore({ id: anchor.id, row: 0, delta: anchor.delta });
    else if (open && (changed || stick)) this.feed.scrollToEnd();
  }
}
