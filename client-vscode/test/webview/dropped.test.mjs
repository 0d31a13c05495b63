// The summary card lists what its compaction dropped (`Message.dropped`), folded with it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sessionUpdate } from "./fixture.mjs";
import { message, openView, toView, useBrowser } from "./view.mjs";

useBrowser();

test("a summary lists what its compaction dropped; one without the list shows none", async (t) => {
  const page = await openView(t);
  const text = (said) => [{ type: "text", text: said }];
  const base = { role: "user", createdAt: "2026-12-01T09:00:00Z", tokens: 10, pinned: false };
  const dropped = [
    "12 messages summarized",
    "4 tool results cleared",
    "not restored: file:///w/.env (excluded by restore.exclude)",
    '2 facts lost (the ledger had no room): "fix the parser"; /w/a.py',
  ];
  const messages = [
    { ...base, id: "s1", kind: "summary", boundaryId: "bnd_1", content: text("First summary") },
    { ...base, id: "u1", kind: "message", content: text("kept prompt") },
    { ...base, id: "s2", kind: "summary", boundaryId: "bnd_2", content: text("Second summary"), dropped },
  ];
  await toView(page, sessionUpdate({ messages }));
  await message(page, "s2").waitFor();
  await message(page, "s2").locator("details.baton-summary > summary").click();
  assert.deepEqual(await message(page, "s2").locator(".baton-dropped li").allTextContents(), dropped);
  assert.equal(await message(page, "s2").locator(".baton-dropped").getByText("What it dropped").count(), 1);
  assert.equal(await message(page, "s1").locator(".baton-dropped").count(), 0);
});
