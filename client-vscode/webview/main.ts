// The chat webview of the `baton.chat` view: renders what the extension host sends
// (src/webviewMessages.ts) and posts back what the user does. Nothing else crosses.
//
// What it expects of the host's HTML (vscode-ext's chat view provider):
//   <body> holding one empty <div id="root"></div>; this bundle (dist/webview.js) loaded by
//   <script nonce="…" src="…">; media/chat.css linked (it @imports messages.css, highlight.css).
//   CSP: default-src 'none'; img-src ${cspSource} data:; style-src ${cspSource};
//        font-src ${cspSource}; script-src 'nonce-…'.  (data: images are the thumbnails.)
// The script builds the whole view inside #root, posts {type:"ready"} once loaded, and
// keeps {sessionId, draft, scrollTop, usageOpen} with vscode.setState. The error banner and
// notices are alerts.ts's; a long session's pages, viewPages.ts's; the session and place kept
// across a reload, savedPlace.ts's.
import type { ToWebview } from "../src/webviewMessages";
import { Alerts } from "./alerts";
import { ChipBar } from "./chips";
import { Composer } from "./composer";
import { h } from "./dom";
import { Feed } from "./feed";
import { FindBar } from "./find";
import { Header, type HeaderHandlers, WelcomeSlot } from "./header";
import { FeedInput } from "./feedInput";
import { Host } from "./host";
import { PermissionCards } from "./permission";
import { SavedPlace } from "./savedPlace";
import { SentPrompt } from "./sentPrompt";
import { TodoChecklist } from "./todos";
import { UsageChart } from "./usage";
import { type SessionUpdate, ViewPages } from "./viewPages";
import type { Session } from "./wire";

class ChatView {
  private readonly host = new Host();
  private readonly header: Header;
  private readonly usage: UsageChart;
  private readonly feed: Feed;
  private readonly composer: Composer;
  private readonly chips: ChipBar;
  private readonly permissions: PermissionCards;
  private readonly sent: SentPrompt;
  private readonly todos = new TodoChecklist();
  private readonly attachSlot = h("div", { class: "baton-attach-slot" });
  private readonly alerts = new Alerts(() => this.composer.input.focus());
  private readonly input: FeedInput;
  private readonly find: FindBar;
  private readonly pages: ViewPages;
  private readonly welcome: WelcomeSlot;
  private readonly place: SavedPlace;
  private session: Session | null = null;
  /** The conversations as the last session update listed them. */
  private sessions: Session[] = [];
  private firstUpdate = true;
  private draftWeighed = false; // the box's draft has reached the host (restored with the view state, it has not)
  /** The session a send runs in (null: not known yet); undefined: none runs. */
  private busyIn: string | null | undefined;

  constructor(root: HTMLElement) {
    const actions: HeaderHandlers = {
      selectSession: (sessionId) => this.openSession({ type: "selectSession", sessionId }),
      pickSession: () => this.header.openSessions(),
      newChat: () => this.openSession({ type: "newChat" }),
      importSession: () => this.host.post({ type: "import" }),
      find: () => this.find.open(),
    };
    this.header = new Header(actions, {
      listSessions: () => this.host.post({ type: "listSessions" }),
      renameSession: (sessionId, title) => this.host.post({ type: "renameSession", sessionId, title }),
      deleteSession: (sessionId) => this.host.post({ type: "deleteSession", sessionId }),
      listModels: () => this.host.post({ type: "listModels" }),
      // the session on show: the host may already be opening another one
      chooseModel: (model) => this.host.post({ type: "setModel", model, sessionId: this.session?.sessionId ?? null }),
    });
    this.usage = new UsageChart(
      this.host.state.usageOpen ?? false,
      (usageOpen) => this.host.save({ usageOpen }),
      () => this.host.post({ type: "openSessionDocument" }),
    );
    this.welcome = new WelcomeSlot(actions);
    this.feed = new Feed({
      undo: (boundaryId) => {
        const sessionId = this.session?.sessionId ?? null;
        this.host.post(boundaryId ? { type: "undo", boundaryId, sessionId } : { type: "undo", sessionId });
      },
      insertCode: (code) => this.host.post({ type: "insertCode", code }),
      edit: (messageId, text) => {
        this.alerts.hideError();
        this.alerts.hideNotice();
        this.host.post({ type: "edit", messageId, text, sessionId: this.session?.sessionId ?? null });
      },
      retry: () => this.host.post({ type: "retry", sessionId: this.session?.sessionId ?? null }),
      applyCode: (code, file) => this.host.post(file ? { type: "applyCode", code, file } : { type: "applyCode", code }),
      openMessage: (messageId) => this.host.post({ type: "openMessage", messageId }),
      loadReplaced: (boundaryId, offset) => {
        const sessionId = this.session?.sessionId;
        if (sessionId !== undefined) this.host.post({ type: "loadReplaced", sessionId, boundaryId, offset });
      },
    });
    this.input = new FeedInput(this.feed, (messageIds) => this.host.post({ type: "selection", messageIds }));
    this.find = new FindBar(this.feed);
    this.pages = new ViewPages(this.feed, {
      busy: () => this.busyIn !== undefined, // Edit and Retry send: not while any send runs
      post: (message) => this.host.post(message),
      drawn: (changed) => {
        this.input.refresh(changed);
        this.find.refresh();
      },
    });
    this.composer = new Composer({
      send: (text) => {
        this.alerts.hideError(); // an old failure is no news once the user goes on
        this.alerts.hideNotice();
        this.feed.showPrompt(text);
        this.feed.scrollToEnd();
        // the session on show: the host may already be opening another one
        const sessionId = this.session?.sessionId ?? null;
        this.sent.sending(text, sessionId);
        this.host.post({ type: "send", text, sessionId });
      },
      stop: () => this.host.post({ type: "stop", sessionId: this.session?.sessionId ?? null }),
      setApiKey: () => this.host.post({ type: "setApiKey" }),
      draftChanged: (draft) => {
        this.draftWeighed = true;
        this.host.save({ draft });
        this.host.post({ type: "draft", text: draft });
      },
    });
    this.sent = new SentPrompt(this.host, this.composer, (message) => {
      const sessionId = this.session?.sessionId;
      if (sessionId !== undefined) this.alerts.showNotice({ type: "notice", sessionId, message, tone: "info" });
    });
    this.chips = new ChipBar(this.composer.input, this.composer.el, {
      remove: (id) => this.host.post({ type: "removeChip", id }),
      findFiles: (query) => this.host.post({ type: "findFiles", query }),
      attachFile: (path) => this.host.post({ type: "attachFile", path }),
      attachUris: (uris) => this.host.post({ type: "attachUris", uris }),
    });
    this.permissions = new PermissionCards(
      (toolUseId, outcome) => this.host.post({ type: "permissionAnswer", toolUseId, outcome }),
      () => this.composer.input.focus(),
      (sessionId) => this.sessions.find((s) => s.sessionId === sessionId)?.title,
    );
    this.attachSlot.append(this.chips.picker, this.chips.el);
    this.attachSlot.hidden = true;
    this.feed.el.hidden = true;
    this.composer.el.hidden = true;
    root.replaceChildren(
      h(
        "div",
        { class: "baton-chat" },
        this.header.el,
        this.usage.el,
        this.alerts.banner,
        this.alerts.notice,
        this.welcome.el,
        this.find.el,
        this.feed.el,
        this.input.bar,
        this.permissions.el,
        this.todos.el,
        this.attachSlot,
        this.composer.el,
      ),
    );
    this.composer.setDraft(this.host.state.draft);
    this.place = new SavedPlace(this.host, this.feed, () => this.session?.sessionId);
    this.chips.acceptDrops(root);
    window.addEventListener("message", (event: MessageEvent<ToWebview>) => this.receive(event.data));
    this.host.post({ type: "ready" });
  }

  private receive(message: ToWebview): void {
    switch (message?.type) {
      case "session":
        return this.showSession(message);
      case "usage":
        if (message.sessionId !== this.session?.sessionId) return;
        this.usage.render(message.usage);
        this.header.setUsage(message.usage);
        return;
      case "sessions":
        this.sessions = message.sessions;
        this.permissions.sessionShown(this.session?.sessionId ?? null); // a title renamed
        return this.header.setSessions(message.sessions);
      case "models":
        return this.header.setModels(message.catalog, message.message);
      case "earlier":
        return this.pages.showEarlier(message);
      case "replaced":
        if (message.sessionId === this.session?.sessionId) this.feed.rows.replacedPage(message.boundaryId, message);
        return;
      case "delta":
        if (message.sessionId !== this.session?.sessionId) return;
        {
          const stick = this.feed.isAtEnd();
          this.feed.delta(message.messageId, message.text);
          if (stick) this.feed.scrollToEnd();
        }
        return;
      case "status":
        if (message.sessionId === this.session?.sessionId) this.feed.status(message.message);
        return;
      case "busy":
        this.busyIn = message.busy ? message.sessionId : undefined;
        this.showBusy();
        // Edit and Retry send: gone while a send runs (its end brings the new view, and them)
        if (message.busy) this.pages.redraw();
        return;
      case "error":
        // Before any session, an error (no server, say) is the whole story: stop "waiting".
        if (this.firstUpdate) this.welcome.clear();
        // a session that could not be opened: the one on show stays (another failure, say a
        // failed Apply, leaves Send waiting for the session on its way)
        if (message.opening === true) this.composer.setOpening(false);
        this.alerts.showError(message.message, message.scope);
        return;
      case "notice":
        if (message.sessionId === this.session?.sessionId) this.alerts.showNotice(message);
        return;
      case "noticeEnd":
        if (message.sessionId === this.session?.sessionId) this.alerts.endNotice(message.about);
        return;
      case "draftUsage":
        if (message.sessionId === this.session?.sessionId) this.composer.setDraftUsage(message.draft);
        return;
      case "chips":
        return this.chips.render(message.chips);
      case "fileResults":
        return this.chips.results(message.query, message.items);
      case "permission":
        if (message.request.diff !== undefined) {
          this.feed.rows.askedDiff(message.request.toolUseId, message.request.diff);
          this.pages.redraw(); // the call's line, drawn with the server's unnumbered diff
        }
        return this.permissions.show(message.request);
      case "permissionDone":
        return this.permissions.done(message.toolUseId);
      case "restartWaits":
        return this.permissions.restartNote(message.message);
      case "sendOutcome":
        return this.sent.outcome(message, this.session?.sessionId ?? null);
    }
  }

  private showSession(update: SessionUpdate): void {
    const shown = update.session?.sessionId ?? null;
    // After a reload the host shows its own choice: ask for the session this view had, and
    // keep the saved state (its scroll position) for it rather than for this interim one.
    const saved = this.place.wanted(update, this.firstUpdate);
    this.firstUpdate = false;
    this.composer.setOpening(false);
    if (saved !== undefined) this.openSession({ type: "selectSession", sessionId: saved });
    const changed = shown !== (this.session?.sessionId ?? null);
    this.alerts.sessionUpdated(update.hasApiKey, changed);
    if (changed) {
      this.composer.setDraftUsage(null);
      this.feed.rows.forgetReplaced();
      this.feed.forgetPending();
    }
    this.todos.render(update.session ? update.todos : undefined);
    const stick = !changed && this.feed.isAtEnd();
    this.session = update.session;
    this.sessions = update.sessions;
    this.permissions.sessionShown(shown);
    this.input.setSession(shown);
    this.header.render(update.session, update.sessions);
    this.usage.render(update.session ? update.usage : null);
    this.header.setUsage(update.session ? update.usage : null);
    this.composer.setHasApiKey(update.hasApiKey);
    const readOnly = update.session?.readOnly === true;
    this.composer.setReadOnly(readOnly);
    this.showBusy();
    const open = update.session !== null;
    this.feed.el.hidden = !open;
    this.composer.el.hidden = !open;
    this.attachSlot.hidden = !open;
    if (!open) this.welcome.show(update.sessions);
    // the welcome went with the focus (its New Chat, a recent session): into the box, not
    // the page's body, to type at once
    else if (this.welcome.clear()) this.composer.input.focus();
    this.pages.show(update, changed);
    this.place.placed(shown, saved !== undefined, changed, stick);
    this.pages.askEarlier();
    this.sent.settle(update);
    // a draft restored with the view state gets its line once the host has a session: the
    // first one shown, which may come after the welcome (the saved session gone)
    if (open && !this.draftWeighed) {
      this.draftWeighed = true;
      if (this.composer.draft.trim() !== "") this.host.post({ type: "draft", text: this.composer.draft });
    }
  }

  /** Stop for a send in the session on show; for one in another session, a Send that waits. */
  private showBusy(): void {
    const here = this.busyIn !== undefined && this.busyIn === (this.session?.sessionId ?? null);
    this.composer.setBusy(here, this.busyIn !== undefined);
    this.feed.el.setAttribute("aria-busy", String(here));
  }

  /** Asks the host for another session; Send waits until a session update (or an error) comes. */
  private openSession(message: { type: "selectSession"; sessionId: string } | { type: "newChat" }): void {
    this.composer.setOpening(true);
    this.host.post(message);
  }
}

const root = document.getElementById("root") ?? document.body.appendChild(h("div", { id: "root" }));
new ChatView(root);
