/** The palette commands and the chat's right-click menu: VS Code glue over typed requests. */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import * as vscode from "vscode";
import type { ChatView } from "./chatView";
import { menuMessage, menuSelection, menuSession, messageText, selectedSpan, type MessageContext } from "./chatLogic";
import type { BatonClient } from "./client";
import { previewReport, undoneLine } from "./compactReport";
import { afterCompactionLine, previewFirstSetting } from "./draftCard";
import type { DraftFlow } from "./compactDraft";
import { titleIfNotShown, type CurrentSession } from "./currentSession";
import { chooseModel } from "./modelChoice";
import { ErrorCodes, SETTINGS_SECTION, type CompactResult } from "./protocol";
import { errorCode, errorMessage, isCancellation, type CallOptions } from "./rpc";
import { promptForApiKey } from "./secrets";
import { PreviewDocuments, sessionDocumentUri } from "./sessionDocument";
import { SHOW_CHAT_COMMAND } from "./status";

export function registerCommands(
  context: vscode.ExtensionContext,
  client: BatonClient,
  chat: ChatView,
  current: CurrentSession,
  previews: PreviewDocuments,
  drafts: DraftFlow,
): void {
  const sessionId = (): string => {
    const id = current.sessionId;
    if (id === undefined) {
      throw new UserError("Baton: no conversation is open. Open one in the Baton chat view, or start one with Baton: New Chat.");
    }
    return id;
  };
  /** The session a message's menu acts on: the one the panel showed when it opened. */
  const menuSessionId = (ctx: unknown): string => menuSession(ctx) ?? sessionId();
  const compact = async (
    title: string,
    run: (id: string, options: CallOptions) => Promise<CompactResult>,
    id = sessionId(),
  ): Promise<void> => {
    const result = await client.withProgress(title, vscode.ProgressLocation.Notification, (options) => run(id, options));
    // another conversation on show by now: the line says which one was compacted
    void vscode.window.showInformationMessage(afterCompactionLine(result, await titleIfNotShown(current, client.rpc, id)));
  };
  const register = (command: string, handler: (...args: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(command, (...args: unknown[]) => guard(handler, args)));
  };

  register("baton.restartServer", () => client.restart());
  register("baton.showLogs", () => client.log.show());
  register("baton.setApiKey", () => promptForApiKey(context, () => client.busy));
  register(SHOW_CHAT_COMMAND, () => chat.reveal());

  register("baton.newChat", async () => {
    await chat.reveal();
    await chat.newChat();
  });

  register("baton.compactConversation", async () => {
    const id = sessionId(); // the one on show now: another may be by the time the box closes
    const instructions = await vscode.window.showInputBox({
      title: "Baton: Compact Conversation",
      prompt: "Optional instructions for the summary (what to keep, what to focus on). Enter to compact.",
      placeHolder: "e.g. keep the failing test names and the decisions about the parser",
    });
    if (instructions === undefined) {
      return;
    }
    const trimmed = instructions.trim();
    await compact("Baton: compacting", (sid, options) =>
      client.rpc.compact(sid, trimmed ? { direction: "all", instructions: trimmed } : { direction: "all" }, options),
      id,
    );
  });

  register("baton.switchModel", async () => {
    const id = sessionId();
    const model = await chooseModel(client.rpc, id, current.session?.model ?? "");
    if (model === undefined) {
      return;
    }
    // the session it was started for, though another may be on show by now
    const result = await chat.switchModel(model, id);
    if (result?.warning !== undefined) {
      const choice = await vscode.window.showWarningMessage(`Baton: ${result.warning}`, "Compact Now");
      if (choice === "Compact Now") {
        await compact("Baton: compacting", (sid, options) => client.rpc.compact(sid, { direction: "all" }, options), id);
      }
    } else if (result !== undefined) {
      const which = current.sessionId === id ? "this conversation" : `"${result.session.title}"`;
      void vscode.window.showInformationMessage(`Baton: ${which} now uses ${result.session.model}.`);
    }
  });

  // a draft: the real summary, editable, with its cost; applied only on Apply
  register("baton.previewCompaction", () => drafts.preview(sessionId(), { direction: "all" }));
  register("baton.planCompaction", async () => {
    const id = sessionId();
    const result = await client.withProgress("Baton: planning a compaction", vscode.ProgressLocation.Notification, (options) =>
      client.rpc.preview(id, options),
    );
    const { messages, session } = await client.rpc.getSession(id);
    await previews.show(`Compaction preview ${session.title}`.replace(/[\\/]/g, "-"), previewReport(result, session.title, messages));
  });

  register("baton.undoCompaction", async (boundaryId?: unknown, inSession?: unknown) => {
    const id = typeof inSession === "string" ? inSession : sessionId();
    const { usage } = await client.rpc.uncompact(id, typeof boundaryId === "string" ? boundaryId : undefined);
    void vscode.window.showInformationMessage(undoneLine(usage));
  });

  // `range`: a message's lines (the chat's Open in editor), revealed at the top of the editor
  // (below the sticky lines VS Code keeps above it, when sticky scroll is on)
  register("baton.openSessionDocument", async (id?: unknown, range?: unknown) => {
    const uri = sessionDocumentUri(typeof id === "string" ? id : sessionId());
    const document = await vscode.workspace.openTextDocument(uri);
    const lines = lineRange(range);
    const at = lines === undefined ? undefined : new vscode.Selection(lines.start, lines.start);
    const editor = await vscode.window.showTextDocument(document, at === undefined ? { preview: false } : { preview: false, selection: at });
    if (lines !== undefined) editor.revealRange(lines, vscode.TextEditorRevealType.AtTop);
  });

  register("baton.importSession", async (target?: unknown) => {
    const path = target instanceof vscode.Uri ? target.fsPath : typeof target === "string" ? target : await pickClaudeCodeFile();
    if (path === undefined) {
      return;
    }
    const session = await client.withProgress("Baton: importing the Claude Code session", vscode.ProgressLocation.Notification, (options) =>
      client.rpc.importClaudeCode(path, options),
    );
    await chat.reveal();
    await chat.select(session.sessionId);
    // what the import skipped or repaired (a line cut short, two sessions joined...)
    const notes = session.notes ?? [];
    if (notes.length > 0) {
      void vscode.window.showWarningMessage(`Baton: imported "${session.title}". ${notes.join("; ")}.`);
    } else {
      void vscode.window.showInformationMessage(`Baton: imported "${session.title}".`);
    }
  });

  // the chat's right-click menu (ids of their own: the server's commands are registered too)
  register("baton.chat.compactUpToHere", async (ctx) => {
    const pivot = messageIdOf(ctx);
    const inSession = menuSessionId(ctx); // before the question: the panel may show another one after it
    if (await previewFirst("up to here")) {
      return drafts.preview(inSession, { direction: "up_to", pivotMessageId: pivot });
    }
    return compact("Baton: compacting up to here", (id, options) => client.rpc.compactUpTo(id, pivot, options), inSession);
  });
  register("baton.chat.compactFromHere", async (ctx) => {
    const pivot = messageIdOf(ctx);
    const inSession = menuSessionId(ctx);
    if (await previewFirst("from here")) {
      return drafts.preview(inSession, { direction: "from", pivotMessageId: pivot });
    }
    return compact("Baton: compacting from here", (id, options) => client.rpc.compactFrom(id, pivot, options), inSession);
  });
  register("baton.applyCompactionDraft", () => drafts.apply());
  register("baton.regenerateCompactionDraft", () => drafts.regenerate());
  register("baton.discardCompactionDraft", () => drafts.discard());
  register("baton.chat.compactSelected", async (ctx) => {
    // the session and the selection on show when the menu opened: the host may be opening another
    const inSession = menuSessionId(ctx);
    const view = inSession === current.sessionId ? chat.viewMessages : (await client.rpc.getSession(inSession)).messages;
    // a menu's context names its selection, or none (fewer than two); else the host's
    const selected = menuSession(ctx) !== undefined ? (menuSelection(ctx) ?? []) : chat.selection;
    const span = selectedSpan(selected, view);
    if (span === undefined) {
      throw new UserError("Baton: select two or more messages first (click, then shift-click).");
    }
    return compact(
      "Baton: compacting the selected messages",
      (id, options) => client.rpc.compactRange(id, span.first, span.last, options),
      inSession,
    );
  });
  register("baton.chat.pinMessage", (ctx) => client.rpc.pin(menuSessionId(ctx), messageIdOf(ctx), true));
  register("baton.chat.unpinMessage", (ctx) => client.rpc.pin(menuSessionId(ctx), messageIdOf(ctx), false));
  register("baton.chat.copyMessage", async (ctx) => {
    messageIdOf(ctx);
    const inSession = menuSessionId(ctx);
    const view = inSession === current.sessionId ? chat.viewMessages : (await client.rpc.getSession(inSession)).messages;
    // a message of the view, or one a compaction replaced (shown greyed under its summary)
    const message = await menuMessage(ctx as MessageContext, view, async (boundaryId, offset) => {
      return (await client.rpc.replaced(inSession, boundaryId, offset, 1)).messages;
    });
    if (message === undefined) {
      throw new UserError("Baton: that message is no longer in the view.");
    }
    await vscode.env.clipboard.writeText(messageText(message));
  });
}

class UserError extends Error {}

/** With `baton.previewBeforeCompact`, whether the user wants the draft first (a cancel
 * of the question is a cancel of the compaction). */
async function previewFirst(where: string): Promise<boolean> {
  if (!previewFirstSetting(vscode.workspace.getConfiguration(SETTINGS_SECTION).get("previewBeforeCompact"))) {
    return false;
  }
  const choice = await vscode.window.showInformationMessage(
    `Baton: compact ${where}? Preview first shows the summary (editable) and its cost before anything is committed.`,
    "Preview First",
    "Compact Now",
  );
  if (choice === undefined) {
    throw new Cancelled();
  }
  return choice === "Preview First";
}

class Cancelled extends Error {}

function messageIdOf(ctx: unknown): string {
  const id = typeof ctx === "object" && ctx !== null ? (ctx as MessageContext).messageId : undefined;
  if (typeof id !== "string" || id === "") {
    throw new UserError("Baton: this command runs from a message's right-click menu in the chat view.");
  }
  return id;
}

/** A wire Range (`{ start: { line, character }, end }`) as the editor's, or undefined when it is none. */
function lineRange(raw: unknown): vscode.Range | undefined {
  const position = (value: unknown): vscode.Position | undefined => {
    const p = value as { line?: unknown; character?: unknown } | null | undefined;
    return typeof p?.line === "number" && typeof p.character === "number" && p.line >= 0 && p.character >= 0
      ? new vscode.Position(p.line, p.character)
      : undefined;
  };
  const r = typeof raw === "object" && raw !== null ? (raw as { start?: unknown; end?: unknown }) : {};
  const start = position(r.start);
  const end = position(r.end);
  return start !== undefined && end !== undefined ? new vscode.Range(start, end) : undefined;
}

async function pickClaudeCodeFile(): Promise<string | undefined> {
  const projects = join(homedir(), ".claude", "projects");
  const picked = await vscode.window.showOpenDialog({
    title: "Baton: Import Claude Code Session",
    openLabel: "Import",
    canSelectMany: false,
    filters: { "Claude Code session": ["jsonl", "json"] },
    ...(existsSync(projects) ? { defaultUri: vscode.Uri.file(projects) } : {}),
  });
  return picked?.[0]?.fsPath;
}

/** Runs a command; a failure becomes one notification (never a stack), a cancel nothing. */
async function guard(handler: (...args: unknown[]) => unknown, args: unknown[]): Promise<unknown> {
  try {
    return await handler(...args);
  } catch (error) {
    if (isCancellation(error) || error instanceof Cancelled) {
      return undefined;
    }
    const code = errorCode(error);
    const message = error instanceof UserError ? error.message : `Baton: ${errorMessage(error)}`;
    if (code === ErrorCodes.nothingToCompact) {
      void vscode.window.showInformationMessage(message);
    } else {
      void vscode.window.showErrorMessage(message);
    }
    return undefined;
  }
}
