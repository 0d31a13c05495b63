/**
 * The panel's pickers on the host side: the models to choose from (`baton/models`) and the
 * switch to one (`baton/session/setModel`), and the session list as the session picker shows it, with a rename or a delete. The webview keeps
 * no list of its own that the host relies on: it asks, and gets the answer posted.
 */
import type { CurrentSession } from "./currentSession";
import type { ModelSwitch } from "./protocol";
import { errorMessage, type BatonRpc } from "./rpc";
import type { ToWebview } from "./webviewMessages";

export interface PickerPorts {
  rpc: Pick<BatonRpc, "listModels" | "setModel" | "listSessions" | "renameSession" | "deleteSession">;
  post(message: ToWebview): void;
  /** The session on show (a model switch makes its new usage current). */
  current: CurrentSession;
  /** Shows the current session again (or the newest, when the current one went). */
  refresh(): Promise<void>;
  /** The draft weighs differently under another model: its line is asked for again. */
  draftChanged(): void;
}

export class PickerHost {
  constructor(private readonly ports: PickerPorts) {}

  /** The model picker's rows; a failure is said in the picker, not as a banner. */
  async models(): Promise<void> {
    try {
      const catalog = await this.ports.rpc.listModels(this.ports.current.sessionId);
      this.ports.post({ type: "models", catalog });
    } catch (error) {
      this.ports.post({ type: "models", catalog: null, message: `The models could not be listed: ${errorMessage(error)}` });
    }
  }

  /**
   * Switches `sessionId`'s model (the current session's by default: none, nothing); a
   * warning when it no longer fits is said in the panel, when it is on show.
   */
  async switchModel(model: string, sessionId = this.ports.current.sessionId): Promise<ModelSwitch | undefined> {
    const { current, post } = this.ports;
    if (sessionId === undefined) return undefined;
    const result = await this.ports.rpc.setModel(sessionId, model);
    if (current.sessionId === sessionId) {
      current.set(result.session, result.usage);
      post({ type: "usage", sessionId, usage: result.usage });
      if (result.warning !== undefined) {
        post({ type: "notice", sessionId, message: result.warning, tone: "warning", about: "model" });
      } else {
        // an earlier switch's "over its limit" no longer holds for this model
        post({ type: "noticeEnd", sessionId, about: "model" });
      }
      this.ports.draftChanged();
    }
    return result;
  }

  async sessions(): Promise<void> {
    this.ports.post({ type: "sessions", sessions: await this.ports.rpc.listSessions() });
  }

  async rename(sessionId: string, title: string): Promise<void> {
    await this.ports.rpc.renameSession(sessionId, title);
    if (sessionId === this.ports.current.sessionId) await this.ports.refresh(); // the header's title
    await this.sessions();
  }

  /** The picker asked the user first; the server hides the session (its file stays). */
  async delete(sessionId: string): Promise<void> {
    await this.ports.rpc.deleteSession(sessionId);
    if (sessionId === this.ports.current.sessionId) await this.ports.refresh();
    await this.sessions();
  }
}
