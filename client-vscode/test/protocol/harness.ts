// A real `baton serve` over stdio, driven by vscode-languageserver-protocol the way the
// extension's LanguageClient drives it: same capabilities that matter, same requests.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import {
  ConfigurationRequest,
  DidChangeConfigurationNotification,
  RegistrationRequest,
  createProtocolConnection,
  ErrorCodes,
  InitializeRequest,
  ResponseError,
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

/** What a Python must import to run the server and the fake APIs. */
const NEEDED = ["baton", "baton_testkit", "pygls", "lsprotocol", "tiktoken"];

/**
 * The Python that runs the server and the fake APIs: BATON_TEST_PYTHON, else the first of the
 * repository's .venv, the active virtual environment's and python3 that imports what they
 * need. None: an error of one line saying what to set (a Python that cannot start the server
 * left the tests waiting for its answer to initialize, without end).
 */
export function findPython(env: NodeJS.ProcessEnv, repo: string): string {
  const imports = (candidate: string): string | null => {
    const probe = spawnSync(candidate, ["-c", `import ${NEEDED.join(", ")}`], { env, encoding: "utf8", timeout: 60_000 });
    if (probe.error !== undefined) return probe.error.message;
    if (probe.status === 0) return null;
    return lastLine(probe.stderr) || `exit ${String(probe.status ?? probe.signal)}`;
  };
  const set = env.BATON_TEST_PYTHON;
  if (set) {
    const why = imports(set);
    if (why === null) return set;
    throw new Error(`BATON_TEST_PYTHON=${set} cannot run the tests (${why}): set it to a Python that imports ${NEEDED.join(", ")} (pip install -e '.[dev]')`);
  }
  const candidates = [join(repo, ".venv", "bin", "python")];
  if (env.VIRTUAL_ENV) candidates.push(join(env.VIRTUAL_ENV, "bin", "python"));
  candidates.push("python3");
  const found = candidates.find((candidate) => (candidate === "python3" || existsSync(candidate)) && imports(candidate) === null);
  if (found !== undefined) return found;
  throw new Error(
    `no Python that imports ${NEEDED.join(", ")} (tried ${candidates.join(", ")}): set BATON_TEST_PYTHON to one (a venv's bin/python after pip install -e '.[dev]')`,
  );
}

/** vscode-jsonrpc's own errors, of a connection that failed rather than of an answer. */
const CONNECTION_LOST: ReadonlySet<number> = new Set([ErrorCodes.MessageWriteError, ErrorCodes.MessageReadError, ErrorCodes.PendingResponseRejected, ErrorCodes.ConnectionInactive]);

/** The last line of a process's output (a Python traceback's: the error). */
function lastLine(text: string): string {
  return text.trim().split("\n").at(-1) ?? "";
}

let found: string | undefined;

/** findPython's answer for this process, looked for once. */
export function python(): string {
  found ??= findPython(process.env, REPO);
  return found;
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
    // a server that ends before it answers never will: its stderr says why
    const ended = new Promise<string>((done) =>
      child.once("close", (code, signal) => done(`${command} ${args.join(" ")} ended (${String(code ?? signal)}) before initialize was answered: ${lastLine(stderr.join(""))}`)),
    );
    const initialized = connection.sendRequest(InitializeRequest.type, {
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
    try {
      await Promise.race([initialized, ended.then((why) => Promise.reject(new Error(why)))]);
    } catch (error) {
      connection.dispose();
      child.kill();
      const why = await ended;
      throw error instanceof ResponseError && !CONNECTION_LOST.has(error.code) ? error : new Error(why); // an answer, else why it ended
    }
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
