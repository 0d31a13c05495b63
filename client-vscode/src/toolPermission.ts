/**
 * The answer to the server's `baton/tool/permission` request, and the initialize capability
 * that says the extension gives one. The panel's card asks when the panel is on screen, a
 * modal dialog otherwise; a withdrawn request (the turn was cancelled), a dismissed dialog or
 * a malformed request is answered deny. Pure (no vscode import): the editor side supplies
 * the ports.
 */
import type { CancellationToken } from "vscode-languageserver-protocol";
import type { ClientCapabilities, FeatureState, StaticFeature } from "vscode-languageclient";
import { optionLabel, permissionParams, TOOL_PERMISSION_METHOD, type PermissionOutcome, type ToolPermissionParams, type ToolPermissionResult } from "./toolWire";

const DENY: ToolPermissionResult = { outcome: "deny" };

/** Declares `capabilities.experimental.baton.toolPermission = true` in initialize. */
export class ToolPermissionFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = isObject(capabilities.experimental) ? capabilities.experimental : {};
    const baton = isObject(experimental.baton) ? experimental.baton : {};
    capabilities.experimental = { ...experimental, baton: { ...baton, toolPermission: true } };
  }

  initialize(): void {
    // nothing to set up: the request handler is registered with the client
  }

  getState(): FeatureState {
    return { kind: "static" };
  }

  clear(): void {
    // nothing held
  }
}

/** Answers one permission request (the chat view's broker). */
export type PermissionHandler = (params: unknown, token: CancellationToken) => Promise<ToolPermissionResult>;

/** The part of a LanguageClient the registration uses. */
export interface PermissionClient {
  registerFeature(feature: StaticFeature): void;
  onRequest(method: string, handler: (params: unknown, token: CancellationToken) => Promise<ToolPermissionResult>): unknown;
}

/**
 * Declares the capability and answers `baton/tool/permission` with whichever handler is set
 * when a request comes (none: deny). Call before the client starts.
 */
export function registerToolPermission(client: PermissionClient, handler: () => PermissionHandler | undefined): void {
  client.registerFeature(new ToolPermissionFeature());
  client.onRequest(TOOL_PERMISSION_METHOD, async (params, token) => {
    const answer = handler();
    if (answer === undefined) return DENY;
    try {
      return await answer(params, token);
    } catch {
      return DENY; // an error in the asking is a deny, never an error answer
    }
  });
}

/** What asking needs from the editor (the chat view supplies it; tests fake it). */
export interface PermissionPorts {
  /** Whether the chat panel is on screen, so its card can ask. */
  panelVisible(): boolean;
  /** Shows the request's card in the panel. */
  showCard(request: ToolPermissionParams): void;
  /** Takes the card away (answered, or withdrawn). */
  dropCard(toolUseId: string): void;
  /** Asks with a modal dialog: the option chosen, or undefined when it was dismissed. */
  askModal(request: ToolPermissionParams): Promise<PermissionOutcome | undefined>;
  /** The line above the cards about a restart that waits for them (null: none). */
  restartNote(message: string | null): void;
  log(message: string): void;
}

interface Waiting {
  request: ToolPermissionParams;
  resolve(outcome: PermissionOutcome): void;
}

export class PermissionBroker {
  private readonly waiting = new Map<string, Waiting>();
  /** The dialogs on screen, by call: one a withdrawn request left open answers the call's next ask. */
  private readonly dialogs = new Map<string, Promise<PermissionOutcome | undefined>>();
  /** What a restart waiting for the requests in flight is for ("for the changed API key"). */
  private restart: string | undefined;
  private note: string | null = null;

  constructor(private readonly ports: PermissionPorts) {}

  /** The requests the panel's cards ask about, oldest first (a reloaded panel shows them again). */
  get pending(): ToolPermissionParams[] {
    return [...this.waiting.values()].map((w) => w.request);
  }

  /** The line above the cards while a restart waits for them (a reloaded panel shows it again). */
  get restartLine(): string | null {
    return this.note;
  }

  /**
   * A restart of the server waits for the requests in flight (`why`: "for the changed API
   * key"; undefined: none waits, or it began). A card holds it for as long as nobody answers,
   * so the panel says so above the cards while any waits: the server runs as it was until then.
   */
  restartWaits(why: string | undefined): void {
    this.restart = why;
    this.sayRestart();
  }

  private sayRestart(): void {
    const note = this.restart !== undefined && this.waiting.size > 0 ? restartWaitLine(this.restart) : null;
    if (note === this.note) return;
    this.note = note;
    this.ports.restartNote(note);
  }

  /** Answers one `baton/tool/permission` request. */
  async handle(raw: unknown, token?: CancellationToken): Promise<ToolPermissionResult> {
    const request = permissionParams(raw);
    if (request === null) {
      this.ports.log("baton/tool/permission: a malformed request was answered deny");
      return DENY;
    }
    if (token?.isCancellationRequested === true) return DENY;
    this.waiting.get(request.toolUseId)?.resolve("deny"); // the same call asked again: the old one ends
    const outcome = await new Promise<PermissionOutcome>((resolve) => {
      let settled = false;
      const cancel = token?.onCancellationRequested(() => finish("deny"));
      const finish = (outcome: PermissionOutcome): void => {
        if (settled) return;
        settled = true;
        cancel?.dispose();
        if (this.waiting.get(request.toolUseId)?.resolve === finish) {
          this.waiting.delete(request.toolUseId);
          this.ports.dropCard(request.toolUseId);
          this.sayRestart();
        }
        resolve(outcome);
      };
      const dialog = this.dialogs.get(request.toolUseId);
      if (dialog === undefined && this.ports.panelVisible()) {
        this.waiting.set(request.toolUseId, { request, resolve: finish });
        this.ports.showCard(request);
        this.sayRestart();
      } else {
        (dialog ?? this.dialog(request)).then(
          (choice) => finish(choice ?? "deny"),
          (error: unknown) => {
            this.ports.log(`baton/tool/permission: asking failed: ${String(error)}`);
            finish("deny");
          },
        );
      }
    });
    return { outcome };
  }

  /** The panel's card was answered; an answer the request does not offer counts as deny. */
  answer(toolUseId: string, outcome: PermissionOutcome): void {
    const waiting = this.waiting.get(toolUseId);
    if (waiting === undefined) return;
    const offered = waiting.request.options.some((o) => o.id === outcome);
    waiting.resolve(offered ? outcome : "deny");
  }

  /** The panel was hidden or closed with cards on show: each is asked again in a modal dialog. */
  panelGone(): void {
    for (const [toolUseId, waiting] of [...this.waiting]) {
      this.waiting.delete(toolUseId);
      this.ports.dropCard(toolUseId);
      this.dialog(waiting.request).then(
        (choice) => waiting.resolve(choice ?? "deny"),
        () => waiting.resolve("deny"),
      );
    }
    this.sayRestart();
  }

  /** Asks in a modal dialog, kept as the call's until it is answered or dismissed. */
  private dialog(request: ToolPermissionParams): Promise<PermissionOutcome | undefined> {
    const asked = this.ports.askModal(request);
    this.dialogs.set(request.toolUseId, asked);
    const gone = (): void => {
      if (this.dialogs.get(request.toolUseId) === asked) this.dialogs.delete(request.toolUseId);
    };
    asked.then(gone, gone);
    return asked;
  }

  /** Everything still waiting is denied, its card dropped (the server stopped). */
  denyAll(): void {
    for (const waiting of [...this.waiting.values()]) waiting.resolve("deny");
  }

  /** The extension goes: nothing waits on. */
  dispose(): void {
    this.denyAll();
  }
}

/** What the panel says above the cards while a restart (`why`: "for the changed API key") waits for them. */
export function restartWaitLine(why: string): string {
  return `Baton's server restarts ${why} once the reply in progress ends, and that reply waits for your answer here. Stop ends it now.`;
}

/** A line of the modal's detail is cut to this many characters. */
const MODAL_LINE_CHARS = 120;

/**
 * The modal's message and buttons for a request: what the editor's dialog shows. Its detail
 * is bounded: the first `maxLines` lines of the diff (or the input), each cut (a minified
 * file's one line, or an input of megabytes, made a dialog of as many).
 */
export function modalText(request: ToolPermissionParams, maxLines = 40): { message: string; detail: string; buttons: { id: PermissionOutcome; label: string }[] } {
  const lines: string[] = [];
  if (request.path !== undefined) lines.push(cutLine(request.path));
  const shown = (text: string, what: string): void => {
    const all = text.split("\n");
    lines.push(...all.slice(0, maxLines).map(cutLine));
    if (all.length > maxLines) lines.push(`… ${all.length - maxLines} more lines of the ${what}`);
  };
  if (request.diff !== undefined) shown(request.diff, "diff");
  else if (Object.keys(request.input).length > 0) shown(JSON.stringify(request.input, null, 2), "input");
  // the dialog's own Cancel is the deny: a Deny button beside it would say the same twice
  const buttons = request.options.filter((o) => o.id !== "deny").map((o) => ({ id: o.id, label: optionLabel(request, o.id, o.label) }));
  return { message: `Baton: ${request.title}?`, detail: lines.join("\n"), buttons };
}

function cutLine(line: string): string {
  return line.length <= MODAL_LINE_CHARS ? line : `${line.slice(0, MODAL_LINE_CHARS)}… (${line.length.toLocaleString("en-US")} characters)`;
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
