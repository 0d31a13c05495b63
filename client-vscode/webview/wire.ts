// The wire models the chat webview shows, as the server sends them (docs/PROTOCOL.md, camelCase).
// The content blocks typed one by one, as the generated src/protocol.ts will have them; until
// it does, src/protocol.ts types a block as {type: string}. Type-only, nothing is emitted.

export interface TextBlock {
  type: "text";
  text: string;
}
export interface ImageBlock {
  type: "image";
  source: { [key: string]: unknown };
}
export interface DocumentBlock {
  type: "document";
  source: { [key: string]: unknown };
}
export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input?: unknown;
}
export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | { [key: string]: unknown }[] | null;
  is_error?: boolean | null;
}
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  signature?: string | null;
}
export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}
export type ContentBlock =
  TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock;

export interface Message {
  id: string;
  role: "user" | "assistant";
  kind?: "message" | "summary" | "attachment";
  content: ContentBlock[];
  createdAt?: string;
  tokens?: number;
  pinned?: boolean;
  stopReason?: string | null;
  boundaryId?: string | null;
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
  usedTokens: number;
  percentUsed: number;
  percentLeft: number;
  state: "ok" | "warning" | "error" | "blocking";
  estimated: boolean;
  autoCompactEnabled: boolean;
  autoCompactPaused: boolean;
  breakdown: Breakdown;
}
