/**
 * How the server is started: the `baton.server.command` setting, else the server the
 * platform package carries (bundledServer.ts; the universal package carries none and tries
 * the Python extension's interpreter as `python -m baton serve`), else `baton serve` from
 * PATH. No vscode import: the extension passes the setting, the interpreter and the bundle in.
 */
import { execFile } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { bundledLaunch, type Bundle } from "./bundledServer";

export interface Launch {
  command: string;
  args: string[];
  /** Where the command came from, for the log. */
  source: string;
  /** Variables added to the extension host's environment (the bundled server's PYTHONPATH). */
  env?: Record<string, string>;
}

export type LaunchResolution = { ok: true; launch: Launch } | { ok: false; tried: string[] };

export interface LaunchInputs {
  /** The raw `baton.server.command` setting. */
  configured: unknown;
  /** The Python extension's selected interpreter, when it has one. */
  pythonPath: string | undefined;
  /** PATH and, on Windows, PATHEXT. */
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** Whether `python` can import Baton (real check by default; replaced in tests). */
  pythonHasBaton?: (python: string) => Promise<boolean>;
  /** The server this package carries (a platform package), if any. */
  bundle?: Bundle;
  /** `python`'s major.minor (real check by default; replaced in tests). */
  pythonVersion?: (python: string) => Promise<string | undefined>;
}

/** The setting as a command line, or a reason it is not one. Empty: not set. */
export function parseConfigured(configured: unknown): string[] | { error: string } {
  if (configured === undefined || configured === null) {
    return [];
  }
  if (!Array.isArray(configured) || !configured.every((part) => typeof part === "string")) {
    return { error: "baton.server.command must be an array of strings (executable, then arguments)" };
  }
  return configured.length > 0 && configured[0] === "" ? { error: "baton.server.command starts with an empty executable" } : configured;
}

/** The first executable named `name` on PATH (PATHEXT on Windows), if any. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string | undefined {
  const exts = platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").concat([""]) : [""];
  const dirs = (env.PATH ?? env.Path ?? "").split(platform === "win32" ? ";" : delimiter).filter(Boolean);
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = join(dir, name + ext);
      if (isExecutable(candidate, platform)) {
        return candidate;
      }
    }
  }
  return undefined;
}

function isExecutable(path: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(path).isFile()) {
      return false;
    }
    accessSync(path, platform === "win32" ? constants.F_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether this interpreter can run `-m baton` (a quick import, bounded in time). */
export function pythonHasBaton(python: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ["-c", "import baton.cli"], { timeout: 15_000 }, (error) => resolve(error === null));
  });
}

/** The first way to start Baton that should work, or what was tried. */
export async function resolveLaunch(inputs: LaunchInputs): Promise<LaunchResolution> {
  const platform = inputs.platform ?? process.platform;
  const tried: string[] = [];
  const configured = parseConfigured(inputs.configured);
  if (!Array.isArray(configured)) {
    return { ok: false, tried: [configured.error] };
  }
  if (configured.length > 0) {
    const [command, ...args] = configured as [string, ...string[]];
    const resolved = isAbsolute(command) ? (isExecutable(command, platform) ? command : undefined) : findOnPath(command, inputs.env, platform);
    if (resolved !== undefined) {
      return { ok: true, launch: { command: resolved, args, source: "the baton.server.command setting" } };
    }
    // an explicit setting is the user's choice: no silent fallback to something else
    return { ok: false, tried: [`baton.server.command: ${configured.join(" ")} (${command} is not an executable file)`] };
  }
  if (inputs.bundle !== undefined) {
    const onPath = (platform === "win32" ? ["python"] : ["python3", "python"]).map((name) => findOnPath(name, inputs.env, platform));
    const candidates = [inputs.pythonPath, ...onPath].filter((p): p is string => p !== undefined && p !== "");
    const bundled = await bundledLaunch(inputs.bundle, candidates, platform, inputs.pythonVersion);
    if (bundled.launch !== undefined) {
      return { ok: true, launch: bundled.launch };
    }
    tried.push(...bundled.tried);
  } else if (inputs.pythonPath) {
    const check = inputs.pythonHasBaton ?? pythonHasBaton;
    if (await check(inputs.pythonPath)) {
      return {
        ok: true,
        launch: { command: inputs.pythonPath, args: ["-m", "baton", "serve"], source: "the Python extension's interpreter" },
      };
    }
    tried.push(`${inputs.pythonPath} -m baton serve (the selected Python interpreter has no baton module)`);
  } else {
    tried.push("the Python extension's interpreter (none selected, or the extension is not installed)");
  }
  const onPath = findOnPath("baton", inputs.env, platform);
  if (onPath !== undefined) {
    return { ok: true, launch: { command: onPath, args: ["serve"], source: "PATH" } };
  }
  tried.push("baton serve from PATH (no baton executable on PATH)");
  return { ok: false, tried };
}

/**
 * The notification shown when nothing worked: what was tried and what works. No package
 * index has Baton: the platform package carries its server; else it installs from a clone.
 */
export function notFoundMessage(tried: string[], bundled = false): string {
  const fix = bundled
    ? "Install Python 3.11 or newer (python3 on PATH, or select it with Python: Select Interpreter), then run Baton: Restart Server. "
    : "Install the Baton package for your platform (linux-x64, linux-arm64, darwin-x64, darwin-arm64 or win32-x64), which carries its server and needs only Python 3.11 or newer. ";
  return (
    `Baton's server could not be started. Tried: ${tried.join("; ")}. ${fix}` +
    "Or install the server from a clone of Baton: `pipx install <clone>` (or `uv tool install <clone>`) puts baton on PATH, " +
    'or set baton.server.command to ["<path>/baton", "serve"].'
  );
}

/**
 * The initializationOptions the client starts the server with: the `baton` settings as
 * they are now (the server pulls them again later) and the API key, which never joins the
 * settings and never reaches settings.json. The launch command is the client's business.
 */
export function initializationOptions(settings: Record<string, unknown>, key: string | undefined): Record<string, unknown> {
  const { server: _launch, ...rest } = settings;
  return key ? { ...rest, anthropicApiKey: key } : rest;
}
