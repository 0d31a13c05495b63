// The feed's row elements: each message's element, built by messageView.ts from the message
// and what it needs of the rest of the view (tool names and results, the summary it is, the
// files that summary restored, whether Retry shows), reused while all of that is unchanged
// (so open <details> stay open); the lists of what each compaction replaced, kept while the
// session is shown.
import { restoredBySummary, type SummaryPlace, summaryPlaces } from "./boundary";
import { LONG_TEXT_CHARS } from "./longText";
import { isPrompt } from "./messageActions";
import { type MessageExtra, messageElement } from "./messageView";
import { type ReplacedPage, ReplacedList } from "./replaced";
import { callsFor, type ToolContext, toolContext, toolNames } from "./toolCalls";
import type { Message } from "./wire";

/** What a row's element calls back. */
export interface RowHandlers {
  undo(boundaryId: string | undefined): void;
  /** A summary's "Summarized messages" opened: the page of compaction `boundaryId`'s from `offset`. */
  loadReplaced(boundaryId: string, offset: number): void;
}

/** Elements kept for messages scrolled out of the window (so they come back as they were). */
const KEEP_ELEMENTS = 300;
/** Asked-for diffs kept (a call whose turn was cancelled never gets the result that ends its entry). */
const KEEP_ASKED = 50;

interface Rendered {
  generation: number; // the render() it was checked in (the same one: no check again)
  signature: string;
  el: HTMLElement;
}

export class RowElements {
  private cache = new Map<string, Rendered>();
  private restored = new Map<string, string[]>();
  private places = new Map<string, SummaryPlace>();
  private lastSummary: string | undefined;
  private readOnly = false;
  private busy = false;
  private generation = 0;
  private toolNames = new Map<string, string>();
  private tools: ToolContext = toolContext([]);
  private replacedLists = new Map<string, ReplacedList>(); // by compaction: what was read stays
  private readonly asked = new Map<string, string>(); // the diffs of the edits permission was asked for

  constructor(private readonly handlers: RowHandlers) {}

  /** A render of `messages` begins: what every row's element depends on besides its message. */
  update(messages: readonly Message[], busy: boolean, readOnly: boolean): void {
    this.generation += 1;
    this.toolNames = toolNames(messages);
    this.tools = toolContext(messages, this.asked);
    for (const id of this.tools.toolResults.keys()) this.asked.delete(id); // answered: the server's diff is numbered
    this.restored = restoredBySummary(messages);
    this.places = summaryPlaces(messages);
    this.lastSummary = undefined;
    for (const m of messages) if (m.kind === "summary") this.lastSummary = m.id;
    this.readOnly = readOnly;
    this.busy = busy;
  }

  /** The element of `message` in row `row` (`last`: the view's last message). */
  element(message: Message, row: number, last: boolean): HTMLElement {
    const extra: MessageExtra = {
      files: this.restored.get(message.id),
      last: message.id === this.lastSummary,
      readOnly: this.readOnly,
      place: this.places.get(message.id),
      row: message.kind === "summary" ? row : undefined, // only a summary's title reads it
      retry: (message.role === "assistant" || isPrompt(message)) && last && !this.busy,
      editable: !this.busy, // an edit sends: not while a reply streams
    };
    const old = this.cache.get(message.id);
    let el: HTMLElement;
    if (old && old.generation === this.generation) el = old.el;
    else {
      const signature = JSON.stringify([message, extra, namesFor(message, this.toolNames), callsFor(message, this.tools)], longTextsDigested);
      el =
        old && old.signature === signature
          ? old.el
          : messageElement(message, { toolNames: this.toolNames, ...this.tools }, extra, this.handlers.undo, (id) =>
              this.replacedList(id),
            );
      this.cache.delete(message.id);
      this.cache.set(message.id, { generation: this.generation, signature, el });
    }
    return el;
  }

  /** Permission was asked for an edit: its numbered diff, shown in the call's line until the call has its result. */
  askedDiff(toolUseId: string, diff: string): void {
    this.asked.delete(toolUseId);
    this.asked.set(toolUseId, diff);
    if (this.asked.size > KEEP_ASKED) this.asked.delete(this.asked.keys().next().value ?? "");
  }

  /** Forget elements of messages no longer in the view (`loaded` says which are), and the oldest beyond the keep. */
  dropStale(loaded: (id: string) => boolean): void {
    for (const id of [...this.cache.keys()]) if (!loaded(id)) this.cache.delete(id);
    const extra = this.cache.size - KEEP_ELEMENTS;
    if (extra > 0) [...this.cache.keys()].slice(0, extra).forEach((id) => this.cache.delete(id));
  }

  /** The list of what compaction `boundaryId` replaced (one per compaction, moved into a card drawn again). */
  private replacedList(boundaryId: string): HTMLElement {
    let list = this.replacedLists.get(boundaryId);
    if (!list) {
      list = new ReplacedList(boundaryId, (offset) => this.handlers.loadReplaced(boundaryId, offset));
      this.replacedLists.set(boundaryId, list);
    }
    return list.el;
  }

  /** A page of what compaction `boundaryId` replaced, for its card's list. */
  replacedPage(boundaryId: string, page: ReplacedPage): void {
    this.replacedLists.get(boundaryId)?.receive(page);
  }

  /** Another session is shown: the lists read for this one go. */
  forgetReplaced(): void {
    this.replacedLists.clear();
  }
}

function namesFor(message: Message, toolNames: Map<string, string>): string[] {
  return message.content.flatMap((b) => (b.type === "tool_result" ? [toolNames.get(b.tool_use_id) ?? ""] : []));
}

/**
 * A signature's long texts as their length and ends: writing out a text of megabytes (its
 * escapes and all) for every render took longer than drawing its first part. A message
 * keeps its id only while its text stays as written (an edit or a retry makes a new one),
 * so a change to a long text is a change of message; its other fields are kept whole.
 */
function longTextsDigested(_key: string, value: unknown): unknown {
  if (typeof value !== "string" || value.length <= LONG_TEXT_CHARS) return value;
  return `${value.length}:${value.slice(0, 256)}…${value.slice(-256)}`;
}
