/** The object activate() returns: the BatonApi (src/api.ts) over the running client. */
import * as vscode from "vscode";
import type { BatonApi } from "./api";
import { batonApi } from "./apiCalls";
import type { ChatView } from "./chatView";
import type { BatonClient } from "./client";
import type { CurrentSession } from "./currentSession";

export function createApi(client: BatonClient, chat: ChatView, current: CurrentSession): BatonApi {
  return batonApi({
    rpc: client.rpc,
    onDidChangeUsage: client.onDidChangeUsage,
    compactWithProgress: (run) => client.withProgress("Baton: compacting", vscode.ProgressLocation.Notification, run),
    // the meter (and the chat view) follow the session an API caller last changed
    follow: (sessionId) => {
      if (current.sessionId !== sessionId) {
        void chat.select(sessionId).catch(() => undefined);
      }
    },
  });
}
