import assert from "node:assert/strict";
import { test } from "node:test";
import { compactSummaryLine, previewReport, undoneLine } from "../../src/compactReport";
import type { CompactResult } from "../../src/protocol";
import { message, usage } from "./fixtures";

const result = {
  boundaryId: "b1",
  direction: "up_to",
  summary: null,
  summarizedMessageIds: ["m1", "m2"],
  keptMessageIds: ["m3"],
  restoredFiles: [{ uri: "file:///w/a.py", tokens: 1500, truncated: true }],
  preTokens: 52_000,
  postTokens: 9_400,
  trigger: "manual",
  summarizer: "extractive",
} as CompactResult;

test("the notification gives before and after tokens, messages summarized and files restored", () => {
  assert.equal(
    compactSummaryLine(result),
    "Baton: compacted up to the message: 52K -> 9.4K tokens (estimated), 2 messages summarized, 1 file restored.",
  );
});

test("the preview lists what is summarized, kept and restored with token figures", () => {
  const view = [
    message("m1", "user", "Fix the | parser", { tokens: 30_000 }),
    message("m2", "assistant", "Done.", { tokens: 12_000 }),
    message("m3", "user", "Now the tests", { tokens: 800 }),
  ];
  const text = previewReport(result, "Parser work", view);
  assert.match(text, /^# Compaction preview: Parser work/);
  assert.match(text, /## Summarized \(2 messages, 42K tokens\)/);
  assert.match(text, /\| `m1` \| user \| 30K \| Fix the \\\| parser \|/);
  assert.match(text, /## Kept verbatim \(1 message, 800 tokens\)/);
  assert.match(text, /- file:\/\/\/w\/a\.py: 1\.5K tokens \(truncated\)/);
  assert.match(text, /52K tokens; after compaction: 9\.4K tokens \(estimated until the next reply's usage\)/);
  assert.match(text, /dry run/);
});

test("the undo's notification marks an estimated figure as the meter does, with the ~ first", () => {
  // an undo that leaves a later reply's usage stale: the figure is estimated until a reply
  const estimated = usage({ usedTokens: 130_000, percentUsed: 65, estimated: true, basis: "compacted" });
  assert.equal(undoneLine(estimated), "Baton: undone, the messages are back in the view; the context is ~65% full.");
  const anchored = usage({ usedTokens: 130_000, percentUsed: 65, estimated: false, basis: "api" });
  assert.equal(undoneLine(anchored), "Baton: undone, the messages are back in the view; the context is 65% full.");
});
