/** The object activate() returns: the BatonApi (src/api.ts) over the running client. */
import * as vscode from "vscode";
import type { BatonApi } from "./api";
import type { ChatView } from "./chatView";
import type { BatonClient } from "./client";
import type { CurrentSession } from "./currentSession";

export function createApi(client: BatonClient, chat: ChatView, current: CurrentSession): BatonApi {
  // the meter (and the chat view) follow the session an API caller last changed
  const follow = (sessionId: string): void => {
    if (current.sessionId !== sessionId) {
      void chat.select(sessionId).catch(() => undefined);
    }
  };
  return {
    version: 1,
    async createSession(options = {}) {
      const session = await client.rpc.createSession(options);
      follow(session.sessionId);
      return session;
    },
    async append(sessionId, messages, clientContext) {
      const result = await client.rpc.append(sessionId, messages, clientContext);
      follow(sessionId);
      return result;
    },
    async getView(sessionId) {
      return (await client.rpc.getSession(sessionId)).messages;
    },
    getUsage(sessionId) {
      return client.rpc.usage(sessionId);
    },
    onDidChangeUsage: client.onDidChangeUsage,
    async compact(sessionId, options = {}) {
      const result = await client.withProgress("Baton: compacting", vscode.ProgressLocation.Notification, (call) =>
        client.rpc.compact(sessionId, options, call),
      );
      follow(sessionId);
      return result;
    },
    async uncompact(sessionId, boundaryId) {
      const result = await client.rpc.uncompact(sessionId, boundaryId);
      follow(sessionId);
      return result;
    },
  };
}
