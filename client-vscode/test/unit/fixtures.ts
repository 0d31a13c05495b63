// Wire objects for the unit tests, in the shapes the server sends.
import type { Message, Session, Usage } from "../../src/protocol";

export function usage(overrides: Partial<Usage> = {}): Usage {
  return {
    sessionId: "s1",
    model: "claude-sonnet-4-5",
    contextWindow: 200_000,
    effectiveWindow: 180_000,
    autoCompactThreshold: 167_000,
    warningThreshold: 147_000,
    errorThreshold: 160_000,
    blockingLimit: 177_000,
    usedTokens: 124_300,
    percentUsed: 62.15,
    percentLeft: 25.6,
    state: "ok",
    estimated: true,
    autoCompactEnabled: true,
    autoCompactPaused: false,
    breakdown: { system: 1200, tools: 0, messages: 120_100, summary: 3000, attachments: 0, unattributed: 0, free: 75_700 },
    estimatorExact: true,
    warnings: [],
    basis: "estimate",
    text: {
      meter: "62% 124K/200K",
      headline: "Context 62% used (124,300 / 200,000) - 26% left until auto-compact",
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
    ...overrides,
  };
}

export function session(sessionId: string, updatedAt: string, overrides: Partial<Session> = {}): Session {
  return {
    sessionId,
    title: `Chat ${sessionId}`,
    model: "claude-sonnet-4-5",
    createdAt: "2026-11-01T08:00:00Z",
    updatedAt,
    uri: `baton:/sessions/${sessionId}.md`,
    compactions: 0,
    readOnly: false,
    ...overrides,
  };
}

export function message(id: string, role: "user" | "assistant", text: string, overrides: Partial<Message> = {}): Message {
  return {
    id,
    role,
    kind: "message",
    content: [{ type: "text", text }],
    createdAt: "2026-11-01T08:00:00Z",
    tokens: 100,
    pinned: false,
    ...overrides,
  };
}
