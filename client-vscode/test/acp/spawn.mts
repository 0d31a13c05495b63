// Starting `baton acp` and a fake Anthropic API script for the npm-SDK tests.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { python, REPO } from "../protocol/harness.js";

/** `baton acp`: BATON_SERVER_COMMAND (scripts/test-vscode sets it), else python()'s. */
export function acpCommand(): [string, string[]] {
  if (process.env.BATON_SERVER_COMMAND) {
    return [process.env.BATON_SERVER_COMMAND, ["acp"]];
  }
  const script = join(dirname(python()), "baton");
  return existsSync(script) ? [script, ["acp"]] : [python(), ["-m", "baton", "acp"]];
}

/** `baton acp --settings <settings>` with `env`, and its stdio as the SDK's stream. */
export function startAgent(env: NodeJS.ProcessEnv, settings: string) {
  const [command, args] = acpCommand();
  const child = spawn(command, [...args, "--settings", settings], { env, stdio: ["pipe", "pipe", "inherit"] });
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  return { child, stream };
}

/** Closing its stdin ends the agent by itself: its exit code. */
export async function stopAgent(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  child.stdin?.end();
  const timer = setTimeout(() => child.kill(), 20_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/** A fake API script of this folder: its URL, a line to its stdin, and its stop. */
export async function startFake(script: string) {
  const child = spawn(python(), [join(REPO, "client-vscode", "test", "acp", script)], { stdio: ["pipe", "pipe", "inherit"] });
  const line = await new Promise<string>((resolveLine, reject) => {
    createInterface({ input: child.stdout }).once("line", resolveLine);
    child.once("exit", (code) => reject(new Error(`the fake API exited (${code})`)));
  });
  return {
    baseUrl: line.trim(),
    say: (text: string) => child.stdin.write(`${text}\n`),
    stop: async () => {
      const exited = new Promise((done) => child.once("exit", done));
      child.stdin.end();
      await exited;
    },
  };
}
