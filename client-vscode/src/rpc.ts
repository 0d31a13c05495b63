/**
 * Typed requests over the wire contract: every call the extension makes, in the exact shape
 * it sends. Pure (no vscode import): the extension runs it over its LanguageClient and the
 * protocol test over a plain connection to a real `baton serve`.
 */
import type { CancellationToken } from "vscode-languageserver-protocol";
import {
  Commands,
  Requests,
  type CommandMap,
  type ClientContext,
  type CompactParams,
  type CompactResult,
  type Draft,
  type DraftUsage,
  type ImportedSession,
  type Message,
  type ModelCatalog,
  type ModelSwitch,
  type MessageInput,
  type RequestMap,
  type SendParams,
  type ReplacedMessages,
  type RewindResult,
  type Session,
  type Usage,
} from "./protocol";
import type { SendAttachment } from "./toolWire";

// what a failed request means and says, for the callers of these requests
export { answerLost, errorCode, errorMessage, isCancellation, SERVER_GONE, serverGone, ServerNotRunning } from "./requestFailures";

export type Method = keyof RequestMap;
export type Params<M extends Method> = RequestMap[M]["params"];
export type Result<M extends Method> = RequestMap[M]["result"];
export type ProgressToken = string | number;

/** What both a LanguageClient and a ProtocolConnection offer. */
export interface RequestSender {
  sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R>;
}

/** Per-call options: cancellation and a client-chosen work-done progress token. */
export interface CallOptions {
  token?: CancellationToken;
  workDoneToken?: ProgressToken;
}

/** The one typed door to the server: method and params checked against RequestMap. */
export function request<M extends Method>(
  sender: RequestSender,
  method: M,
  params: Params<M>,
  options: CallOptions = {},
): Promise<Result<M>> {
  const wire: Params<M> & { workDoneToken?: ProgressToken } =
    options.workDoneToken === undefined ? params : { ...params, workDoneToken: options.workDoneToken };
  // never pass an undefined token: jsonrpc would take it as a second parameter and send a list
  return options.token === undefined
    ? sender.sendRequest<Result<M>>(method, wire)
    : sender.sendRequest<Result<M>>(method, wire, options.token);
}

export type CommandName = keyof CommandMap;
export const EXECUTE_COMMAND = "workspace/executeCommand";

/** A server command (workspace/executeCommand) with its argument and result checked against
 * CommandMap: what the command itself fixes (a pivot command's direction) stays in the server. */
export function command<C extends CommandName>(
  sender: RequestSender,
  name: C,
  argument: CommandMap[C]["arguments"][0],
  options: CallOptions = {},
): Promise<CommandMap[C]["result"]> {
  const params = { command: name, arguments: [argument] };
  const wire = options.workDoneToken === undefined ? params : { ...params, workDoneToken: options.workDoneToken };
  return options.token === undefined
    ? sender.sendRequest<CommandMap[C]["result"]>(EXECUTE_COMMAND, wire)
    : sender.sendRequest<CommandMap[C]["result"]>(EXECUTE_COMMAND, wire, options.token);
}

/** A compaction as the extension asks for it: baton/compact's params without the session. */
export type CompactOptions = Omit<CompactParams, "sessionId">;

/** The calls the extension makes, by what they do. */
export class BatonRpc {
  constructor(private readonly sender: RequestSender) {}

  async listSessions(): Promise<Session[]> {
    return (await request(this.sender, Requests.sessionList, {})).sessions;
  }

  createSession(
    options: { title?: string; systemPrompt?: string; model?: string; clientContext?: ClientContext } = {},
  ): Promise<Session> {
    return request(this.sender, Requests.sessionCreate, dropUndefined(options));
  }

  getSession(sessionId: string): Promise<Result<typeof Requests.sessionGet>> {
    return request(this.sender, Requests.sessionGet, { sessionId });
  }

  /** `clientContext`: what the caller sends its model besides these messages, when it changed. */
  append(
    sessionId: string,
    messages: MessageInput[],
    clientContext?: ClientContext,
  ): Promise<Result<typeof Requests.sessionAppend>> {
    const params = clientContext === undefined ? { sessionId, messages } : { sessionId, messages, clientContext };
    return request(this.sender, Requests.sessionAppend, params);
  }

  /** A prompt (or, with no text, a continuation) with the editor's attachments; deltas arrive as notifications. */
  send(
    sessionId: string,
    text: string | undefined,
    options: CallOptions = {},
    attachments: readonly SendAttachment[] = [],
  ): Promise<Result<typeof Requests.sessionSend>> {
    const params: SendParams = text === undefined ? { sessionId } : { sessionId, content: text };
    if (attachments.length > 0) params.attachments = [...attachments];
    return request(this.sender, Requests.sessionSend, params, options);
  }

  /** The session document's text, or (`page`) one page of its messages with their lines in the whole document. */
  render(sessionId: string, page?: { offset: number; limit: number }): Promise<Result<typeof Requests.sessionRender>> {
    return request(this.sender, Requests.sessionRender, page === undefined ? { sessionId } : { sessionId, ...page });
  }

  importClaudeCode(path: string, options: CallOptions = {}): Promise<ImportedSession> {
    return request(this.sender, Requests.sessionImport, { path, format: "claude-code" }, options);
  }

  pin(sessionId: string, messageId: string, pinned: boolean): Promise<Message> {
    return request(this.sender, Requests.sessionPin, { sessionId, messageId, pinned });
  }

  usage(sessionId: string): Promise<Usage> {
    return request(this.sender, Requests.usage, { sessionId });
  }

  /** The usage as it would be once `draft` is sent, and what Send would do (nothing is written). */
  draftUsage(sessionId: string, draft: Draft): Promise<DraftUsage> {
    return request(this.sender, Requests.usage, { sessionId, draft: dropUndefined(draft) });
  }

  /** The models to choose from (the Models API's, or the configured list and why), `sessionId`'s marked. */
  listModels(sessionId?: string): Promise<ModelCatalog> {
    return request(this.sender, Requests.models, sessionId === undefined ? {} : { sessionId });
  }

  /** A new title (the server appends it to the transcript). */
  renameSession(sessionId: string, title: string): Promise<Session> {
    return request(this.sender, Requests.sessionRename, { sessionId, title });
  }

  /** Hides the session (its transcript stays on disk). */
  async deleteSession(sessionId: string): Promise<void> {
    await request(this.sender, Requests.sessionDelete, { sessionId });
  }

  /** Switches the session's model; the usage comes back against the new model's budget. */
  setModel(sessionId: string, model: string): Promise<ModelSwitch> {
    return request(this.sender, Requests.sessionSetModel, { sessionId, model });
  }

  compact(sessionId: string, compact: CompactOptions = {}, options: CallOptions = {}): Promise<CompactResult> {
    return request(this.sender, Requests.compact, { sessionId, ...dropUndefined(compact) }, options);
  }

  // "Compact up to here" and its kin run the commands the session document's code actions
  // carry, so each direction is set in one place, the server's command.
  compactUpTo(sessionId: string, messageId: string, options: CallOptions = {}): Promise<CompactResult> {
    return command(this.sender, Commands.compactUpTo, { sessionId, pivotMessageId: messageId }, options);
  }

  compactFrom(sessionId: string, messageId: string, options: CallOptions = {}): Promise<CompactResult> {
    return command(this.sender, Commands.compactFrom, { sessionId, pivotMessageId: messageId }, options);
  }

  compactRange(sessionId: string, first: string, last: string, options: CallOptions = {}): Promise<CompactResult> {
    const range = { sessionId, pivotMessageId: first, endMessageId: last };
    return command(this.sender, Commands.compactRange, range, options);
  }

  preview(sessionId: string, options: CallOptions = {}): Promise<CompactResult> {
    return this.compact(sessionId, { direction: "all", dryRun: true }, options);
  }

  /** Takes `messageId` and every later message out of the view (edit a prompt, retry a reply); undone with `uncompact`. */
  rewind(sessionId: string, messageId: string): Promise<RewindResult> {
    return request(this.sender, Requests.sessionRewind, { sessionId, messageId });
  }

  /** A page of the messages compaction `boundaryId` replaced, as the transcript holds them. */
  replaced(sessionId: string, boundaryId: string, offset: number, limit: number): Promise<ReplacedMessages> {
    return request(this.sender, Requests.sessionReplaced, { sessionId, boundaryId, offset, limit });
  }

  uncompact(sessionId: string, boundaryId?: string): Promise<{ usage: Usage }> {
    const params = boundaryId === undefined ? { sessionId } : { sessionId, boundaryId };
    return request(this.sender, Requests.uncompact, params);
  }
}

/** Leaves out keys whose value is undefined, so the wire carries only what was chosen. */
export function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The requests sent and not yet answered (a reply streaming, a compaction): what a restart
 * the extension makes by itself (a new API key, say) waits for, as a restart ends them.
 */
export class RequestsInFlight {
  private readonly pending = new Set<Promise<unknown>>();

  get count(): number {
    return this.pending.size;
  }

  /** `request`, counted until it settles. */
  track<R>(request: Promise<R>): Promise<R> {
    const settled = request.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
    return request;
  }

  /** Resolves once no request is in flight: one sent while it waits is waited for too. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
