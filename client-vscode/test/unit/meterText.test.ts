import assert from "node:assert/strict";
import { test } from "node:test";
import { formatTokens, meterBackground, meterText, meterTooltip } from "../../src/meterText";
import { usage } from "./fixtures";

test("tokens are shown in K and M with at most one decimal", () => {
  assert.equal(formatTokens(950), "950");
  assert.equal(formatTokens(1_500), "1.5K");
  assert.equal(formatTokens(124_300), "124K");
  assert.equal(formatTokens(200_000), "200K");
  assert.equal(formatTokens(1_000_000), "1M");
  assert.equal(formatTokens(-3), "0");
});

test("a figure that rounds up to the next unit is shown in it: 1M, not 1000K", () => {
  assert.equal(formatTokens(999_600), "1M");
  assert.equal(formatTokens(999_499), "999K");
  assert.equal(formatTokens(999_999_999), "1000M");
  assert.equal(formatTokens(999.6), "1K");
});

test("a figure rounds half up at every boundary, never truncates: 9,950 is 10K, not 9.9K", () => {
  assert.equal(formatTokens(999), "999");
  assert.equal(formatTokens(9_949), "9.9K");
  assert.equal(formatTokens(9_950), "10K");
  assert.equal(formatTokens(15_250), "15.3K");
  assert.equal(formatTokens(99_949), "99.9K");
  assert.equal(formatTokens(99_950), "100K");
  assert.equal(formatTokens(124_500), "125K");
  assert.equal(formatTokens(999_500), "1M");
  assert.equal(formatTokens(1_000_000), "1M");
  assert.equal(formatTokens(1_250_000), "1.3M");
  assert.equal(formatTokens(9_950_000), "10M");
});

test("the meter shows the server's figure", () => {
  assert.equal(meterText(usage()), "62% 124K/200K");
  const text = { ...usage().text, meter: "8% 15.2K/200K" };
  assert.equal(meterText(usage({ text })), "8% 15.2K/200K");
});

test("the background follows the usage state", () => {
  assert.equal(meterBackground(usage({ state: "ok" })), undefined);
  assert.equal(meterBackground(usage({ state: "warning" })), "statusBarItem.warningBackground");
  assert.equal(meterBackground(usage({ state: "error" })), "statusBarItem.errorBackground");
  assert.equal(meterBackground(usage({ state: "blocking" })), "statusBarItem.errorBackground");
});

test("the tooltip lists each category, the auto-compact point, the estimate and compactions", () => {
  const text = meterTooltip(usage(), "Refactor *parser*", 2);
  assert.match(text, /\| Messages \| 120K \|/);
  assert.match(text, /\| Free \| 75\.7K \|/);
  assert.match(text, /Auto-compact at 167K \(26% left\)\./);
  assert.match(text, /Estimated offline/);
  assert.match(text, /Compactions: 2/);
  assert.doesNotMatch(text, /Unattributed/);
  const imported = usage({ breakdown: { ...usage().breakdown, unattributed: 4_000 } });
  assert.match(meterTooltip(imported, "t", 0), /\| Unattributed \(the original client's system prompt and tools\) \| 4K \|/);
  assert.match(text, /Refactor \\\*parser\\\*/);
});

test("the tooltip's sentences are the server's: auto-compact, and where the figure comes from", () => {
  const worded = (text: Partial<ReturnType<typeof usage>["text"]>) => usage({ text: { ...usage().text, ...text } });
  assert.match(meterTooltip(worded({ autoCompact: "Auto-compact is off." }), "t", 0), /Auto-compact is off\./);
  const compacted = worded({
    basis: "Estimated since the conversation changed (tiktoken, calibrated); the next reply's usage confirms it.",
  });
  assert.match(meterTooltip(compacted, "t", 0), /Estimated since the conversation changed/);
  assert.doesNotMatch(meterTooltip(compacted, "t", 0), /Exact/);
  assert.match(meterTooltip(worded({ labels: { ...usage().text.labels, messages: "Turns" } }), "t", 0), /\| Turns \|/);
  assert.match(meterTooltip(usage({ warnings: ["calibration is stale"] }), "t", 0), /\$\(warning\) calibration is stale/);
});

test("the tooltip past the window gives the real share, not the 100 percentUsed stops at", () => {
  const over = usage({ usedTokens: 250_000, percentUsed: 100, state: "blocking" });
  assert.match(meterTooltip(over, "t", 0), /250K of 200K tokens \(125%\)/);
  assert.match(meterTooltip(usage(), "t", 0), /124K of 200K tokens \(62%\)/);
});

test("the tooltip's figure is marked as the meter marks an estimate, with the ~ first", () => {
  assert.match(meterTooltip(usage({ estimated: true }), "t", 0), /\n~124K of 200K tokens \(62%\)/);
  const anchored = usage({ estimated: false, basis: "api" });
  assert.match(meterTooltip(anchored, "t", 0), /\n124K of 200K tokens \(62%\)/);
});
