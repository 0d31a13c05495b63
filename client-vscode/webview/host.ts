// The webview's only line to the extension host: typed postMessage and the saved view state.
import type { FromWebview, WebviewState } from "../src/webviewMessages";

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export class Host {
  private readonly api: VsCodeApi = acquireVsCodeApi(); // may be called once per page
  readonly state: WebviewState;

  constructor() {
    this.state = { sessionId: null, draft: "", scrollTop: 0, ...validState(this.api.getState()) };
  }

  post(message: FromWebview): void {
    this.api.postMessage(message);
  }

  save(change: Partial<WebviewState>): void {
    Object.assign(this.state, change);
    this.api.setState(this.state);
  }
}

/** The parts of a saved state that have the right types; anything else is dropped. */
function validState(raw: unknown): Partial<WebviewState> {
  if (typeof raw !== "object" || raw === null) return {};
  const r = raw as { [key: string]: unknown };
  const out: Partial<WebviewState> = {};
  if (typeof r.sessionId === "string") out.sessionId = r.sessionId;
  if (typeof r.draft === "string") out.draft = r.draft;
  if (typeof r.scrollTop === "number" && Number.isFinite(r.scrollTop)) out.scrollTop = r.scrollTop;
  if (typeof r.usageOpen === "boolean") out.usageOpen = r.usageOpen;
  const sent = r.sent as { [key: string]: unknown } | null | undefined;
  if (sent && typeof sent.text === "string" && (typeof sent.sessionId === "string" || sent.sessionId === null)) {
    out.sent = { text: sent.text, sessionId: sent.sessionId };
  }
  const returned = r.returned as { [key: string]: unknown } | null | undefined;
  if (typeof returned === "object" && returned !== null && !Array.isArray(returned)) {
    const texts = Object.entries(returned).filter((entry): entry is [string, string] => typeof entry[1] === "string");
    out.returned = Object.fromEntries(texts);
  }
  const anchor = r.scrollAnchor as { [key: string]: unknown } | null | undefined;
  if (anchor && typeof anchor.id === "string" && typeof anchor.delta === "number" && Number.isFinite(anchor.delta)) {
    out.scrollAnchor = { id: anchor.id, delta: anchor.delta };
  }
  return out;
}
