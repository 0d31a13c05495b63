import assert from "node:assert/strict";
import { test } from "node:test";
import { chatHtml, contentSecurityPolicy, makeNonce } from "../../src/chatHtml";

const source = "https://file+.vscode-resource.vscode-cdn.net";
const inputs = {
  cspSource: source,
  scriptUri: `${source}/ext/dist/webview.js`,
  styleUris: [`${source}/ext/media/chat.css`],
  nonce: "abc123XYZ+/=",
};

test("the policy allows nothing but the extension's own files and the nonce's script", () => {
  const csp = contentSecurityPolicy(source, "n1");
  assert.match(csp, /^default-src 'none'/);
  assert.match(csp, /script-src 'nonce-n1'(;|$)/);
  assert.match(csp, new RegExp(`style-src ${source.replace(/[.+]/g, "\\$&")}(;|$)`));
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
});

test("the page loads the bundled script with the nonce and links the styles", () => {
  const html = chatHtml(inputs);
  assert.match(html, /<script nonce="abc123XYZ\+\/=" src="https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/dist\/webview\.js"><\/script>/);
  assert.match(html, /<link rel="stylesheet" href="[^"]+\/media\/chat\.css">/);
  assert.match(html, /<div id="root"><\/div>/);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
});

test("every URL in the page is a webview resource: no remote resources", () => {
  const html = chatHtml(inputs);
  const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
  assert.ok(urls.length >= 2);
  for (const url of urls) {
    assert.ok(url.startsWith(source), url);
  }
});

test("each load gets a different nonce", () => {
  const nonces = new Set([makeNonce(), makeNonce(), makeNonce()]);
  assert.equal(nonces.size, 3);
  for (const nonce of nonces) {
    assert.match(nonce, /^[A-Za-z0-9+/]{24}$/);
  }
});
