// Small DOM builders for the chat webview: elements, text, and no HTML strings but Markdown's.
import { formatTokens } from "../src/meterText";

type Attrs = { [name: string]: string | boolean | undefined };
type Child = Node | string | null | undefined | false;

/** An element with attributes (false/undefined skip one) and children (falsy ones skipped). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? "" : value);
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** A button that runs `onClick`; `type="button"` so it never submits a form. */
export function button(label: string, onClick: (event: MouseEvent) => void, attrs: Attrs = {}): HTMLButtonElement {
  const el = h("button", { type: "button", ...attrs }, label);
  el.addEventListener("click", onClick);
  return el;
}

/** A collapsed <details> with a summary line and its body. */
export function collapsed(className: string, summary: Child | Child[], ...body: Child[]): HTMLDetailsElement {
  const head = h("summary", {});
  append(head, ...(Array.isArray(summary) ? summary : [summary]));
  return h("details", { class: className }, head, ...body);
}

/**
 * A collapsed <details> whose body is built the first time it opens: a long session's tool
 * inputs and outputs cost nothing until someone looks at them.
 */
export function folded(className: string, summary: Child | Child[], build: () => Child[]): HTMLDetailsElement {
  const details = collapsed(className, summary);
  let built = false;
  details.addEventListener("toggle", () => {
    if (!details.open || built) return;
    built = true;
    append(details, ...build());
  });
  return details;
}

/** 12,345 -> "12.3K": figures read as the status-bar meter reads them (formatTokens). */
export const compactNumber = formatTokens;
