/**
 * The LanguageClient of one launch of `baton serve`: the documents it syncs, its
 * initializationOptions, the server's stdout and stderr in the log with their levels, the
 * permission requests it answers, the server's messages shown; and a request's work-done
 * progress shown as VS Code progress.
 */
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import * as vscode from "vscode";
import {
  LanguageClient,
  MessageType,
  ShowMessageNotification,
  WorkDoneProgress,
  type LanguageClientOptions,
  type ServerOptions,
  type WorkDoneProgressBegin,
  type WorkDoneProgressReport,
} from "vscode-languageclient/node";
import { SETTINGS_SECTION } from "./protocol";
import type { CallOptions } from "./rpc";
import { logServerLine, ServerLogParser, settingNamed } from "./serverLog";
import { registerToolPermission, type PermissionHandler } from "./toolPermission";

/** A LanguageClient for `command args` (not started); `permissionHandler` answers the server's permission requests. */
export function newLanguageClient(
  launch: { command: string; args: string[]; env: NodeJS.ProcessEnv },
  initializationOptions: unknown,
  log: vscode.LogOutputChannel,
  permissionHandler: () => PermissionHandler | undefined,
): LanguageClient {
  const { command, args, env } = launch;
  const serverOptions: ServerOptions = { command, args, options: { env } };
  const clientOptions: LanguageClientOptions = {
    // every file the user opens or edits is the server's working set for restore;
    // baton: session documents get its diagnostics, code actions and hovers
    documentSelector: [{ scheme: "file" }, { scheme: "baton" }],
    outputChannel: log,
    initializationOptions,
    synchronize: { configurationSection: SETTINGS_SECTION },
    // the server logs to stderr with its level on each line: keep the levels (the
    // default tags every stderr line as an error)
    stdioOptions: { stdout: (input, channel) => lines(input, (line) => channel.info(line)), stderr: (input, channel) => {
      const parser = new ServerLogParser();
      lines(input, (line) => logServerLine(parser, channel, line));
    } },
  };
  const client = new LanguageClient("baton", "Baton", serverOptions, clientOptions);
  // the server asks before a tool whose level is `ask` runs; without this it runs none such
  registerToolPermission(client, permissionHandler);
  // as the LanguageClient shows them, and a warning about a bad setting with a way to open it
  client.onNotification(ShowMessageNotification.type, (params) => void showServerMessage(params.type, params.message));
  return client;
}

/**
 * Runs `run` with a client-chosen workDoneToken whose begin/report/end show as VS Code
 * progress; the progress's Cancel cancels the request. `said` is given each message.
 */
export function withWorkDoneProgress<T>(
  client: LanguageClient,
  title: string,
  location: vscode.ProgressLocation,
  run: (options: CallOptions) => Promise<T>,
  said?: (message: string) => void,
): Thenable<T> {
  return vscode.window.withProgress({ location, title, cancellable: true }, async (progress, token) => {
    const workDoneToken = `baton-vscode-${randomUUID()}`;
    let last = 0;
    const report = (value: WorkDoneProgressBegin | WorkDoneProgressReport): void => {
      const increment = value.percentage !== undefined ? Math.max(0, value.percentage - last) : undefined;
      if (value.percentage !== undefined) {
        last = value.percentage;
      }
      progress.report({ message: value.message, increment });
      if (value.message !== undefined) said?.(value.message);
    };
    const listener = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
      if (value.kind === "begin" || value.kind === "report") {
        report(value);
      }
    });
    try {
      return await run({ token, workDoneToken });
    } finally {
      listener.dispose();
    }
  });
}

function lines(input: Readable, each: (line: string) => void): void {
  createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on("line", each);
}

/** A message the server shows (window/showMessage); a bad setting's offers "Open Settings". */
async function showServerMessage(type: MessageType, message: string): Promise<void> {
  const setting = settingNamed(message);
  const show =
    type === MessageType.Error ? vscode.window.showErrorMessage : type === MessageType.Warning ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  const choice = await show(message, ...(setting !== undefined ? ["Open Settings"] : []));
  if (choice === "Open Settings") await vscode.commands.executeCommand("workbench.action.openSettings", setting);
}
