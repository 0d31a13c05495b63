/**
 * The workspace-tools shapes of the wire contract the extension reads: the server's
 * `baton/tool/permission` request and its answer, a message's `toolCalls`, and the
 * attachments a send carries. The attachment comes from the generated protocol.ts; the
 * permission request and ToolCallInfo are written here, field for field as the contract
 * names them, until protocol.ts carries them (then these become re-exports of it).
 */
import type { Message, SendParams } from "./protocol";

/** One attachment of `baton/session/send` (the generated SendParams's own item type). */
export type SendAttachment = NonNullable<SendParams["attachments"]>[number];

export type ToolKind = "read" | "search" | "edit" | "other";
export type PermissionOutcome = "allowOnce" | "allowSession" | "deny";
export const PERMISSION_OUTCOMES: readonly PermissionOutcome[] = ["allowOnce", "allowSession", "deny"];

export interface ToolPermissionOption {
  id: PermissionOutcome;
  label: string;
}

/** `baton/tool/permission`'s params: the server asks before it runs a tool whose level is `ask`. */
export interface ToolPermissionParams {
  sessionId: string;
  toolUseId: string;
  tool: string;
  input: { [key: string]: unknown };
  /** e.g. "Edit utils.py (+4 -1)", "Read app.py:1-80" */
  title: string;
  kind: ToolKind;
  path?: string;
  /** the edit as a unified diff */
  diff?: string;
  options: ToolPermissionOption[];
}

export interface ToolPermissionResult {
  outcome: PermissionOutcome;
}

export type ToolCallStatus = "pending" | "running" | "done" | "denied" | "failed";

/** How the server describes one tool call of a message (computed for the view, never stored). */
export interface ToolCallInfo {
  toolUseId: string;
  tool: string;
  title: string;
  status: ToolCallStatus;
  /** e.g. "12 hits", "80 lines", "applied", "file changed meanwhile" */
  summary?: string;
  path?: string;
  diff?: string;
}

/** A view message as the server sends it once it runs tools. */
export type ToolMessage = Message & { toolCalls?: ToolCallInfo[] };

/** The request the server sends; the initialize capability that says the client answers it. */
export const TOOL_PERMISSION_METHOD = "baton/tool/permission";

/**
 * The params of a permission request, checked: the request comes off the wire untyped, and
 * a malformed one is answered deny rather than guessed at. Null when it is malformed.
 */
export function permissionParams(raw: unknown): ToolPermissionParams | null {
  if (typeof raw !== "object" || raw === null) return null;
  const r = raw as { [key: string]: unknown };
  const str = (v: unknown): v is string => typeof v === "string";
  if (!str(r.sessionId) || !str(r.toolUseId) || !str(r.tool) || !str(r.title)) return null;
  if (r.kind !== "read" && r.kind !== "search" && r.kind !== "edit" && r.kind !== "other") return null;
  if (typeof r.input !== "object" || r.input === null || Array.isArray(r.input)) return null;
  if (r.path !== undefined && r.path !== null && !str(r.path)) return null;
  if (r.diff !== undefined && r.diff !== null && !str(r.diff)) return null;
  if (!Array.isArray(r.options)) return null;
  const options: ToolPermissionOption[] = [];
  for (const o of r.options as unknown[]) {
    if (typeof o !== "object" || o === null) return null;
    const { id, label } = o as { id?: unknown; label?: unknown };
    if (!PERMISSION_OUTCOMES.includes(id as PermissionOutcome) || !str(label)) return null;
    options.push({ id: id as PermissionOutcome, label });
  }
  if (options.length === 0) return null;
  const params: ToolPermissionParams = {
    sessionId: r.sessionId,
    toolUseId: r.toolUseId,
    tool: r.tool,
    input: r.input as { [key: string]: unknown },
    title: r.title,
    kind: r.kind,
    options,
  };
  if (str(r.path)) params.path = r.path;
  if (str(r.diff)) params.diff = r.diff;
  return params;
}

/** An option's label as shown: an edit's allow once / deny read Accept / Reject. */
export function optionLabel(request: Pick<ToolPermissionParams, "kind">, id: PermissionOutcome, label: string): string {
  if (request.kind === "edit" && id === "allowOnce") return "Accept";
  if (request.kind === "edit" && id === "deny") return "Reject";
  return label;
}
