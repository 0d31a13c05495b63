// The wire models the chat webview shows, from the generated contract (src/protocol.ts).
// Type-only: nothing of protocol.ts is bundled into the webview.
export type {
  Breakdown,
  ContentBlock,
  DocumentBlock,
  ImageBlock,
  Message,
  ModelCatalog,
  ModelOption,
  RedactedThinkingBlock,
  Session,
  TextBlock,
  ThinkingBlock,
  TodoEntry,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
} from "../src/protocol";
export type {
  ToolCallInfo,
  ToolMessage,
  ToolPermissionParams,
  PermissionOutcome,
} from "../src/toolWire";
