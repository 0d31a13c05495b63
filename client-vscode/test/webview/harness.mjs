// Serves the chat webview the way VS Code does: an empty #root, the bundle loaded with a
// nonce under the extension's own CSP (src/chatHtml.ts's), a stand-in acquireVsCodeApi that
// records what the view posts and keeps its state across reloads, and VS Code's contextmenu
// resolution.
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

export const CLIENT_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The webview bundle built from source with the options of esbuild.mjs's production build. */
export async function buildWebview() {
  const result = await esbuild.build({
    entryPoints: [join(CLIENT_ROOT, "webview", "main.ts")],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

/** The extension's own CSP (src/chatHtml.ts), built from source, so the view is tested
 * under the policy VS Code gets, not a copy of it. */
async function loadContentSecurityPolicy() {
  const result = await esbuild.build({
    entryPoints: [join(CLIENT_ROOT, "src", "chatHtml.ts")],
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    logLevel: "silent",
  });
  const source = Buffer.from(result.outputFiles[0].text).toString("base64");
  return (await import(`data:text/javascript;base64,${source}`)).contentSecurityPolicy;
}

// A few of the variables VS Code puts on a webview's <html>, per theme.
const THEMES = {
  dark: {
    bodyClass: "vscode-dark",
    vars: {
      "debugTokenExpression-name": "#c586c0",
      "debugTokenExpression-string": "#ce9178",
      "debugTokenExpression-boolean": "#4e94ce",
      "debugTokenExpression-number": "#b5cea8",
      "symbolIcon-functionForeground": "#b180d7",
      "symbolIcon-classForeground": "#ee9d28",
      "symbolIcon-variableForeground": "#75beff",
      "gitDecoration-addedResourceForeground": "#81b88b",
      "gitDecoration-deletedResourceForeground": "#c74e39",
      "diffEditor-insertedLineBackground": "#9bb95533",
      "diffEditor-removedLineBackground": "#ff000033",
      "font-family": "system-ui, sans-serif",
      "font-size": "13px",
      "editor-font-family": "monospace",
      "editor-font-size": "12px",
      foreground: "#cccccc",
      "editor-foreground": "#d4d4d4",
      "sideBar-background": "#181818",
      descriptionForeground: "#9d9d9d",
      focusBorder: "#0078d4",
      "button-background": "#0078d4",
      "button-foreground": "#ffffff",
      "button-hoverBackground": "#026ec1",
      "button-secondaryBackground": "#313131",
      "button-secondaryForeground": "#cccccc",
      "button-secondaryHoverBackground": "#3c3c3c",
      "input-background": "#313131",
      "input-foreground": "#cccccc",
      "input-border": "#3c3c3c",
      "input-placeholderForeground": "#989898",
      "dropdown-background": "#313131",
      "dropdown-foreground": "#cccccc",
      "dropdown-border": "#3c3c3c",
      "textLink-foreground": "#4daafc",
      "textCodeBlock-background": "#2b2b2b",
      "textBlockQuote-background": "#2b2b2b",
      "textBlockQuote-border": "#616161",
      "list-hoverBackground": "#2a2d2e",
      "list-activeSelectionBackground": "#04395e",
      "list-inactiveSelectionBackground": "#37373d",
      "widget-border": "#313131",
      "editorWidget-background": "#202020",
      "panel-border": "#2b2b2b",
      "badge-background": "#616161",
      "badge-foreground": "#f8f8f8",
      errorForeground: "#f85149",
      "inputValidation-errorBackground": "#5a1d1d",
      "inputValidation-errorBorder": "#be1100",
      "inputValidation-infoBackground": "#063b49",
      "inputValidation-infoBorder": "#1a85ff",
      "charts-foreground": "#cccccc",
      "charts-blue": "#3794ff",
      "charts-green": "#89d185",
      "charts-yellow": "#cca700",
      "charts-orange": "#d18616",
      "charts-purple": "#b180d7",
      "charts-red": "#f14c4c",
    },
  },
  light: {
    bodyClass: "vscode-light",
    vars: {
      "debugTokenExpression-name": "#9b46b0",
      "debugTokenExpression-string": "#a31515",
      "debugTokenExpression-boolean": "#0000ff",
      "debugTokenExpression-number": "#098658",
      "symbolIcon-functionForeground": "#652d90",
      "symbolIcon-classForeground": "#d67e00",
      "symbolIcon-variableForeground": "#007acc",
      "gitDecoration-addedResourceForeground": "#587c0c",
      "gitDecoration-deletedResourceForeground": "#ad0707",
      "diffEditor-insertedLineBackground": "#9bb95533",
      "diffEditor-removedLineBackground": "#ff000033",
      "font-family": "system-ui, sans-serif",
      "font-size": "13px",
      "editor-font-family": "monospace",
      "editor-font-size": "12px",
      foreground: "#3b3b3b",
      "editor-foreground": "#3b3b3b",
      "sideBar-background": "#f8f8f8",
      descriptionForeground: "#717171",
      focusBorder: "#005fb8",
      "button-background": "#005fb8",
      "button-foreground": "#ffffff",
      "button-hoverBackground": "#0258a8",
      "button-secondaryBackground": "#e5e5e5",
      "button-secondaryForeground": "#3b3b3b",
      "button-secondaryHoverBackground": "#cccccc",
      "input-background": "#ffffff",
      "input-foreground": "#3b3b3b",
      "input-border": "#cecece",
      "input-placeholderForeground": "#767676",
      "dropdown-background": "#ffffff",
      "dropdown-foreground": "#3b3b3b",
      "dropdown-border": "#cecece",
      "textLink-foreground": "#005fb8",
      "textCodeBlock-background": "#f0f0f0",
      "textBlockQuote-background": "#f2f2f2",
      "textBlockQuote-border": "#e5e5e5",
      "list-hoverBackground": "#f2f2f2",
      "list-activeSelectionBackground": "#e8e8e8",
      "list-inactiveSelectionBackground": "#e4e6f1",
      "widget-border": "#e5e5e5",
      "editorWidget-background": "#f8f8f8",
      "panel-border": "#e5e5e5",
      "badge-background": "#cccccc",
      "badge-foreground": "#3b3b3b",
      errorForeground: "#f85149",
      "inputValidation-errorBackground": "#f2dede",
      "inputValidation-errorBorder": "#be1100",
      "inputValidation-infoBackground": "#d6ecf2",
      "inputValidation-infoBorder": "#007acc",
      "charts-foreground": "#616161",
      "charts-blue": "#1a85ff",
      "charts-green": "#388a34",
      "charts-yellow": "#bf8803",
      "charts-orange": "#d18616",
      "charts-purple": "#652d90",
      "charts-red": "#e51400",
    },
  },
  hc: {
    bodyClass: "vscode-high-contrast",
    vars: {
      "debugTokenExpression-name": "#ffffff",
      "debugTokenExpression-string": "#f48771",
      "debugTokenExpression-boolean": "#75bdfe",
      "debugTokenExpression-number": "#89d185",
      "symbolIcon-functionForeground": "#b180d7",
      "symbolIcon-classForeground": "#ee9d28",
      "symbolIcon-variableForeground": "#75beff",
      "font-family": "system-ui, sans-serif",
      "font-size": "13px",
      "editor-font-family": "monospace",
      "editor-font-size": "12px",
      foreground: "#ffffff",
      "editor-foreground": "#ffffff",
      "sideBar-background": "#000000",
      descriptionForeground: "#ffffff",
      focusBorder: "#f38518",
      contrastBorder: "#6fc3df",
      contrastActiveBorder: "#f38518",
      "diffEditor-insertedTextBorder": "#33ff2e",
      "diffEditor-removedTextBorder": "#ff008f",
      "button-background": "#000000",
      "button-foreground": "#ffffff",
      "button-border": "#6fc3df",
      "button-secondaryBackground": "#000000",
      "button-secondaryForeground": "#ffffff",
      "input-background": "#000000",
      "input-foreground": "#ffffff",
      "input-border": "#6fc3df",
      "dropdown-background": "#000000",
      "dropdown-foreground": "#ffffff",
      "dropdown-border": "#6fc3df",
      "textLink-foreground": "#21a6ff",
      "textCodeBlock-background": "#000000",
      "widget-border": "#6fc3df",
      "panel-border": "#6fc3df",
      "charts-blue": "#3794ff",
      "charts-green": "#89d185",
      "charts-yellow": "#ffd700",
      "charts-orange": "#d18616",
      "charts-purple": "#b180d7",
      "charts-red": "#f14c4c",
    },
  },
};

// The stand-in for VS Code's webview API and its contextmenu handling (its webview preload
// listens on the window and merges data-vscode-context from the target up through its
// ancestors, nearest wins, unless the event was default-prevented).
const HOST_SCRIPT = `
(() => {
  const KEY = "vscode-webview-state";
  const record = (window.__baton = {
    posted: [],
    contextMenus: [],
    violations: [],
    stateWrites: 0,
  });
  document.addEventListener("securitypolicyviolation", (e) => {
    record.violations.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample });
  });
  let acquired = false;
  window.acquireVsCodeApi = () => {
    if (acquired) throw new Error("An instance of the VS Code API has already been acquired");
    acquired = true;
    return Object.freeze({
      postMessage: (message) => record.posted.push(JSON.parse(JSON.stringify(message))),
      getState: () => {
        const raw = sessionStorage.getItem(KEY);
        return raw === null ? undefined : JSON.parse(raw);
      },
      setState: (state) => {
        record.stateWrites += 1;
        sessionStorage.setItem(KEY, JSON.stringify(state));
        return state;
      },
    });
  };
  window.addEventListener("contextmenu", (e) => {
    if (e.defaultPrevented) return;
    e.preventDefault();
    let context = {};
    for (let el = e.target instanceof Element ? e.target : null; el; el = el.parentElement) {
      el = el.closest("[data-vscode-context]");
      if (!el) break;
      context = { ...JSON.parse(el.dataset.vscodeContext), ...context };
    }
    record.contextMenus.push(context);
  });
})();
`;

function page(policy, nonce, origin, theme) {
  const { bodyClass } = THEMES[theme] ?? THEMES.dark;
  const csp = policy(origin, nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${origin}/theme/${theme}.css">
<link rel="stylesheet" href="${origin}/media/chat.css">
<title>Baton</title>
</head>
<body class="${bodyClass}">
<div id="root"></div>
<script nonce="${nonce}" src="${origin}/host.js"></script>
<script nonce="${nonce}" src="${origin}/dist/webview.js"></script>
</body>
</html>`;
}

function themeCss(theme) {
  const { vars } = THEMES[theme] ?? THEMES.dark;
  const lines = Object.entries(vars).map(([name, value]) => `  --vscode-${name}: ${value};`);
  // VS Code paints the view's background behind the webview; the harness does it here.
  return `html {\n${lines.join("\n")}\n  background: var(--vscode-sideBar-background);\n}\n`;
}

/** Start the loopback server; `url(theme)` is a fresh page (new nonce each load). */
export async function serve() {
  const bundle = await buildWebview();
  const contentSecurityPolicy = await loadContentSecurityPolicy();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const origin = `http://127.0.0.1:${server.address().port}`;
    const send = (status, type, body) => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      res.end(body);
    };
    try {
      if (url.pathname === "/") {
        return send(
          200,
          "text/html",
          page(
            contentSecurityPolicy,
            randomBytes(16).toString("base64"),
            origin,
            url.searchParams.get("theme") ?? "dark",
          ),
        );
      }
      if (url.pathname === "/host.js") return send(200, "text/javascript", HOST_SCRIPT);
      if (url.pathname === "/dist/webview.js") return send(200, "text/javascript", bundle);
      const themeMatch = /^\/theme\/(\w+)\.css$/.exec(url.pathname);
      if (themeMatch) return send(200, "text/css", themeCss(themeMatch[1]));
      const media = /^\/media\/([\w.-]+\.css)$/.exec(url.pathname);
      if (media) return send(200, "text/css", await readFile(join(CLIENT_ROOT, "media", media[1])));
      send(404, "text/plain", "not found");
    } catch (error) {
      send(500, "text/plain", String(error));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    url: (theme = "dark") => `${origin}/?theme=${theme}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
