// A real `baton serve` over stdio, driven by vscode-languageserver-protocol the way the
// extension's LanguageClient drives it: same capabilities that matter, same requests.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import {
  ConfigurationRequest,
  DidChangeConfigurationNotification,
  RegistrationRequest,
  createProtocolConnection,
  InitializeRequest,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgressCreateRequest,
  type ProtocolConnection,
} from "vscode-languageserver-protocol/node";
import { BatonRpc } from "../../src/rpc";
import { initializationOptions } from "../../src/serverLaunch";
import { scratchDir } from "../scratch";

/** client-vscode/out/test/protocol -> the repository root. */
export const REPO = resolve(__dirname, "..", "..", "..", "..");

/** The venv's Python (BATON_TEST_PYTHON, else the repository's .venv, else python3). */
export function python(): string {
  const venv = join(REPO, ".venv", "bin", "python");
  return process.env.BATON_TEST_PYTHON ?? (existsSync(venv) ? venv : "python3");
}

/** `baton serve`: BATON_SERVER_COMMAND (scripts/test-vscode sets it), else python()'s. */
function serveCommand(): [string, string[]] {
  if (process.env.BATON_SERVER_COMMAND) {
    return [process.env.BATON_SERVER_COMMAND, ["serve"]];
  }
  const script = join(dirname(python()), "baton");
  return existsSync(script) ? [script, ["serve"]] : [python(), ["-m", "baton", "serve"]];
}

export interface Notified {
  method: string;
  params: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- the test inspects what arrived
}

export class Server {
  readonly rpc: BatonRpc;
  readonly notes: Notified[] = [];
  private waiters: { match: (n: Notified) => boolean; resolve: (n: Notified) => void }[] = [];

  private constructor(
    readonly connection: ProtocolConnection,
    readonly process: ChildProcessWithoutNullStreams,
    readonly dataDir: string,
    readonly workspace: string,
    readonly stderr: string[],
    private readonly settings: Record<string, unknown>,
  ) {
    this.rpc = new BatonRpc(connection);
    connection.onUnhandledNotification((message) => this.record({ method: message.method, params: message.params }));
  }

  static async start(options: { key?: string; env?: Record<string, string>; dataDir?: string } = {}): Promise<Server> {
    const dataDir = options.dataDir ?? scratchDir("baton-proto-data-");
    const workspace = scratchDir("baton-proto-ws-");
    const [command, args] = serveCommand();
    const env: NodeJS.ProcessEnv = { ...process.env, BATON_DATA_DIR: dataDir, ...options.env };
    delete env.ANTHROPIC_API_KEY; // the key comes through initializationOptions, as from the extension
    const child = spawn(command, args, { env, stdio: "pipe" });
    const stderr: string[] = [];
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
    const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const initialSettings = {
      dataDir,
      server: { command: [command, ...args] },
      autoCompact: { enabled: false },
      // a small recent window, so short test conversations have something to summarize
      keepWindow: { minTokens: 50, minTextMessages: 2, maxTokens: 400 },
    };
    const settings: Record<string, unknown> = { ...initialSettings };
    connection.onRequest(ConfigurationRequest.type, (params) => params.items.map((item) => (item.section === "baton" ? settings : null)));
    connection.onRequest(WorkDoneProgressCreateRequest.type, () => undefined);
    connection.onRequest(RegistrationRequest.type, () => undefined);
    const server = new Server(connection, child, dataDir, workspace, stderr, settings);
    connection.listen();
    await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: `file://${workspace}`,
      workspaceFolders: [{ uri: `file://${workspace}`, name: "workspace" }],
      capabilities: {
        window: { workDoneProgress: true },
        workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true } },
        textDocument: {
          synchronization: { didSave: true, dynamicRegistration: true },
          publishDiagnostics: { versionSupport: true },
          codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ["", "source", "refactor.rewrite"] } } },
        },
      },
      initializationOptions: initializationOptions(initialSettings, options.key),
    });
    await connection.sendNotification("initialized", {});
    return server;
  }

  /** A settings change as the LanguageClient sends it (synchronize.configurationSection). */
  async changeSettings(patch: Record<string, unknown>): Promise<void> {
    Object.assign(this.settings, patch);
    await this.connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { baton: { ...this.settings } } });
  }

  private record(note: Notified): void {
    this.notes.push(note);
    this.waiters = this.waiters.filter((waiter) => {
      if (waiter.match(note)) {
        waiter.resolve(note);
        return false;
      }
      return true;
    });
  }

  /** The first notification (already arrived or still to come) that matches. */
  notification(method: string, match: (params: any) => boolean = () => true, since = 0): Promise<Notified> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const seen = this.notes.slice(since).find((n) => n.method === method && match(n.params));
    if (seen !== undefined) {
      return Promise.resolve(seen);
    }
    return new Promise((resolveNote, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${method} within 20 s; stderr: ${this.stderr.join("")}`)), 20_000);
      this.waiters.push({
        match: (n) => n.method === method && match(n.params),
        resolve: (n) => {
          clearTimeout(timer);
          resolveNote(n);
        },
      });
    });
  }

  async stop(): Promise<void> {
    const exited = new Promise((done) => this.process.once("exit", done));
    try {
      await this.connection.sendRequest("shutdown");
      await this.connection.sendNotification("exit");
    } catch {
      this.process.kill();
    }
    await exited;
    this.connection.dispose();
  }
}

/** The fake Anthropic API from tests/baton_testkit/fake_anthropic.py, on loopback. */
export async function startFakeApi(folder = "protocol", args: string[] = []): Promise<{ baseUrl: string; stop: () => Promise<void> }> {
  const child = spawn(python(), [join(REPO, "client-vscode", "test", folder, "fake_api.py"), ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const line = await new Promise<string>((resolveLine, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", resolveLine);
    child.once("exit", (code) => reject(new Error(`the fake API exited (${code})`)));
  });
  return {
    baseUrl: line.trim(),
    stop: async () => {
      const exited = new Promise((done) => child.once("exit", done));
      child.stdin.end();
      await exited;
    },
  };
}
