/**
 * The workspace-tools shapes of the wire contract the extension reads: the server's
 * `baton/tool/permission` request and its answer, a message's `toolCalls`, and the
 * attachments a send carries. Every shape is the generated protocol.ts's (the one source,
 * `python -m baton.contract` writes it); this module names their parts and checks a
 * permission request that comes off the wire untyped.
 */
import type { Message, SendParams, ToolCallInfo, ToolPermissionOption, ToolPermissionParams, ToolPermissionResult } from "./protocol";

export type { ToolCallInfo, ToolPermissionOption, ToolPermissionParams, ToolPermissionResult } from "./protocol";

/** One attachment of `baton/session/send` (the generated SendParams's own item type). */
export type SendAttachment = NonNullable<SendParams["attachments"]>[number];

export type ToolKind = ToolPermissionParams["kind"];
export type PermissionOutcome = ToolPermissionResult["outcome"];
export type ToolCallStatus = ToolCallInfo["status"];

/** Each outcome once: the compiler checks this list against the generated union both ways. */
const OUTCOMES = { allowOnce: true, allowSession: true, deny: true } satisfies { [id in PermissionOutcome]: true };
export const PERMISSION_OUTCOMES: readonly PermissionOutcome[] = Object.keys(OUTCOMES) as PermissionOutcome[];
const KINDS = { read: true, search: true, edit: true, other: true } satisfies { [kind in ToolKind]: true };

/** A view message as the server sends it (the generated Message carries `toolCalls`). */
export type ToolMessage = Message;

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
  if (!str(r.kind) || !Object.hasOwn(KINDS, r.kind)) return null;
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
    kind: r.kind as ToolKind,
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
