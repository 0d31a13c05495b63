/**
 * The panel's pickers on the host side: the models to choose from (`baton/models`), and the
 * session list as the session picker shows it, with a rename or a delete. The webview keeps
 * no list of its own that the host relies on: it asks, and gets the answer posted.
 */
import { errorMessage, type BatonRpc } from "./rpc";
import type { ToWebview } from "./webviewMessages";

export interface PickerPorts {
  rpc: Pick<BatonRpc, "listModels" | "listSessions" | "renameSession" | "deleteSession">;
  post(message: ToWebview): void;
  currentSessionId(): string | undefined;
  /** Shows the current session again (or the newest, when the current one went). */
  refresh(): Promise<void>;
}

export class PickerHost {
  constructor(private readonly ports: PickerPorts) {}

  /** The model picker's rows; a failure is said in the picker, not as a banner. */
  async models(): Promise<void> {
    try {
      const catalog = await this.ports.rpc.listModels(this.ports.currentSessionId());
      this.ports.post({ type: "models", catalog });
    } catch (error) {
      this.ports.post({ type: "models", catalog: null, message: `The models could not be listed: ${errorMessage(error)}` });
    }
  }

  async sessions(): Promise<void> {
    this.ports.post({ type: "sessions", sessions: await this.ports.rpc.listSessions() });
  }

  async rename(sessionId: string, title: string): Promise<void> {
    await this.ports.rpc.renameSession(sessionId, title);
    if (sessionId === this.ports.currentSessionId()) await this.ports.refresh(); // the header's title
    await this.sessions();
  }

  /** The picker asked the user first; the server hides the session (its file stays). */
  async delete(sessionId: string): Promise<void> {
    await this.ports.rpc.deleteSession(sessionId);
    if (sessionId === this.ports.currentSessionId()) await this.ports.refresh();
    await this.sessions();
  }
}
