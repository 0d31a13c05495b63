// Temporary hand-written wire contract, replaced by the generated one (python -m baton.contract).
/* eslint-disable */

export const SETTINGS_SECTION = "baton";

export type Role = "user" | "assistant";
export type ContentBlock = { type: string; [key: string]: unknown };

export interface ApiUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

export interface Session {
  sessionId: string;
  title: string;
  model: string;
  createdAt: string;
  updatedAt: string;
  uri: string;
  compactions: number;
}

export interface MessageInput {
  role: Role;
  content: string | ContentBlock[];
  id?: string;
  apiMessageId?: string;
  usage?: ApiUsage;
}

export interface Message {
  id: string;
  role: Role;
  kind: "message" | "summary" | "attachment";
  content: ContentBlock[];
  createdAt: string;
  tokens: number;
  apiMessageId?: string | null;
  usage?: ApiUsage | null;
  pinned?: boolean;
  stopReason?: string | null;
}

export interface Breakdown {
  system: number;
  tools: number;
  messages: number;
  summary: number;
  attachments: number;
  free: number;
}

export interface Usage {
  sessionId: string;
  model: string;
  contextWindow: number;
  effectiveWindow: number;
  autoCompactThreshold: number;
  warningThreshold: number;
  errorThreshold: number;
  blockingLimit: number;
  usedTokens: number;
  percentUsed: number;
  percentLeft: number;
  state: "ok" | "warning" | "error" | "blocking";
  estimated: boolean;
  autoCompactEnabled: boolean;
  autoCompactPaused: boolean;
  breakdown: Breakdown;
}

export interface RestoredFile {
  uri: string;
  tokens: number;
  truncated: boolean;
}

export type Direction = "all" | "up_to" | "from" | "range";

export interface CompactResult {
  boundaryId: string;
  direction: Direction;
  summary: string | null;
  summarizedMessageIds: string[];
  keptMessageIds: string[];
  restoredFiles: RestoredFile[];
  preTokens: number;
  postTokens: number;
  trigger: "manual" | "auto";
  summarizer: string;
}

export interface CompactParams {
  sessionId: string;
  direction?: Direction;
  pivotMessageId?: string;
  endMessageId?: string;
  instructions?: string;
  dryRun?: boolean;
}

export interface RenderResult {
  uri: string;
  text: string;
  version: number;
  messages: { messageId: string; range: { start: { line: number; character: number }; end: { line: number; character: number } } }[];
}

export interface RequestMap {
  "baton/session/create": { params: { title?: string; systemPrompt?: string; model?: string }; result: Session };
  "baton/session/list": { params: Record<string, never>; result: { sessions: Session[] } };
  "baton/session/get": { params: { sessionId: string }; result: { session: Session; messages: Message[]; usage: Usage } };
  "baton/session/delete": { params: { sessionId: string }; result: Record<string, never> };
  "baton/session/append": {
    params: { sessionId: string; messages: MessageInput[] };
    result: { messageIds: string[]; usage: Usage; repairs: string[] };
  };
  "baton/session/send": {
    params: { sessionId: string; content?: string | ContentBlock[]; tools?: Record<string, unknown>[] };
    result: { message: Message; usage: Usage };
  };
  "baton/session/render": { params: { sessionId: string }; result: RenderResult };
  "baton/session/import": { params: { path: string; format: "claude-code" }; result: Session };
  "baton/session/pin": { params: { sessionId: string; messageId: string; pinned: boolean }; result: Message };
  "baton/usage": { params: { sessionId: string }; result: Usage };
  "baton/compact": { params: CompactParams; result: CompactResult };
  "baton/uncompact": { params: { sessionId: string; boundaryId?: string }; result: { usage: Usage } };
}

export interface ServerNotificationMap {
  "baton/usageChanged": { sessionId: string; usage: Usage };
  "baton/sessionChanged": {
    sessionId: string;
    reason: "append" | "reply" | "compact" | "uncompact" | "delete" | "create" | "pin";
  };
  "baton/session/delta": { sessionId: string; messageId: string; text: string };
}

export interface ClientNotificationMap {
  "baton/activeEditor": { uri: string | null };
}

export const Requests = {
  sessionCreate: "baton/session/create",
  sessionList: "baton/session/list",
  sessionGet: "baton/session/get",
  sessionDelete: "baton/session/delete",
  sessionAppend: "baton/session/append",
  sessionSend: "baton/session/send",
  sessionRender: "baton/session/render",
  sessionImport: "baton/session/import",
  sessionPin: "baton/session/pin",
  usage: "baton/usage",
  compact: "baton/compact",
  uncompact: "baton/uncompact",
} as const;

export const Notifications = {
  usageChanged: "baton/usageChanged",
  sessionChanged: "baton/sessionChanged",
  sessionDelta: "baton/session/delta",
  activeEditor: "baton/activeEditor",
} as const;

export const Commands = {
  compact: "baton.compact",
  compactUpTo: "baton.compactUpTo",
  compactFrom: "baton.compactFrom",
  previewCompact: "baton.previewCompact",
  compactRange: "baton.compactRange",
  uncompact: "baton.uncompact",
} as const;

export const ErrorCodes = {
  sessionNotFound: "session_not_found",
  messageNotFound: "message_not_found",
  invalidParams: "invalid_params",
  nothingToCompact: "nothing_to_compact",
  compactionInProgress: "compaction_in_progress",
  summarizerFailed: "summarizer_failed",
  promptTooLong: "prompt_too_long",
  sessionLocked: "session_locked",
  apiKeyMissing: "api_key_missing",
  apiError: "api_error",
} as const;
