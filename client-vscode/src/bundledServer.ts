/**
 * The server a platform-specific package carries (bundled/, laid out by
 * scripts/bundle_server.py): which Python runs it, and how any started server is checked
 * against the extension's contract. No vscode import.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CONTRACT_VERSION } from "./protocol";

export interface Bundle {
  /** The bundled/ folder: bundle.json and libs/. */
  dir: string;
  target: string;
  batonVersion: string;
  /** The CPython versions it has libraries for, e.g. ["3.11", "3.12"]. */
  pythons: string[];
}

/** What the extension carries in bundled/bundle.json, or undefined (the universal package). */
export function readBundle(extensionPath: string): Bundle | undefined {
  const dir = join(extensionPath, "bundled");
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(join(dir, "bundle.json"), "utf8"));
  } catch {
    return undefined;
  }
  const m = manifest as Partial<Bundle>;
  if (typeof m.target !== "string" || typeof m.batonVersion !== "string" || !Array.isArray(m.pythons)) {
    return undefined;
  }
  return { dir, target: m.target, batonVersion: m.batonVersion, pythons: m.pythons.filter((p) => typeof p === "string") };
}

/** `python`'s major.minor ("3.11"), or undefined when it does not run (bounded in time). */
export function pythonVersion(python: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(python, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { timeout: 15_000 }, (error, stdout) =>
      resolve(error === null && /^\d+\.\d+$/.test(stdout.trim()) ? stdout.trim() : undefined),
    );
  });
}

export interface BundledLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  source: string;
}

/** The libraries folders for `version`: its own (compiled wheels) first, then the shared ones. */
export function bundlePythonPath(bundle: Bundle, version: string, platform: NodeJS.Platform): string {
  const sep = platform === "win32" ? ";" : ":";
  const libs = join(bundle.dir, "libs");
  return [join(libs, "cp" + version.replace(".", "")), join(libs, "common")].join(sep);
}

/**
 * The bundled server on the first candidate interpreter (the Python extension's, then
 * python3 / python on PATH) whose version the bundle has libraries for; else what was tried.
 */
export async function bundledLaunch(
  bundle: Bundle,
  candidates: string[],
  platform: NodeJS.Platform,
  probe: (python: string) => Promise<string | undefined> = pythonVersion,
): Promise<{ launch?: BundledLaunch; tried: string[] }> {
  const tried: string[] = [];
  const supported = `Python ${bundle.pythons[0]} to ${bundle.pythons[bundle.pythons.length - 1]}`;
  if (candidates.length === 0) {
    tried.push(`the bundled server (no Python found: it needs ${supported}, as python3 on PATH or selected with Python: Select Interpreter)`);
  }
  for (const python of [...new Set(candidates)]) {
    const version = await probe(python);
    if (version === undefined) {
      tried.push(`the bundled server with ${python} (it did not run)`);
    } else if (!bundle.pythons.includes(version)) {
      tried.push(`the bundled server with ${python} (Python ${version}; it needs ${supported})`);
    } else {
      return {
        launch: {
          command: python,
          // -s: the user's site-packages cannot shadow the bundled libraries
          args: ["-s", "-m", "baton", "serve"],
          env: { PYTHONPATH: bundlePythonPath(bundle, version, platform), PYTHONNOUSERSITE: "1" },
          source: `the bundled server (Python ${version}, ${python})`,
        },
        tried,
      };
    }
  }
  return { tried };
}

/** The parts of the initialize answer the extension reads. */
export interface ServerHello {
  serverInfo?: { name: string; version?: string };
  capabilities?: { experimental?: unknown };
}

/** The contract version a server advertised (0: none, a server from before the check). */
export function advertisedContract(hello: ServerHello | undefined): number {
  const experimental = hello?.capabilities?.experimental as { baton?: { contractVersion?: unknown } } | undefined;
  const version = experimental?.baton?.contractVersion;
  return typeof version === "number" && Number.isInteger(version) ? version : 0;
}

/** "Baton 0.1.0" as the server names itself. */
export function serverName(hello: ServerHello | undefined): string {
  const version = hello?.serverInfo?.version;
  return `Baton ${version ?? "(version unknown)"}`;
}

/**
 * Why the server that answered `hello` cannot be used (its contract is older than the
 * extension's), with how to update it for where it came from; undefined when it can.
 */
export function contractProblem(hello: ServerHello | undefined, source: string, expected: number = CONTRACT_VERSION): string | undefined {
  const found = advertisedContract(hello);
  if (found >= expected) {
    return undefined;
  }
  const how = source.startsWith("the baton.server.command")
    ? "update the server that setting starts (from a clone of Baton: git pull, then pipx install --force . or pip install -e . in its environment), or clear baton.server.command to use the server this extension carries"
    : source.startsWith("the bundled")
      ? "reinstall this extension (Extensions view: Baton, Install Specific Version or Reinstall)"
      : "update the baton on PATH (from a clone of Baton: git pull, then pipx install --force . or uv tool install --force .), or install the Baton extension for your platform, which carries its own server";
  return (
    `Baton's server ${serverName(hello)} from ${source} speaks contract ${found}; this extension needs contract ${expected} or newer. ` +
    `To update: ${how}. Then run Baton: Restart Server.`
  );
}
