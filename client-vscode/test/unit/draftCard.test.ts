import assert from "node:assert/strict";
import { test } from "node:test";
import { afterCompactionLine, draftCardHtml, goneDraftLine, isCardAction, oldDataDirLine, previewFirstSetting } from "../../src/draftCard";
import type { CompactDraft, CompactResult, Dropped } from "../../src/protocol";

const dropped: Dropped = {
  messagesSummarized: 12,
  toolResultsCleared: 4,
  filesNotRestored: [{ uri: "file:///w/.env", reason: "excluded by restore.exclude" }],
  notInSummary: { prompts: ["fix the <parser>"], paths: ["/w/a.py"], errors: [], count: 3 },
  lost: { prompts: [], paths: [], errors: [], count: 0 },
  text: "Summarized 12 messages, cleared 4 tool results; 1 file not restored (excluded by restore.exclude); 3 facts only in the ledger",
  lines: ["12 messages summarized", '3 facts only in the fact ledger: "fix the <parser>"; /w/a.py and 1 more'],
};

const draft = {
  draftId: "draft_1",
  sessionId: "s_1",
  direction: "up_to",
  summary: "## Summary",
  summarizer: "anthropic",
  summarizedMessageIds: ["m1", "m2"],
  keptMessageIds: ["m3"],
  pinnedMessageIds: [],
  restoredFiles: [],
  skippedFiles: [],
  preTokens: 52_000,
  postTokens: 9_400,
  dropped,
  cost: { text: "The next request sends 9,400 tokens <instead> of 52,000." },
  warnings: ["the summary was edited before it was applied"],
} as unknown as CompactDraft;

test("the notification after a compaction ends with what it dropped", () => {
  const result = { ...draft, boundaryId: "b", summary: "x", trigger: "manual", dryRun: false, restoredFiles: [] } as unknown as CompactResult;
  assert.match(afterCompactionLine(result), /9\.4K tokens \(estimated\), 2 messages summarized\. Summarized 12 messages.*only in the ledger\.$/);
});

test("the notification after a compaction of a conversation not on show names it", () => {
  const result = { ...draft, boundaryId: "b", summary: "x", trigger: "manual", dryRun: false, restoredFiles: [] } as unknown as CompactResult;
  const line = afterCompactionLine(result, "Refactor the token meter");
  assert.match(line, /^Baton: compacted “Refactor the token meter”, up to the message: 52K -> 9\.4K tokens/);
  assert.match(line, /only in the ledger\.$/);
  assert.match(afterCompactionLine(result), /^Baton: compacted up to the message: /);
});

test("the card escapes what it shows, carries the previewed figure and its three buttons", () => {
  const html = draftCardHtml(draft, "NONCE", { edited: true, measured: false }, "vscode-resource:");
  assert.ok(html.includes('data-post-tokens="9400"'));
  // the figure after it is an estimate until the next reply: "~" first, as the meter marks it
  assert.ok(html.includes('52K → <b class="baton-draft-post">~9.4K</b> tokens'), html);
  assert.ok(html.includes("&lt;instead&gt;") && !html.includes("<instead>"));
  assert.ok(html.includes("<li>12 messages summarized</li>") && html.includes("fix the &lt;parser&gt;"));
  for (const id of ["apply", "regenerate", "discard"]) assert.ok(html.includes(`id="${id}"`), id);
  assert.ok(html.includes("script-src 'nonce-NONCE'") && html.includes('<script nonce="NONCE">'));
  assert.ok(html.includes("The summary has been edited") && html.includes("measuring it again"));
  assert.ok(html.includes('data-measured="false"'));
  assert.ok(isCardAction("apply") && !isCardAction("run"));
});

test("a draft the server no longer has is said in words, never by its code or ids", () => {
  const line = goneDraftLine(false);
  assert.match(line, /no longer there: another preview of the session replaced it, or it was applied or discarded elsewhere/);
  assert.match(line, /Nothing was compacted/);
  assert.doesNotMatch(line, /draft_not_found|editor/);
  assert.match(goneDraftLine(true), /Your edited summary stays in its editor/);
});

test("previewBeforeCompact asks for a draft first only when it is true, as the server reads it", () => {
  // "no" in settings.json was truthy: the question was asked while the server warned and kept false
  for (const value of ["no", "false", "yes", "true", 1, 0, null, undefined, {}]) {
    assert.equal(previewFirstSetting(value), false, JSON.stringify(value));
  }
  assert.equal(previewFirstSetting(true), true);
  assert.equal(previewFirstSetting(false), false);
});

test("a data dir change says what of the folder before closed, and that its draft compacted nothing", () => {
  assert.equal(oldDataDirLine(0, undefined), undefined, "nothing open: nothing said");
  assert.equal(
    oldDataDirLine(2, { title: "March export", edited: false }),
    "Baton: baton.dataDir changed, so the compaction draft of “March export” and 2 conversation documents of the data dir used before closed: " +
      "the server no longer reads that folder. Nothing was compacted; the draft stays in that folder, to preview again once the setting is back.",
  );
  assert.equal(
    oldDataDirLine(1, undefined),
    "Baton: baton.dataDir changed, so 1 conversation document of the data dir used before closed: the server no longer reads that folder.",
  );
  assert.match(oldDataDirLine(0, { title: "t", edited: true }) ?? "", /Nothing was compacted; .* Your edited summary stays in its editor, to copy from\.$/);
});
