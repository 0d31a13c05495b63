import assert from "node:assert/strict";
import { test } from "node:test";
import { logServerLine, ServerLogParser, settingNamed, type LevelSink, type LogLevel } from "../../src/serverLog";

function sink(): { lines: [LogLevel, string][]; sink: LevelSink } {
  const lines: [LogLevel, string][] = [];
  const at = (level: LogLevel) => (text: string) => lines.push([level, text]);
  return { lines, sink: { trace: at("trace"), debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") } };
}

test("each server line keeps its own level; INFO is no error", () => {
  const parser = new ServerLogParser();
  const { lines, sink: out } = sink();
  for (const raw of [
    "2026-12-01 10:00:00,123 INFO baton.lsp.server: serving on stdio",
    "2026-12-01 10:00:01,004 DEBUG baton.core.usage: estimator ready",
    "2026-12-01 10:00:02,500 WARNING baton.lsp.server: unknown setting baton.foo",
    "2026-12-01 10:00:03,000 ERROR baton.lsp.server: server error (x): boom",
    "Traceback (most recent call last):",
    '  File "x.py", line 1, in <module>',
    "2026-12-01 10:00:04,000 CRITICAL baton: out of memory",
    "2026-12-01 10:00:05,000 INFO baton.core.compaction: auto-compacting session s_1",
  ]) {
    logServerLine(parser, out, raw);
  }
  assert.deepEqual(lines, [
    ["info", "baton.lsp.server: serving on stdio"],
    ["debug", "baton.core.usage: estimator ready"],
    ["warn", "baton.lsp.server: unknown setting baton.foo"],
    ["error", "baton.lsp.server: server error (x): boom"],
    ["error", "Traceback (most recent call last):"],
    ["error", '  File "x.py", line 1, in <module>'],
    ["error", "baton: out of memory"],
    ["info", "baton.core.compaction: auto-compacting session s_1"],
  ]);
});

test("what comes before the first prefixed line (Python failing to start) is an error", () => {
  const parser = new ServerLogParser();
  assert.deepEqual(parser.line("baton: error: unrecognized arguments: --bogus"), {
    level: "error",
    text: "baton: error: unrecognized arguments: --bogus",
  });
  assert.equal(parser.line("2026-12-01 10:00:00,123 INFO baton: ok").level, "info");
  assert.equal(parser.line("  a continuation").level, "info", "a continuation keeps the level of its line");
});

test("a warning the server shows about a bad setting names the setting to open", () => {
  const one = "Baton: baton.contextWindow: invalid value 'huge' (Input should be a valid integer); using the default";
  assert.equal(settingNamed(one), "baton.contextWindow");
  const two = "Baton: data dir /x is read-only\nbaton.autoCompact.enabled: invalid value 'maybe' (a switch takes true or false); using the default";
  assert.equal(settingNamed(two), "baton.autoCompact.enabled");
  assert.equal(settingNamed("Baton: data dir /x is read-only (Permission denied)"), undefined);
});
