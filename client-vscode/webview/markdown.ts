// Markdown to HTML for the chat webview: markdown-it without raw HTML, highlight.js for code.
// Everything is bundled; the output holds no style attributes, scripts or remote URLs, so it
// is safe under the view's CSP (no inline styles) and needs no network.
import MarkdownIt, { type StateCore } from "markdown-it";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = {
  bash,
  c,
  cpp,
  css,
  diff,
  go,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

const md = new MarkdownIt({
  html: false, // raw HTML in a message is shown as text, never parsed
  linkify: true,
  highlight: (code, info) => highlight(code, info),
});
// A Markdown image would be a remote fetch (blocked by the CSP anyway): show it as text.
md.disable("image");
// Only a web page is a link. VS Code hands a webview's link to its opener: a vscode: link
// reaches an extension's URI handler, a command: link runs a command where command links are
// on; written by the model, none may be one click away. Any other link is shown as written.
md.validateLink = (url: string): boolean => /^https?:\/\//i.test(url.trim());
// markdown-it aligns table cells with style attributes, which the CSP refuses: use classes.
md.core.ruler.push("baton_align_classes", (state: StateCore) => {
  for (const token of state.tokens) {
    const style = token.attrGet("style");
    if (style === null) continue;
    const align = /text-align:\s*(left|right|center)/.exec(String(style));
    token.attrs = (token.attrs ?? []).filter(([name]) => name !== "style");
    if (align) token.attrJoin("class", `align-${align[1]}`);
  }
  return false;
});

/** The HTML for one Markdown text. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/**
 * The file a fenced block says it is, if it says: its info string (```python:src/app.py,
 * ```python src/app.py, ```python title="src/app.py") or a first-line comment naming a
 * path (`# src/app.py`, `// file: src/app.ts`).
 */
export function blockFile(code: string, info: string): string | undefined {
  const PATH = /^[\w.~@+-]*[\w~@+-][\w./\\~@+-]*\.\w+$/;
  const words = info.trim().split(/\s+/);
  const first = words[0] ?? "";
  const colon = first.indexOf(":");
  const candidates = [
    colon > 0 ? first.slice(colon + 1) : "",
    ...words.slice(1).map((w) => w.replace(/^(?:title|file|filename|path)=/, "").replace(/^["']|["']$/g, "")),
  ];
  const named = candidates.find((c) => PATH.test(c));
  if (named) return named;
  const line = /^(?:#|\/\/|--|;)\s*(?:file(?:name)?:\s*)?(\S+)\s*$/.exec(code.split("\n", 1)[0] ?? "");
  return line && PATH.test(line[1] ?? "") && /[/\\]|\.\w{1,5}$/.test(line[1] ?? "") ? line[1] : undefined;
}

/** A fenced block: highlighted when its language is one we bundle, escaped otherwise. */
function highlight(code: string, info: string): string {
  const lang = (info.trim().split(/\s+/)[0] ?? "").split(":")[0]?.toLowerCase() ?? "";
  const known = lang !== "" && hljs.getLanguage(lang) !== undefined;
  const body = known ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value : md.utils.escapeHtml(code);
  const langClass = known ? ` language-${md.utils.escapeHtml(lang)}` : "";
  const label = lang ? ` data-lang="${md.utils.escapeHtml(lang)}"` : "";
  const file = blockFile(code, info);
  const named = file ? ` data-file="${md.utils.escapeHtml(file)}"` : "";
  return `<pre class="baton-code"${label}${named}><code class="hljs${langClass}">${body}</code></pre>\n`;
}

/** A code block outside Markdown (tool input, tool output), highlighted as `lang`. */
export function codeBlock(code: string, lang = ""): string {
  return highlight(code, lang);
}
