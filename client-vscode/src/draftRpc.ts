/**
 * Compaction drafts over the wire (baton/compact/preview, applyDraft, discardDraft): typed
 * calls, pure (no vscode import), like rpc.ts.
 */
import { Requests, type CompactDraft, type CompactResult, type DraftPreviewParams } from "./protocol";
import { dropUndefined, request, type CallOptions, type RequestSender } from "./rpc";

/** What a preview asks for: baton/compact/preview's params without the session. */
export type DraftOptions = Omit<DraftPreviewParams, "sessionId">;

export class DraftRpc {
  constructor(private readonly sender: RequestSender) {}

  preview(sessionId: string, draft: DraftOptions, options: CallOptions = {}): Promise<CompactDraft> {
    return request(this.sender, Requests.compactPreview, { sessionId, ...dropUndefined(draft) }, options);
  }

  /** `summary`: the text as the user edited it; undefined applies the draft as written. */
  apply(sessionId: string, draftId: string, summary?: string, options: CallOptions = {}): Promise<CompactResult> {
    const params = summary === undefined ? { sessionId, draftId } : { sessionId, draftId, summary };
    return request(this.sender, Requests.compactApplyDraft, params, options);
  }

  discard(sessionId: string, draftId: string): Promise<Record<string, never>> {
    return request(this.sender, Requests.compactDiscardDraft, { sessionId, draftId });
  }
}
