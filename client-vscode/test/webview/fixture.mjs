// A session as the extension host hands it to the chat webview: a compaction boundary with
// restored files, Markdown with code, a tool call and its result, an image, thinking.

/** A 32x20 gradient PNG. */
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAACAAAAAUCAIAAABj86gYAAAEqUlEQVR42g3Noc9EYADAYU2xiSZdI14QLr5RsYkmXXPRplx8o2ITTfIrJtoU8Y1XbCJNMtGmqN/3/AOPpmnoGqaGpfHQcDWeGi8NoeFrhBqRxlvjo5FqfDWkRq5RalQajUan0WuMGkrjpzFrLBqbxqFxatwammagG5gGlsHDwDV4GrwMhIFvEBpEBm+Dj0Fq8DWQBrlBaVAZNAadQW8wGiiDn8FssBhsBofBaXAb/4GNbmPaWDYPG9fmafOyETa+TWgT2bxtPjapzddG2uQ2pU1l09h0Nr3NaKNsfjazzWKz2Rw2p81t/wcOuoPpYDk8HFyHp8PLQTj4DqFD5PB2+DikDl8H6ZA7lA6VQ+PQOfQOo4Ny+DnMDovD5nA4nA638x946B6mh+Xx8HA9nh4vD+Hhe4Qekcfb4+ORenw9pEfuUXpUHo1H59F7jB7K4+cxeywem8fhcXrc3n8g0AWmwBI8BK7gKXgJhMAXhIJI8BZ8BKngK5CCXFAKKkEj6AS9YBQowU8wCxbBJjgEp+AW/0GAHmAGWAGPADfgGfAKEAF+QBgQBbwDPgFpwDdABuQBZUAV0AR0AX3AGKACfgFzwBKwBRwBZ8Ad/AcxeowZY8U8YtyYZ8wrRsT4MWFMFPOO+cSkMd8YGZPHlDFVTBPTxfQxY4yK+cXMMUvMFnPEnDF3/B8k6AlmgpXwSHATngmvBJHgJ4QJUcI74ZOQJnwTZEKeUCZUCU1Cl9AnjAkq4ZcwJywJW8KRcCbcyX+QoWeYGVbGI8PNeGa8MkSGnxFmRBnvjE9GmvHNkBl5RplRZTQZXUafMWaojF/GnLFkbBlHxplxZ/+BRJeYEkvykLiSp+QlERJfEkoiyVvykaSSr0RKckkpqSSNpJP0klGiJD/JLFkkm+SQnJJb/gcFeoFZYBU8CtyCZ8GrQBT4BWFBVPAu+BSkBd8CWZAXlAVVQVPQFfQFY4Eq+BXMBUvBVnAUnAV38R/U6DVmjVXzqHFrnjWvGlHj14Q1Uc275lOT1nxrZE1eU9ZUNU1NV9PXjDWq5lcz1yw1W81Rc9bc9X/QoreYLVbLo8Vteba8WkSL3xK2RC3vlk9L2vJtkS15S9lStTQtXUvfMraoll/L3LK0bC1Hy9lyt//BgD5gDlgDjwF34DnwGhAD/kA4EA28Bz4D6cB3QA7kA+VANdAMdAP9wDigBn4D88AysA0cA+fAPfwHCl1hKizFQ+EqnoqXQih8RaiIFG/FR5EqvgqpyBWlolI0ik7RK0aFUvwUs2JRbIpDcSpu9R9M6BPmhDXxmHAnnhOvCTHhT4QT0cR74jORTnwn5EQ+UU5UE81EN9FPjBNq4jcxTywT28QxcU7c03+woq+YK9bKY8Vdea68VsSKvxKuRCvvlc9KuvJdkSv5SrlSrTQr3Uq/Mq6old/KvLKsbCvHyrlyr//Bjr5j7lg7jx1357nz2hE7/k64E+28dz476c53R+7kO+VOtdPsdDv9zrijdn47886ys+0cO+fOvf8HF/qFeWFdPC7ci+fF60Jc+BfhRXTxvvhcpBffC3mRX5QX1UVz0V30F+OFuvhdzBfLxXZxXJwX98Uf1wfxouWu4FQAAAAASUVORK5CYII=";

export const SESSION = {
  sessionId: "s_demo",
  title: "Refactor the token meter",
  model: "claude-sonnet-4-5",
  createdAt: "2026-12-01T09:00:00Z",
  updatedAt: "2026-12-01T10:00:00Z",
  uri: "baton:/sessions/s_demo.md",
  compactions: 1,
  readOnly: false,
};

export const OTHER_SESSION = { ...SESSION, sessionId: "s_other", title: "Fix the importer", compactions: 0 };

const text = (t) => ({ type: "text", text: t });

export const MESSAGES = [
  {
    id: "m_summary",
    role: "user",
    kind: "summary",
    boundaryId: "bnd_1",
    content: [
      text(
        "This session is being continued from a previous conversation.\n\n<summary>\n" +
          "## Primary request\nMove the meter's thresholds into **settings**.\n\n" +
          "## Files\n- `server/baton/core/budget.py`\n</summary>\n",
      ),
    ],
    createdAt: "2026-12-01T09:30:00Z",
    tokens: 812,
  },
  {
    id: "m_user1",
    role: "user",
    kind: "message",
    content: [
      text(
        "Why does `percent_left` go **negative**? <script>window.injected = true</script> <img src=x onerror=alert(1)>\n\n" +
          "| figure | tokens |\n| :--- | ---: |\n| used | 124,000 |\n| window | 200,000 |",
      ),
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQK" },
        title: "march.pdf",
      },
    ],
    createdAt: "2026-12-01T09:31:00Z",
    tokens: 1210,
  },
  {
    id: "m_asst1",
    role: "assistant",
    kind: "message",
    content: [
      { type: "thinking", thinking: "The threshold is subtracted before the clamp.", signature: "sig" },
      text("Let me read the budget code first."),
      { type: "tool_use", id: "tu_1", name: "read_file", input: { path: "server/baton/core/budget.py" } },
    ],
    createdAt: "2026-12-01T09:31:10Z",
    tokens: 95,
  },
  {
    id: "m_result1",
    role: "user",
    kind: "message",
    content: [
      {
        type: "tool_result",
        tool_use_id: "tu_1",
        content: "def percent_left(used, threshold):\n    return 100 * (threshold - used) // threshold\n",
      },
    ],
    createdAt: "2026-12-01T09:31:11Z",
    tokens: 40,
  },
  {
    id: "m_asst2",
    role: "assistant",
    kind: "message",
    pinned: true,
    content: [
      text(
        "It is not clamped. Clamp it to `[0, 100]`:\n\n```python\ndef percent_left(used: int, threshold: int) -> int:\n" +
          "    return max(0, min(100, 100 * (threshold - used) // threshold))\n```\n\nSee [the docs](https://example.com/docs).",
      ),
    ],
    createdAt: "2026-12-01T09:31:30Z",
    tokens: 160,
  },
  {
    id: "m_att1",
    role: "user",
    kind: "attachment",
    boundaryId: "bnd_1",
    attachment: { path: "/work/project/server/baton/core/budget.py", label: "Restored file" },
    content: [
      text(
        "Restored file: /work/project/server/baton/core/budget.py\nRestored after a compaction from disk.\n```\nclass Usage: ...\n```",
      ),
    ],
    createdAt: "2026-12-01T09:30:00Z",
    tokens: 300,
  },
  {
    id: "m_att2",
    role: "user",
    kind: "attachment",
    boundaryId: "bnd_1",
    attachment: { path: "/work/project/docs/PROTOCOL.md", label: "Restored file" },
    content: [
      text(
        "Restored file: /work/project/docs/PROTOCOL.md\nRestored after a compaction from the editor (unsaved changes included).\n```\n# Protocol\n```",
      ),
    ],
    createdAt: "2026-12-01T09:30:00Z",
    tokens: 200,
  },
];

export const USAGE = {
  sessionId: "s_demo",
  model: "claude-sonnet-4-5",
  contextWindow: 200000,
  effectiveWindow: 180000,
  autoCompactThreshold: 167000,
  warningThreshold: 147000,
  errorThreshold: 157000,
  blockingLimit: 177000,
  usedTokens: 124000,
  percentUsed: 62,
  percentLeft: 26,
  state: "ok",
  estimated: true,
  autoCompactEnabled: true,
  autoCompactPaused: false,
  estimatorExact: true,
  warnings: [],
  basis: "estimate",
  // the server's words (Usage.text); the view shows them as they are
  text: {
    meter: "62% 124K/200K",
    headline: "Context 62% used (124,000 / 200,000) - 26% left until auto-compact",
    panel: "62% used · 124K/200K est. · compacts at 167K",
    autoCompact: "Auto-compact at 167K (26% left).",
    basis: "Estimated offline (tiktoken, calibrated).",
    labels: {
      system: "System prompt",
      tools: "Tools",
      messages: "Messages",
      summary: "Summary",
      attachments: "Restored files",
      unattributed: "Unattributed (the original client's system prompt and tools)",
      free: "Free",
    },
  },
  breakdown: {
    system: 3000,
    tools: 9000,
    messages: 98000,
    summary: 800,
    attachments: 500,
    unattributed: 12700,
    free: 76000,
  },
};

/** The host's {type:"session"} message for the fixture. */
export function sessionUpdate(overrides = {}) {
  return {
    type: "session",
    session: SESSION,
    sessions: [SESSION, OTHER_SESSION],
    messages: MESSAGES,
    usage: USAGE,
    hasApiKey: true,
    ...overrides,
  };
}

/**
 * A long view of `count` messages (a 1M-token session has about 3,700): prompts, replies of
 * varied length with code, tool calls and their results. Message i says "needle-i" once, so
 * a search can aim at one message anywhere in it.
 */
export function longView(count = 3700) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const turn = i % 4;
    const words = "alpha beta gamma delta epsilon zeta eta theta ".repeat(1 + ((i * 7) % 23));
    let content;
    if (turn === 0) content = [text(`Prompt ${i}: needle-${i} ${words}`)];
    else if (turn === 1)
      content = [text(`Looking. needle-${i}`), { type: "tool_use", id: `tu_${i}`, name: "Read", input: { path: `src/f${i}.py` } }];
    else if (turn === 2)
      content = [{ type: "tool_result", tool_use_id: `tu_${i - 1}`, content: `line one of f${i}\nneedle-${i}\n` + "x = 1\n".repeat(i % 9) }];
    else content = [text(`Reply ${i}: needle-${i} ${words}\n\n\`\`\`python\ndef f${i}():\n    return ${i}\n\`\`\`\n`)];
    out.push({
      id: `v${i}`,
      role: turn === 1 || turn === 3 ? "assistant" : "user",
      kind: "message",
      content,
      createdAt: "2026-12-01T09:30:00Z",
      tokens: 100 + ((i * 13) % 400),
    });
  }
  return out;
}

/** The session update the host posts for a long view: its last `page` messages, then the rest on request. */
export function longUpdate(messages, page = 120) {
  const offset = Math.max(0, messages.length - page);
  const base = sessionUpdate({ messages: messages.slice(offset), session: { ...SESSION, compactions: 0 } });
  return offset > 0 ? { ...base, offset, totalMessages: messages.length } : base;
}
