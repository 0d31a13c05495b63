/** The chat webview's HTML: a strict CSP with a per-load nonce, only the bundled script and styles. */
import { randomBytes } from "node:crypto";

export interface ChatHtmlInputs {
  /** webview.cspSource: the origin the webview's local resources are served from. */
  cspSource: string;
  /** asWebviewUri of dist/webview.js. */
  scriptUri: string;
  /** asWebviewUri of each media/*.css the view links. */
  styleUris: string[];
  nonce: string;
}

/** A fresh nonce for one load of the view (base64 of 18 random bytes). */
export function makeNonce(): string {
  return randomBytes(18).toString("base64");
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
}

export function chatHtml(inputs: ChatHtmlInputs): string {
  const csp = contentSecurityPolicy(inputs.cspSource, inputs.nonce);
  const styles = inputs.styleUris.map((uri) => `    <link rel="stylesheet" href="${attr(uri)}">`).join("\n");
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
    <meta name="viewport" content="width=device-width, initial-scale=1.0">
${styles}
    <title>Baton</title>
  </head>
  <body>
    <div id="root"></div>
    <script nonce="${attr(inputs.nonce)}" src="${attr(inputs.scriptUri)}"></script>
  </body>
</html>
`;
}

function attr(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
