/**
 * The language client's lifecycle: finding and starting `baton serve`, restarting it, the
 * server's notifications as events, typed requests, and work-done progress shown in VS Code
 * (the LanguageClient of one launch is languageClient.ts's).
 */
import * as vscode from "vscode";
import { State, type LanguageClient } from "vscode-languageclient/node";
import { newLanguageClient, withWorkDoneProgress } from "./languageClient";
import { Notifications, SETTINGS_SECTION, type ClientNotificationMap, type ServerNotificationMap } from "./protocol";
import { DraftRpc } from "./draftRpc";
import { BatonRpc, RequestsInFlight, ServerNotRunning, type CallOptions, type RequestSender } from "./rpc";
import { initializationOptions, notFoundMessage, resolveLaunch } from "./serverLaunch";
import { selectedInterpreter } from "./python";
import { contractProblem, readBundle, serverName, type ServerHello } from "./bundledServer";
import { apiKey } from "./secrets";
import type { PermissionHandler } from "./toolPermission";

export type ServerState = "starting" | "running" | "stopped" | "failed";

export class BatonClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private state: ServerState = "stopped";
  private starting: Promise<void> | undefined;
  private permissionHandler: PermissionHandler | undefined;
  private readonly inFlight = new RequestsInFlight();
  /** A restart waiting for the requests in flight (restartWhenIdle), and what for. */
  private idleRestart: Promise<void> | undefined;
  private readonly restartReasons = new Set<string>();
  private readonly restartWaitEmitter = new vscode.EventEmitter<string | undefined>();
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly usageEmitter = new vscode.EventEmitter<ServerNotificationMap["baton/usageChanged"]>();
  private readonly sessionEmitter = new vscode.EventEmitter<ServerNotificationMap["baton/sessionChanged"]>();
  private readonly deltaEmitter = new vscode.EventEmitter<ServerNotificationMap["baton/session/delta"]>();
  private readonly autoCompactEmitter = new vscode.EventEmitter<ServerNotificationMap["baton/autoCompact"]>();
  /** Which server runs, e.g. "Baton 0.1.0 from the bundled server (Python 3.11, /usr/bin/python3)". */
  private label: string | undefined;

  readonly onDidChangeState = this.stateEmitter.event;
  readonly onDidChangeUsage = this.usageEmitter.event;
  readonly onDidChangeSession = this.sessionEmitter.event;
  readonly onDelta = this.deltaEmitter.event;
  readonly onAutoCompact = this.autoCompactEmitter.event;
  /** What a restart waiting for the requests in flight is for ("for the changed API key"); undefined once it begins. */
  readonly onDidChangeRestartWait = this.restartWaitEmitter.event;
  /** Typed calls; each waits for a server that is starting and fails at once when none runs. */
  readonly rpc: BatonRpc;
  /** Compaction drafts: preview, apply (as written or edited), discard. */
  readonly drafts: DraftRpc;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {
    const sender: RequestSender = {
      sendRequest: async <R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> => {
        const client = await this.ready();
        // an undefined token would travel as a second parameter
        return this.inFlight.track(token === undefined ? client.sendRequest<R>(method, params) : client.sendRequest<R>(method, params, token));
      },
    };
    this.rpc = new BatonRpc(sender);
    this.drafts = new DraftRpc(sender);
  }

  get currentState(): ServerState {
    return this.state;
  }

  /** Which server runs and its version (undefined while none does). */
  get serverLabel(): string | undefined {
    return this.state === "running" ? this.label : undefined;
  }

  /** Starts the server unless it is already starting or running. */
  start(): Promise<void> {
    if (this.client !== undefined && this.state === "running") {
      return Promise.resolve();
    }
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Whether a request is in flight (a reply streaming, a compaction): a restart would end it. */
  get busy(): boolean {
    return this.inFlight.count > 0;
  }

  /**
   * Restarts once no request is in flight: a restart the extension makes by itself (a new
   * API key, another server command) would cut a reply streaming or a compaction short. Two
   * asked while it waits are one. `why` ("for the changed API key") is told while it waits:
   * a reply waiting for a permission card waits for the user.
   */
  restartWhenIdle(why: string): Promise<void> {
    this.restartReasons.add(why);
    this.idleRestart ??= this.inFlight.settled().then(() => {
      this.idleRestart = undefined;
      this.restartReasons.clear();
      this.restartWaitEmitter.fire(undefined);
      return this.restart();
    });
    if (this.busy) this.restartWaitEmitter.fire(joinReasons([...this.restartReasons]));
    return this.idleRestart;
  }

  async restart(): Promise<void> {
    await this.starting?.catch(() => undefined);
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop(3000);
      } catch (error) {
        this.log.warn(`stopping the server: ${String(error)}`);
      }
      await client.dispose();
    }
    this.setState("stopped");
  }

  /** Who answers the server's permission requests (none: each is denied). */
  setPermissionHandler(handler: PermissionHandler | undefined): void {
    this.permissionHandler = handler;
  }

  /** Sends `baton/activeEditor` (dropped while no server runs: nothing to keep in sync). */
  notifyActiveEditor(uri: string | null): void {
    if (this.client !== undefined && this.state === "running") {
      const params: ClientNotificationMap["baton/activeEditor"] = { uri };
      void this.client.sendNotification(Notifications.activeEditor, params).catch(() => undefined);
    }
  }

  /**
   * Runs `run` with a client-chosen workDoneToken whose begin/report/end show as VS Code
   * progress; the progress's Cancel cancels the request. `said` is given each message.
   */
  async withProgress<T>(
    title: string,
    location: vscode.ProgressLocation,
    run: (options: CallOptions) => Promise<T>,
    said?: (message: string) => void,
  ): Promise<T> {
    return withWorkDoneProgress(await this.ready(), title, location, run, said);
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.usageEmitter.dispose();
    this.sessionEmitter.dispose();
    this.deltaEmitter.dispose();
    this.autoCompactEmitter.dispose();
    this.restartWaitEmitter.dispose();
  }

  private async ready(): Promise<LanguageClient> {
    await this.starting?.catch(() => undefined);
    // the client restarting a crashed server by itself: the request waits for it, as one
    // made while this client starts the server does
    if (this.client !== undefined && this.state === "starting") await this.settled();
    if (this.client === undefined || this.state !== "running") {
      throw new ServerNotRunning();
    }
    return this.client;
  }

  /** Resolves once the server is no longer starting (running, stopped or failed). */
  private settled(): Promise<void> {
    return new Promise((resolve) => {
      const listener = this.stateEmitter.event((state) => {
        if (state === "starting") return;
        listener.dispose();
        resolve();
      });
    });
  }

  private setState(state: ServerState): void {
    if (state !== this.state) {
      this.state = state;
      this.stateEmitter.fire(state);
    }
  }

  private async doStart(): Promise<void> {
    this.setState("starting");
    const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
    const bundle = readBundle(this.context.extensionPath);
    const resolution = await resolveLaunch({
      configured: config.get("server.command"),
      pythonPath: await selectedInterpreter(this.log),
      env: process.env,
      bundle,
    });
    if (!resolution.ok) {
      this.setState("failed");
      const message = notFoundMessage(resolution.tried, bundle !== undefined);
      this.log.error(message);
      void this.offerFixes(message);
      return;
    }
    const { command, args, source } = resolution.launch;
    this.log.info(`starting ${command} ${args.join(" ")} (from ${source})`);
    const key = await apiKey(this.context);
    const env = { ...process.env, ...resolution.launch.env };
    const options = initializationOptions(JSON.parse(JSON.stringify(config)) as Record<string, unknown>, key);
    const client = newLanguageClient({ command, args, env }, options, this.log, () => this.permissionHandler);
    client.onDidChangeState((event) => {
      if (this.client === client && this.starting === undefined) {
        // the client restarts a crashed server by itself; follow it both ways
        this.setState(event.newState === State.Running ? "running" : event.newState === State.Stopped ? "stopped" : "starting");
      }
    });
    client.onNotification(Notifications.usageChanged, (params: ServerNotificationMap["baton/usageChanged"]) =>
      this.usageEmitter.fire(params),
    );
    client.onNotification(Notifications.sessionChanged, (params: ServerNotificationMap["baton/sessionChanged"]) =>
      this.sessionEmitter.fire(params),
    );
    client.onNotification(Notifications.autoCompact, (params: ServerNotificationMap["baton/autoCompact"]) =>
      this.autoCompactEmitter.fire(params),
    );
    client.onNotification(Notifications.sessionDelta, (params: ServerNotificationMap["baton/session/delta"]) =>
      this.deltaEmitter.fire(params),
    );
    this.client = client;
    try {
      await client.start();
      const hello = client.initializeResult as ServerHello | undefined;
      const problem = contractProblem(hello, source);
      if (problem !== undefined) {
        this.client = undefined;
        this.setState("failed");
        this.log.error(problem);
        void this.offerFixes(problem);
        await client.stop(3000).catch(() => undefined);
        await client.dispose().catch(() => undefined);
        return;
      }
      this.label = `${serverName(hello)} from ${source}`;
      this.log.info(`running ${this.label}: ${command} ${args.join(" ")}`);
      this.setState("running");
    } catch (error) {
      this.client = undefined;
      this.setState("failed");
      const message = `Baton's server (${command} ${args.join(" ")}) did not start: ${String(error)}`;
      this.log.error(message);
      void this.offerFixes(message);
      await client.dispose().catch(() => undefined);
    }
  }

  private async offerFixes(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Logs", "Retry");
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "baton.server.command");
    } else if (choice === "Show Logs") {
      this.log.show();
    } else if (choice === "Retry") {
      await this.restart();
    }
  }
}

/** "for the changed API key and for the changed server command" as "for the changed API key and server command". */
function joinReasons(reasons: string[]): string {
  const [first, ...rest] = reasons;
  return [first, ...rest.map((r) => r.replace(/^for the changed /, ""))].join(" and ");
}
