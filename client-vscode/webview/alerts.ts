// The two lines above the feed that speak for the host: the error banner (a failure, shown
// until dismissed or until what it was about has changed) and the notice (news, such as an
// auto-compaction's outcome, that goes by itself).
import type { ErrorScope, NoticeAbout, ToWebview } from "../src/webviewMessages";
import { button, h } from "./dom";

type Notice = Extract<ToWebview, { type: "notice" }>;

/** How long a notice stays: an auto-compaction that worked, and one that did not. */
const NOTICE_MS = { info: 8_000, warning: 20_000 };

export class Alerts {
  readonly banner = h("div", { class: "baton-banner", role: "alert" });
  readonly notice = h("div", { class: "baton-notice", role: "status" });
  private bannerScope: ErrorScope | undefined;
  private noticeTimer = 0;
  private noticeAbout: NoticeAbout | undefined;

  /** `focusAfter`: where the focus goes when a line that held it goes (the input box). */
  constructor(private readonly focusAfter: () => void) {
    this.banner.hidden = true;
    this.notice.hidden = true;
  }

  showError(text: string, scope: ErrorScope | undefined): void {
    this.bannerScope = scope;
    this.banner.replaceChildren(
      h("span", { class: "baton-banner-text" }, text),
      button("Dismiss", () => this.hideError(), { class: "secondary" }),
    );
    this.banner.hidden = false;
  }

  hideError(): void {
    this.hide(this.banner);
  }

  showNotice(notice: Notice): void {
    window.clearTimeout(this.noticeTimer);
    this.noticeAbout = notice.about;
    this.notice.dataset.tone = notice.tone;
    this.notice.replaceChildren(
      h("span", { class: "baton-notice-text" }, notice.message),
      button("Dismiss", () => this.hideNotice(), { class: "secondary" }),
    );
    this.notice.hidden = false;
    this.noticeTimer = window.setTimeout(() => this.hideNotice(), NOTICE_MS[notice.tone]);
  }

  /** The notice on show goes if it is about `about` (what it said stopped being true). */
  endNotice(about: NoticeAbout): void {
    if (!this.notice.hidden && this.noticeAbout === about) this.hideNotice();
  }

  hideNotice(): void {
    window.clearTimeout(this.noticeTimer);
    this.hide(this.notice);
  }

  /** A line that goes with the focus on its Dismiss would leave it on the page's body, where the keyboard starts over. */
  private hide(line: HTMLElement): void {
    const held = line.contains(document.activeElement);
    line.hidden = true;
    if (held) this.focusAfter();
  }

  /**
   * What a session update makes stale: the server answered; a key is set (`hasApiKey`);
   * another session is shown (`changed`, which ends the notice too).
   */
  sessionUpdated(hasApiKey: boolean, changed: boolean): void {
    const scope = this.bannerScope;
    const stale =
      scope === "server" ||
      (scope === "apiKey" && (hasApiKey || changed)) ||
      (scope === "session" && changed);
    if (stale) this.hideError();
    if (changed) this.hideNotice();
  }
}
