// What each package `npm run package` built holds: the universal baton.vsix carries no
// server; each baton-<target>.vsix carries Baton's wheel and, for every supported CPython,
// the compiled wheels of its platform (and no test code). Each listing is written to
// out/vsix/<name>.txt, and its size and file counts are printed.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const clientDir = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const listings = join(clientDir, "out", "vsix");
const manifest = JSON.parse(readFileSync(join(clientDir, "package.json"), "utf8"));
const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"];
const chosen = (process.env.BATON_VSIX_TARGETS ?? TARGETS.join(",")).split(",").filter((t) => t && t !== "none");
const PYTHONS = ["3.11", "3.12", "3.13", "3.14"];
// what a compiled wheel of each target is tagged with, and its extension modules' suffix
const PLATFORM_TAG = {
  "linux-x64": /^manylinux.*_x86_64$/,
  "linux-arm64": /^manylinux.*_aarch64$/,
  "darwin-x64": /^macosx_\d+_\d+_(x86_64|universal2|intel)$/,
  "darwin-arm64": /^macosx_\d+_\d+_(arm64|universal2)$/,
  "win32-x64": /^win_amd64$/,
};
const SUFFIX = {
  "linux-x64": (cp) => `.cpython-${cp}-x86_64-linux-gnu.so`,
  "linux-arm64": (cp) => `.cpython-${cp}-aarch64-linux-gnu.so`,
  "darwin-x64": (cp) => `.cpython-${cp}-darwin.so`,
  "darwin-arm64": (cp) => `.cpython-${cp}-darwin.so`,
  "win32-x64": (cp) => `.cp${cp}-win_amd64.pyd`,
};
const COMPILED = ["pydantic_core", "tiktoken", "jiter", "regex"];

/** The archive's entry names and the text of its bundle.json (python3's zipfile reads it). */
function open(vsix) {
  const script =
    "import json, sys, zipfile\n" +
    "z = zipfile.ZipFile(sys.argv[1])\n" +
    "names = z.namelist()\n" +
    "b = 'extension/bundled/bundle.json'\n" +
    "print(json.dumps({'names': names, 'bundle': z.read(b).decode() if b in names else None}))\n";
  return JSON.parse(execFileSync("python3", ["-c", script, vsix], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 }));
}

function list(name, vsix, names) {
  mkdirSync(listings, { recursive: true });
  writeFileSync(join(listings, `${name}.txt`), names.join("\n") + "\n");
  const folders = {};
  for (const n of names) {
    const m = /^extension\/bundled\/libs\/([^/]+)\//.exec(n);
    const key = m ? `libs/${m[1]}` : "extension";
    folders[key] = (folders[key] ?? 0) + 1;
  }
  const mb = (statSync(vsix).size / 1e6).toFixed(1);
  console.log(`${name}: ${mb} MB, ${names.length} files (${Object.entries(folders).map(([k, v]) => `${k} ${v}`).join(", ")}); listed in ${join(listings, name + ".txt")}`);
}

function commonChecks(names) {
  assert.ok(names.includes("extension/dist/extension.js"), "the bundled extension code");
  assert.ok(names.includes("extension/package.json"));
  const own = names.filter((n) => !n.startsWith("extension/bundled/") || /^extension\/bundled\/libs\/common\/baton\//.test(n));
  const tests = own.filter((n) => /(^|\/)(tests?|test-results|src|out|node_modules)\/|(^|\/)test_[^/]*\.py$/.test(n));
  assert.deepEqual(tests, [], "no test code and no sources in Baton's own files");
  const elsewhere = names.filter((n) => /\/(tests?|testing)\/.*\.py$/.test(n));
  assert.deepEqual(elsewhere, [], "no dependency's tests either");
  assert.deepEqual(names.filter((n) => n.includes("baton_testkit")), [], "no test kit anywhere");
  assert.deepEqual(names.filter((n) => /__pycache__|\.pyc$/.test(n)), [], "no compiled bytecode");
}

test("the universal package carries no server", () => {
  const vsix = join(clientDir, "baton.vsix");
  assert.ok(existsSync(vsix), "npm run package builds baton.vsix");
  const { names, bundle } = open(vsix);
  list("universal", vsix, names);
  commonChecks(names);
  assert.equal(bundle, null);
  assert.deepEqual(names.filter((n) => n.startsWith("extension/bundled/")), []);
});

for (const target of chosen) {
  test(`baton-${target}.vsix carries the server for ${target}, Python ${PYTHONS[0]} to ${PYTHONS.at(-1)}`, () => {
    const vsix = join(clientDir, `baton-${target}.vsix`);
    assert.ok(existsSync(vsix), `npm run package builds ${vsix}`);
    const { names, bundle: text } = open(vsix);
    list(target, vsix, names);
    commonChecks(names);
    const bundle = JSON.parse(text);
    assert.equal(bundle.target, target);
    assert.equal(bundle.batonVersion, manifest.version, "the server's version is the extension's");
    assert.deepEqual(bundle.pythons, PYTHONS);
    const has = (path) => names.includes(`extension/bundled/libs/${path}`);
    const common = bundle.wheels.common;
    assert.ok(common.includes(`baton_lsp-${manifest.version}-py3-none-any.whl`), "Baton's own wheel");
    assert.ok(has(`common/baton_lsp-${manifest.version}.dist-info/METADATA`));
    assert.ok(has("common/baton/cli/main.py") && has("common/baton/__main__.py"));
    assert.ok(has("common/tiktoken_ext/data/cl100k_base.tiktoken"), "cl100k's BPE table: nothing fetched at run time");
    for (const wheel of common) assert.match(wheel, /-none-any\.whl$/, `${wheel} in common/ is pure Python`);
    for (const python of PYTHONS) {
      const cp = python.replace(".", "");
      const folder = bundle.wheels[`cp${cp}`];
      assert.ok(Array.isArray(folder), `a folder for Python ${python}`);
      for (const wheel of folder) {
        const [, , , pyTag, abiTag, platTags] = /^(.+?)-(.+)-([^-]+)-([^-]+)-([^-]+)\.whl$/.exec(wheel) ?? [];
        assert.ok(platTags, `${wheel} is a wheel file name`);
        if (platTags === "any") continue; // a pure wheel only this Python needs
        assert.ok(pyTag.split(".").some((t) => t === `cp${cp}` || (t.startsWith("cp3") && abiTag === "abi3")), `${wheel} is for CPython ${python}`);
        assert.ok(platTags.split(".").some((t) => PLATFORM_TAG[target].test(t)), `${wheel} is for ${target}`);
      }
      for (const name of COMPILED) {
        assert.ok(
          folder.some((w) => w.startsWith(`${name}-`)),
          `${name}'s compiled wheel for Python ${python}`,
        );
      }
      const ext = names.filter((n) => n.startsWith(`extension/bundled/libs/cp${cp}/pydantic_core/_pydantic_core.`) && /\.(so|pyd)$/.test(n));
      assert.deepEqual(ext.map((n) => n.slice(n.indexOf("_pydantic_core") + "_pydantic_core".length)), [SUFFIX[target](cp)]);
      for (const other of TARGETS.filter((t) => SUFFIX[t](cp) !== SUFFIX[target](cp))) {
        const foreign = names.filter((n) => n.startsWith(`extension/bundled/libs/cp${cp}/`) && n.endsWith(SUFFIX[other](cp)));
        assert.deepEqual(foreign, [], `no ${other} modules in the ${target} package`);
      }
    }
  });
}
