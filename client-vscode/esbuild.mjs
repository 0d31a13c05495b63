// Bundles the extension host code (node, CommonJS) and the chat webview script (browser, IIFE).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const watch = process.argv.includes("--watch");
const production = !process.argv.includes("--dev");

const common = {
  bundle: true,
  sourcemap: production ? false : "inline",
  minify: production,
  logLevel: "info",
  absWorkingDir: here,
};

const builds = [
  {
    ...common,
    entryPoints: [join(here, "src/extension.ts")],
    outfile: join(here, "dist/extension.js"),
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
  },
];

const webviewEntry = join(here, "webview/main.ts");
if (existsSync(webviewEntry)) {
  builds.push({
    ...common,
    entryPoints: [webviewEntry],
    outfile: join(here, "dist/webview.js"),
    platform: "browser",
    format: "iife",
    target: "es2022",
  });
} else {
  console.warn("esbuild.mjs: webview/main.ts is not there yet; building the extension only");
}

if (watch) {
  for (const options of builds) {
    const context = await esbuild.context(options);
    await context.watch();
  }
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
