import assert from "node:assert/strict";
import { test } from "node:test";
import { ago, draftLine, menuMessage, menuSelection, menuSession, messageText, mostRecent, selectedSpan, sessionPickRows } from "../../src/chatLogic";
import { message, session, usage } from "./fixtures";

test("the view opens the most recently updated session", () => {
  const sessions = [session("a", "2026-11-02T10:00:00Z"), session("b", "2026-11-03T09:00:00+00:00"), session("c", "2026-11-01T23:00:00Z")];
  assert.equal(mostRecent(sessions)?.sessionId, "b");
  assert.equal(mostRecent([]), undefined);
});

test("times with offsets compare as instants, not as strings", () => {
  const sessions = [session("a", "2026-11-03T10:00:00+02:00"), session("b", "2026-11-03T09:00:00Z")];
  assert.equal(mostRecent(sessions)?.sessionId, "b");
});

test("picker rows are newest first and mark the current session", () => {
  const now = new Date("2026-11-03T12:00:00Z");
  const rows = sessionPickRows(
    [session("old", "2026-11-01T12:00:00Z", { compactions: 2 }), session("new", "2026-11-03T11:55:00Z")],
    "old",
    now,
  );
  assert.deepEqual(rows.map((r) => r.sessionId), ["new", "old"]);
  assert.equal(rows[0]?.description, "5 min ago");
  assert.equal(rows[1]?.label, "$(check) Chat old");
  assert.equal(rows[1]?.description, "2 days ago");
  assert.match(rows[1]?.detail ?? "", /2 compactions/);
});

test("ago falls back to the date after a month", () => {
  assert.equal(ago("2026-01-05T00:00:00Z", new Date("2026-11-03T00:00:00Z")), "2026-01-05");
  assert.equal(ago("2026-11-03T00:00:10Z", new Date("2026-11-03T00:00:30Z")), "just now");
});

test("the selected span runs from the first to the last selected message in view order", () => {
  const view = ["m1", "m2", "m3", "m4"].map((id) => message(id, "user", id));
  assert.deepEqual(selectedSpan(["m3", "m1"], view), { first: "m1", last: "m3" });
  assert.equal(selectedSpan(["m2"], view), undefined);
  assert.equal(selectedSpan(["m2", "gone"], view), undefined);
});

test("a copied message keeps its text and names its tool calls", () => {
  const m = message("m1", "assistant", "Reading it.", {
    content: [
      { type: "text", text: "Reading it." },
      { type: "tool_use", id: "t1", name: "Read", input: { path: "a.py" } },
    ] as never,
  });
  assert.equal(messageText(m), 'Reading it.\n\n[tool Read] {"path":"a.py"}');
  const result = message("m2", "user", "", {
    content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "print(1)" }] }] as never,
  });
  assert.equal(messageText(result), "print(1)");
});

test("the draft's line past the window gives the real share, not the 100 percentUsed stops at", () => {
  const draft = { tokens: 130_000, usedBefore: 120_000, verdict: "tooLarge" as const, message: "It cannot fit." };
  const line = draftLine({ ...usage({ usedTokens: 250_000, percentUsed: 100, state: "blocking" }), draft });
  assert.equal(line.text, "After sending: ~250K / 200K (125%)");
  assert.equal(draftLine({ ...usage(), draft: { ...draft, verdict: "fits" } }).text, "After sending: ~124K / 200K (62%)");
});

test("the draft's line marks its figure as the meter marks an estimate, with the ~ first", () => {
  const draft = { tokens: 300, usedBefore: 124_000, verdict: "fits" as const };
  // the server says every draft's figure is estimated, over the API's own figure too
  const drafted = usage({ estimated: true, basis: "exact", text: { ...usage().text, meter: "~62% 124K/200K" } });
  assert.equal(draftLine({ ...drafted, draft }).text, "After sending: ~124K / 200K (62%)");
  assert.equal(draftLine({ ...usage({ estimated: false, basis: "api" }), draft }).text, "After sending: 124K / 200K (62%)");
});

test("a message's menu acts on the session its context names (the one on show when it opened), else on the current one", () => {
  // VS Code hands the command the menu's context: the message's, merged with the feed's
  const ctx = { webviewSection: "message", messageId: "m2", preventDefaultContextMenuItems: true, pinned: false, sessionId: "s_shown" };
  assert.equal(menuSession(ctx), "s_shown");
  assert.equal(menuSession({ messageId: "m2" }), undefined);
  assert.equal(menuSession({ messageId: "m2", sessionId: null }), undefined, "a welcome view names none");
  assert.equal(menuSession({ messageId: "m2", sessionId: "" }), undefined);
  assert.equal(menuSession(undefined), undefined, "run from the palette: no context");
});

test("Compact Selected acts on the selection its menu's context names (the one on show when it opened), else on the host's", () => {
  const ctx = { webviewSection: "message", messageId: "m2", sessionId: "s_shown", selectedFirst: "m1", selectedLast: "m4" };
  assert.deepEqual(menuSelection(ctx), ["m1", "m4"]);
  const view = ["m0", "m1", "m2", "m3", "m4", "m5"].map((id) => message(id, "user", id));
  assert.deepEqual(selectedSpan(menuSelection(ctx)!, view), { first: "m1", last: "m4" });
  assert.equal(menuSelection({ messageId: "m2", sessionId: "s_shown" }), undefined, "fewer than two selected");
  assert.equal(menuSelection({ selectedFirst: "m1" }), undefined);
  assert.equal(menuSelection(undefined), undefined);
});

test("Copy Message on a message a compaction replaced copies that message, read from the transcript, not the summary", async () => {
  const view = [message("m_summary", "user", "the summary", { kind: "summary", boundaryId: "bnd_1" }), message("u2", "user", "next")];
  const transcript = [message("o1", "user", "first words"), message("o2", "assistant", "the reply I want")];
  const reads: [string, number][] = [];
  const replaced = async (boundaryId: string, offset: number) => {
    reads.push([boundaryId, offset]);
    return boundaryId === "bnd_1" ? transcript.slice(offset, offset + 1) : [];
  };
  const named = { webviewSection: "replacedMessage", messageId: "o2", boundaryId: "bnd_1", replacedIndex: 1 };
  assert.equal((await menuMessage(named, view, replaced))?.id, "o2");
  assert.deepEqual(reads, [["bnd_1", 1]]);
  // a view's message is the view's; one the transcript no longer has where named is none
  assert.equal((await menuMessage({ messageId: "u2" }, view, replaced))?.id, "u2");
  assert.equal(await menuMessage({ ...named, replacedIndex: 0 }, view, replaced), undefined);
});
