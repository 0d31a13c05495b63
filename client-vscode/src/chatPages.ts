/**
 * The pages the chat view reads beyond a session update's last page: the messages before
 * it, what a compaction replaced, a page at a time for its summary card, and the page of
 * one message of the session document that a long text's Open in editor goes to.
 */
import type { ChatPorts } from "./chatPorts";
import type { Message, Range } from "./protocol";
import { errorMessage } from "./rpc";

/** A view longer than this goes to the webview as its last page first, the rest on request. */
export const VIEW_PAGE = 120;
/** How many of a compaction's summarized messages one "show more" reads. */
export const REPLACED_PAGE = 40;

/**
 * The messages before `before` of the view last posted (`shown`: its session and messages),
 * when it is still the one shown.
 */
export function postEarlier(
  ports: ChatPorts,
  shown: { sessionId: string | undefined; messages: readonly Message[] },
  sessionId: string,
  before: number,
): void {
  if (sessionId !== shown.sessionId || before <= 0 || before > shown.messages.length) {
    return; // another session or view since: its own session update is on its way
  }
  const messages = shown.messages.slice(0, before);
  ports.post({ type: "earlier", sessionId, messages, totalMessages: shown.messages.length });
}

/** A page of what compaction `boundaryId` replaced, for its summary card (a failure is said there). */
export async function postReplaced(ports: ChatPorts, sessionId: string, boundaryId: string, offset: number): Promise<void> {
  const base = { type: "replaced" as const, sessionId, boundaryId, offset };
  try {
    const page = await ports.rpc.replaced(sessionId, boundaryId, offset, REPLACED_PAGE);
    ports.post({ ...base, messages: page.messages, totalMessages: page.totalMessages });
  } catch (error) {
    ports.post({ ...base, messages: [], totalMessages: 0, error: errorMessage(error) });
  }
}

/**
 * A long text's Open in editor: session `sessionId`'s document at message `messageId`'s
 * lines. A render of the page of that one message says where they are in the whole
 * document; a message the view does not hold (a summarized one) opens it from its top.
 */
export async function openMessage(ports: ChatPorts, sessionId: string, view: readonly Message[], messageId: string): Promise<void> {
  const index = view.findIndex((m) => m.id === messageId);
  let range: Range | undefined;
  if (index >= 0) {
    const page = await ports.rpc.render(sessionId, { offset: index, limit: 1 });
    // a view changed meanwhile answers another message: the document from its top then
    range = page.messages.find((m) => m.messageId === messageId)?.range;
  }
  await ports.showSessionDocument(sessionId, range);
}
