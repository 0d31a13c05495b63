// `npm run package`: the universal baton.vsix (no server: it starts the one the user set up)
// and one baton-<target>.vsix per platform carrying the server and its libraries for every
// supported CPython (scripts/bundle_server.py lays them out in bundled/, from the package
// index). BATON_VSIX_TARGETS narrows the platforms (comma-separated; "none": universal only);
// BATON_PYTHON is the Python that builds Baton's wheel (default: python3, or the active venv's).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..");
const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"];
const chosen = (process.env.BATON_VSIX_TARGETS ?? TARGETS.join(",")).split(",").map((t) => t.trim()).filter((t) => t && t !== "none");
for (const target of chosen) if (!TARGETS.includes(target)) throw new Error(`unknown target ${target} (one of ${TARGETS.join(", ")})`);
const python = process.env.BATON_PYTHON || (process.env.VIRTUAL_ENV ? join(process.env.VIRTUAL_ENV, "bin", "python") : "python3");
const vsce = join(repo, "node_modules", ".bin", "vsce");
const bundled = join(here, "bundled");

function run(command, args, cwd = here, quiet = false) {
  execFileSync(command, args, { cwd, stdio: ["ignore", quiet ? "ignore" : "inherit", "inherit"] });
}

function vsix(out, target) {
  const started = Date.now();
  // The universal package has every file of the extension and vsce scans it for secrets; a
  // platform package adds only bundled/ (Baton's wheel and wheels from the package index),
  // whose thousands of files the scan would take minutes over: it is not scanned again.
  const targetArgs = target ? ["--target", target, "--allow-package-all-secrets"] : [];
  run(vsce, ["package", "--no-dependencies", "--allow-missing-repository", ...targetArgs, "-o", out]);
  const mb = (statSync(join(here, out)).size / 1e6).toFixed(1);
  console.log(`package.mjs: ${out}: ${mb} MB (${((Date.now() - started) / 1000).toFixed(0)} s)`);
}

rmSync(bundled, { recursive: true, force: true });
vsix("baton.vsix");
if (chosen.length > 0) {
  const wheels = mkdtempSync(join(tmpdir(), "baton-wheel-"));
  try {
    // the sdist, then the wheel from it: nothing left over in the tree (build/) joins the wheel
    run(python, ["-m", "build", "--outdir", wheels, repo], repo, true);
    const wheel = readdirSync(wheels).find((name) => name.endsWith(".whl"));
    if (!wheel) throw new Error("python -m build made no wheel");
    for (const target of chosen) {
      const started = Date.now();
      run(python, [join(repo, "scripts", "bundle_server.py"), "--target", target, "--wheel", join(wheels, wheel), "--out", bundled], repo);
      console.log(`package.mjs: bundled the server for ${target} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
      vsix(`baton-${target}.vsix`, target);
    }
  } finally {
    rmSync(wheels, { recursive: true, force: true });
    rmSync(bundled, { recursive: true, force: true });
  }
}
