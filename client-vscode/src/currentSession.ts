/** The session the user is looking at: the chat view's, or the last one an API caller used. */
import * as vscode from "vscode";
import type { Session, Usage } from "./protocol";

export class CurrentSession implements vscode.Disposable {
  private current: { session: Session; usage: Usage | undefined } | undefined;
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;

  get sessionId(): string | undefined {
    return this.current?.session.sessionId;
  }

  get session(): Session | undefined {
    return this.current?.session;
  }

  get usage(): Usage | undefined {
    return this.current?.usage;
  }

  set(session: Session, usage: Usage | undefined): void {
    this.current = { session, usage };
    this.emitter.fire();
  }

  /** A newer usage figure; ignored unless it is the current session's. */
  setUsage(sessionId: string, usage: Usage): void {
    if (this.current !== undefined && this.current.session.sessionId === sessionId) {
      this.current = { ...this.current, usage };
      this.emitter.fire();
    }
  }

  clear(): void {
    this.current = undefined;
    this.emitter.fire();
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
