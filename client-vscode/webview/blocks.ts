// One content block (the Anthropic API's shapes) as DOM: Markdown text, image thumbnails,
// and tool calls, tool results and thinking collapsed behind a <details>.
import { folded, h } from "./dom";
import { longText } from "./longText";
import { codeBlock, renderMarkdown } from "./markdown";
import { stripEscapes, titleElement, toolCallLine, type ToolContext } from "./toolCalls";
import type { ContentBlock, DocumentBlock, ImageBlock, ToolResultBlock, ToolUseBlock } from "./wire";

/** What a block needs to know about the rest of the conversation. */
export interface BlockContext extends Partial<ToolContext> {
  /** tool_use id -> tool name, so a result can say which call it answers. */
  toolNames: Map<string, string>;
}

export function renderBlock(block: ContentBlock, ctx: BlockContext): HTMLElement {
  switch (block.type) {
    case "text":
      return markdownElement(block.text);
    case "image":
      return image(block);
    case "document":
      return h("div", { class: "baton-chip" }, documentLabel(block));
    case "tool_use": {
      const info = ctx.toolCalls?.get(block.id); // the server's line for the call, when it ran it
      return info ? toolCallLine(info, block, ctx.toolResults?.get(block.id)) : toolUse(block);
    }
    case "tool_result":
      return toolResult(block, ctx);
    case "thinking":
      return folded("baton-thinking", "Thinking", () => [markdownElement(block.thinking)]);
    case "redacted_thinking":
      return h("div", { class: "baton-chip baton-thinking" }, "Thinking (redacted)");
    default:
      return h("div", { class: "baton-chip" }, `[${(block as { type: string }).type} block]`);
  }
}

/** A Markdown text as DOM (a long one in part: longText.ts). */
export function markdownElement(text: string): HTMLElement {
  return longText(text, "markdown", drawMarkdown);
}

function drawMarkdown(text: string): HTMLElement {
  const el = h("div", { class: "baton-markdown" });
  el.innerHTML = renderMarkdown(text); // markdown-it with html disabled: escaped input only
  return withCodeActions(withCopyButtons(el));
}

/**
 * A message's code blocks get Insert at Cursor and Apply to File (named when the block
 * names its file) beside Copy; the feed posts their clicks to the host.
 */
function withCodeActions(el: HTMLElement): HTMLElement {
  for (const pre of el.querySelectorAll<HTMLElement>("pre.baton-code")) {
    const file = pre.dataset.file;
    const actions = h(
      "span",
      { class: "baton-code-actions" },
      h("button", { type: "button", class: "baton-insert secondary", title: "Insert at the cursor of the active editor" }, "Insert"),
      h(
        "button",
        {
          type: "button",
          class: "baton-apply secondary",
          title: file ? `Apply to ${file}: see the change as a diff first` : "Apply to the active editor's file: see the change as a diff first",
        },
        file ? `Apply to ${basename(file)}` : "Apply",
      ),
    );
    const copy = pre.querySelector(".baton-copy");
    if (copy) actions.append(copy);
    pre.prepend(actions);
  }
  return el;
}

function basename(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/** The code of the block a button sits in, and the file it names. */
export function codeOf(button: HTMLElement): { code: string; file: string | undefined } {
  const pre = button.closest<HTMLElement>("pre.baton-code");
  return { code: pre?.querySelector("code")?.textContent ?? "", file: pre?.dataset.file };
}

/** A code block's HTML as an element with its Copy button (a long one in part: longText.ts). */
function codeElement(code: string, lang = ""): HTMLElement {
  return longText(stripEscapes(code), "code", (part) => {
    const el = h("div", {});
    el.innerHTML = codeBlock(part, lang);
    return withCopyButtons(el);
  });
}

/** Give every code block in `el` a Copy button (the feed handles its clicks: see copyCode). */
function withCopyButtons(el: HTMLElement): HTMLElement {
  for (const pre of el.querySelectorAll("pre.baton-code")) {
    pre.prepend(h("button", { type: "button", class: "baton-copy secondary", "aria-label": "Copy code" }, "Copy"));
  }
  return el;
}

/** A click on a code block's Copy button: the code goes to the clipboard. */
export async function copyCode(button: HTMLElement): Promise<void> {
  const code = button.closest("pre")?.querySelector("code")?.textContent ?? "";
  try {
    await navigator.clipboard.writeText(code);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Copy failed";
  }
  setTimeout(() => (button.textContent = "Copy"), 1500);
}

function image(block: ImageBlock): HTMLElement {
  // a tool result's parts are as their caller gave them: a source may be missing
  const raw: unknown = block.source;
  const source: { [key: string]: unknown } = typeof raw === "object" && raw !== null ? (raw as { [key: string]: unknown }) : {};
  const type = mediaType(source);
  if (source.type === "base64" && typeof source.data === "string" && /^image\/[\w.+-]+$/.test(type)) {
    const img = h("img", {
      class: "baton-thumbnail",
      src: `data:${type};base64,${source.data}`,
      alt: `Image (${type})`,
      loading: "lazy",
    });
    img.addEventListener("click", () => img.classList.toggle("baton-expanded"));
    return img;
  }
  // A URL or file source would be a fetch the view does not make.
  const where = typeof source.url === "string" ? `: ${source.url}` : "";
  return h("div", { class: "baton-chip" }, `Image${where}`);
}

function toolUse(block: ToolUseBlock): HTMLElement {
  return folded(
    "baton-tool baton-tool-use",
    [h("span", { class: "baton-tool-label" }, "Tool call"), " ", h("code", {}, block.name)],
    () => {
      return [h("div", { class: "baton-tool-body" }, codeElement(JSON.stringify(block.input ?? {}, null, 2), "json"))];
    },
  );
}

function toolResult(block: ToolResultBlock, ctx: BlockContext): HTMLElement {
  const name = ctx.toolNames.get(block.tool_use_id);
  const title = ctx.toolCalls?.get(block.tool_use_id)?.title;
  const error = block.is_error === true;
  const label = [
    h("span", { class: "baton-tool-label" }, error ? "Tool error" : "Tool result"),
    name ? " " : "",
    title ? titleElement(title) : name ? h("code", {}, name) : "",
  ];
  return folded(`baton-tool baton-tool-result${error ? " baton-error" : ""}`, label, () => [toolOutput(block)]);
}

function toolOutput(block: ToolResultBlock): HTMLElement {
  const body = h("div", { class: "baton-tool-body" });
  const parts = typeof block.content === "string" ? [{ type: "text", text: block.content }] : (block.content ?? []);
  for (const part of parts) {
    if (part.type === "text" && typeof part.text === "string") {
      body.appendChild(codeElement(part.text));
    } else if (part.type === "image") {
      body.appendChild(image(part as unknown as ImageBlock));
    } else {
      body.appendChild(h("div", { class: "baton-chip" }, `[${String(part.type)}]`));
    }
  }
  if (parts.length === 0) body.appendChild(h("div", { class: "baton-muted" }, "(no output)"));
  return body;
}

/** "Document: <title> (application/pdf)", as much of it as the block says. */
function documentLabel(block: DocumentBlock): string {
  const title = typeof block.title === "string" && block.title.trim() ? `: ${block.title.trim()}` : "";
  return `Document${title} (${mediaType(block.source) || "file"})`;
}

function mediaType(source: { [key: string]: unknown }): string {
  return typeof source.media_type === "string" ? source.media_type : "";
}
