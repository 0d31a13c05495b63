/**
 * The BatonApi's calls over the server, each argument checked first (pure: no vscode import;
 * apiImpl.ts supplies the ports). Other extensions call it from plain JavaScript as often as
 * not: a bad argument is refused with an error that names it, before anything is sent.
 */
import type { BatonApi, BatonEvent, ClientContext, CompactOptions, UsageChange } from "./api";
import { ErrorCodes } from "./protocol";
import type { BatonRpc, CallOptions } from "./rpc";

export interface ApiPorts {
  rpc: Pick<BatonRpc, "createSession" | "append" | "getSession" | "usage" | "compact" | "uncompact">;
  onDidChangeUsage: BatonEvent<UsageChange>;
  /** Runs a compaction under editor progress. */
  compactWithProgress<T>(run: (options: CallOptions) => Promise<T>): Promise<T>;
  /** The meter (and the chat view) follow the session an API caller last changed. */
  follow(sessionId: string): void;
}

/** A call the API refused for its arguments; `data.code` as the server's errors carry it. */
export class BatonApiError extends Error {
  readonly data = { code: ErrorCodes.invalidParams };

  constructor(call: string, problem: string) {
    super(`Baton API: ${call}: ${problem}`);
    this.name = "BatonApiError";
  }
}

function sessionIdOf(call: string, value: unknown, name = "sessionId"): string {
  if (typeof value !== "string" || value === "") {
    throw new BatonApiError(call, `${name} must be a non-empty string, got ${shown(value)}`);
  }
  return value;
}

function objectOf<T extends object>(call: string, name: string, value: T | undefined, fallback: T | undefined): T | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new BatonApiError(call, `${name} must be an object, got ${shown(value)}`);
  }
  return value;
}

const CREATE_KEYS = ["title", "systemPrompt", "model", "clientContext"] as const satisfies readonly (keyof NonNullable<Parameters<BatonApi["createSession"]>[0]>)[];
const COMPACT_KEYS = ["direction", "pivotMessageId", "endMessageId", "instructions", "dryRun"] as const satisfies readonly (keyof CompactOptions)[];
const CONTEXT_KEYS = ["systemTokens", "toolsTokens", "system", "tools"] as const satisfies readonly (keyof ClientContext)[];

/**
 * `value`, whose keys are all `known`: the server leaves out a key it does not know, so a
 * misspelt one went unsaid (`dryrun: true` compacted for real).
 */
function knownKeys<T extends object | undefined>(call: string, name: string, value: T, known: readonly string[]): T {
  const unknown = Object.keys(value ?? {}).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    throw new BatonApiError(call, `${name} has no ${unknown.map((key) => JSON.stringify(key)).join(", ")} (it takes ${known.join(", ")})`);
  }
  return value;
}

/**
 * `value`, checked to be one JSON can carry: a BigInt, a cycle or a toJSON that throws failed
 * vscode-jsonrpc's writer, whose error the LanguageClient takes for a broken connection: it
 * stopped the server. NaN and the infinities went as null, which the server reads as a
 * value not given.
 */
function jsonOf<T>(call: string, name: string, value: T): T {
  try {
    JSON.stringify(value, (key: string, item: unknown) => {
      if (typeof item === "number" && !Number.isFinite(item)) {
        throw new Error(`${JSON.stringify(key)} is ${String(item)}, which JSON cannot carry`);
      }
      return item;
    });
  } catch (error) {
    const why = (error instanceof Error ? error.message : String(error)).split("\n")[0];
    throw new BatonApiError(call, `${name} cannot be sent as JSON (${why})`);
  }
  return value;
}

function shown(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? (value === "" ? "an empty string" : "a string") : typeof value;
}

export function batonApi(ports: ApiPorts): BatonApi {
  const { rpc, follow } = ports;
  return {
    version: 1,
    async createSession(options) {
      const checked = knownKeys("createSession", "options", objectOf("createSession", "options", options, {})!, CREATE_KEYS);
      knownKeys("createSession", "clientContext", objectOf("createSession", "clientContext", checked.clientContext, undefined), CONTEXT_KEYS);
      jsonOf("createSession", "options", checked);
      const session = await rpc.createSession(checked);
      follow(session.sessionId);
      return session;
    },
    async append(sessionId, messages, clientContext) {
      const id = sessionIdOf("append", sessionId);
      if (!Array.isArray(messages)) throw new BatonApiError("append", `messages must be an array, got ${shown(messages)}`);
      const context = knownKeys("append", "clientContext", objectOf("append", "clientContext", clientContext, undefined), CONTEXT_KEYS);
      jsonOf("append", "clientContext", context);
      const result = await rpc.append(id, jsonOf("append", "messages", messages), context);
      follow(id);
      return result;
    },
    async getView(sessionId) {
      return (await rpc.getSession(sessionIdOf("getView", sessionId))).messages;
    },
    async getUsage(sessionId) {
      return rpc.usage(sessionIdOf("getUsage", sessionId));
    },
    // a listener that is no function was taken, and failed on every usage change after
    onDidChangeUsage: (listener, ...rest: unknown[]) => {
      if (typeof listener !== "function") {
        throw new BatonApiError("onDidChangeUsage", `listener must be a function, got ${shown(listener)}`);
      }
      // vscode.Event's thisArgs and disposables, when the caller passes them, go through
      return (ports.onDidChangeUsage as (...args: unknown[]) => { dispose(): unknown })(listener, ...rest);
    },
    async compact(sessionId, options) {
      const id = sessionIdOf("compact", sessionId);
      const checked = knownKeys("compact", "options", objectOf("compact", "options", options, {})!, COMPACT_KEYS);
      jsonOf("compact", "options", checked);
      const result = await ports.compactWithProgress((call) => rpc.compact(id, checked, call));
      if (!result.dryRun) follow(id); // a plan changed nothing: the view stays where the user has it
      return result;
    },
    async uncompact(sessionId, boundaryId) {
      const id = sessionIdOf("uncompact", sessionId);
      const boundary = boundaryId === undefined ? undefined : sessionIdOf("uncompact", boundaryId, "boundaryId");
      const result = await rpc.uncompact(id, boundary);
      follow(id);
      return result;
    },
  };
}
