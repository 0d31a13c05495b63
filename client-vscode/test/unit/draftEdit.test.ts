// An open compaction draft against its editor's text: the card's state, the edit measured
// again once typing pauses, what Apply commits, and the draft a Regenerate or Discard names.
import assert from "node:assert/strict";
import { test } from "node:test";
import { DraftEdit, EDITED_WARNING } from "../../src/draftEdit";
import type { DraftOptions } from "../../src/draftRpc";
import type { CompactDraft } from "../../src/protocol";

function draft(draftId: string, summary: string, warnings: string[] = []): CompactDraft {
  return {
    draftId,
    sessionId: "s_1",
    direction: "all",
    summary,
    summarizer: "extractive",
    summarizedMessageIds: ["m1", "m2"],
    keptMessageIds: [],
    pinnedMessageIds: [],
    restoredFiles: [],
    skippedFiles: [],
    preTokens: 52_000,
    postTokens: 9_000 + summary.length,
    cost: { text: "the cost" } as CompactDraft["cost"],
    warnings,
    createdAt: "2026-11-01T08:00:00Z",
  };
}

/** A server whose measures answer a new draft (a new id) once `gate` opens, and an editor. */
class Fake {
  text = "## Summary";
  previews: [string, DraftOptions][] = [];
  gate: Promise<void> | undefined;
  failure: unknown;
  changes = 0;
  logs: string[] = [];
  private made = 1;

  edit(measureAfterMs = 0): DraftEdit {
    return new DraftEdit("s_1", draft("d1", "## Summary"), {
      drafts: {
        preview: async (sessionId: string, options: DraftOptions) => {
          this.previews.push([sessionId, options]);
          if (this.gate) await this.gate;
          if (this.failure !== undefined) throw this.failure;
          return draft(`d${++this.made}`, options.summary ?? "## Summary", [EDITED_WARNING]);
        },
        discard: async () => ({}),
      },
      text: () => this.text,
      changed: () => void this.changes++,
      log: (message) => void this.logs.push(message),
    }, measureAfterMs);
  }
}

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function held(fake: Fake): () => void {
  let open!: () => void;
  fake.gate = new Promise((resolve) => (open = resolve));
  return () => {
    fake.gate = undefined;
    open();
  };
}

test("the draft as written is no edit: nothing is measured and Apply commits it as written", async () => {
  const fake = new Fake();
  const edit = fake.edit();
  assert.deepEqual(edit.state, { edited: false, measured: true });
  fake.text = "## Summary\n\n"; // blank lines at the end are no edit
  edit.textChanged();
  await tick(5);
  assert.deepEqual(fake.previews, []);
  assert.deepEqual(await edit.commit(), { draftId: "d1", summary: undefined });
});

test("an edit is said at once and measured once typing pauses; the card then shows its figures", async () => {
  const fake = new Fake();
  const edit = fake.edit(20);
  fake.text = "## Shorter";
  edit.textChanged();
  assert.deepEqual(edit.state, { edited: true, measured: false });
  assert.equal(fake.changes, 1, "the card is drawn again at once");
  fake.text = "## Shorter still";
  edit.textChanged();
  while (fake.previews.length === 0 || edit.draft.draftId === "d1") await tick(5);
  assert.deepEqual(fake.previews, [["s_1", { draftId: "d1", summary: "## Shorter still" }]], "one measure, of the text at the pause");
  assert.equal(edit.draft.summary, "## Shorter still");
  assert.deepEqual(edit.state, { edited: true, measured: true });
  // the measured draft is the edit: Apply commits it as it is, under its new id
  assert.deepEqual(await edit.commit(), { draftId: "d2", summary: undefined });
});

test("Apply right after typing measures the edit first and commits the draft it became", async () => {
  const fake = new Fake();
  const edit = fake.edit(60_000);
  fake.text = "## Mine";
  edit.textChanged();
  assert.deepEqual(await edit.commit(), { draftId: "d2", summary: undefined });
  assert.deepEqual(fake.previews, [["s_1", { draftId: "d1", summary: "## Mine" }]]);
});

test("a measure that fails leaves the draft; Apply then commits the text as edited", async () => {
  const fake = new Fake();
  const edit = fake.edit(60_000);
  fake.failure = Object.assign(new Error("an edited summary is too long\nmore"), { data: { code: "invalid_params" } });
  fake.text = "## Too long";
  edit.textChanged();
  assert.deepEqual(await edit.commit(), { draftId: "d1", summary: "## Too long" });
  assert.deepEqual(fake.logs, ["measuring the edited summary failed: an edited summary is too long"]);
  assert.deepEqual(edit.state, { edited: true, measured: false });
});

test("measures in a row each name the draft the one before answered", async () => {
  const fake = new Fake();
  const edit = fake.edit(60_000);
  const open = held(fake);
  fake.text = "## One";
  edit.textChanged();
  const first = edit.commit();
  fake.text = "## Two";
  const second = edit.commit();
  open();
  await first;
  assert.deepEqual(await second, { draftId: "d3", summary: undefined });
  assert.deepEqual(fake.previews.map(([, o]) => o), [{ draftId: "d1", summary: "## One" }, { draftId: "d2", summary: "## Two" }]);
});

test("a Regenerate or a Discard names the draft a measure under way is replacing it with", async () => {
  // the server keeps one draft per session: the id of the draft a measure replaced is unknown
  const fake = new Fake();
  const edit = fake.edit(0);
  const open = held(fake);
  fake.text = "## Edited";
  edit.textChanged();
  while (fake.previews.length === 0) await tick(1); // the measure is under way
  const settled = edit.settled();
  open();
  assert.equal((await settled).draftId, "d2");
});

test("a Regenerate or a Discard starts no measure of a pause still to come", async () => {
  const fake = new Fake();
  const edit = fake.edit(10);
  fake.text = "## Edited";
  edit.textChanged();
  assert.equal((await edit.settled()).draftId, "d1");
  await tick(30);
  assert.deepEqual(fake.previews, []);
});

test("once the draft goes, a measure that answers late changes nothing and no more start", async () => {
  const fake = new Fake();
  const edit = fake.edit(0);
  const open = held(fake);
  fake.text = "## Edited";
  edit.textChanged();
  while (fake.previews.length === 0) await tick(1);
  edit.close();
  const changes = fake.changes;
  open();
  await tick(5);
  assert.equal(edit.draft.draftId, "d1");
  assert.equal(fake.changes, changes, "the card is not drawn for a draft that went");
  edit.textChanged();
  await tick(5);
  assert.equal(fake.previews.length, 1);
});

test("typing that changes nothing the card says does not draw it again", async () => {
  // drawing the card again loads its page again: once per keystroke while typing is too often
  const fake = new Fake();
  const edit = fake.edit(60_000);
  for (const text of ["## S", "## Sh", "## Sho"]) {
    fake.text = text;
    edit.textChanged();
  }
  assert.equal(fake.changes, 1, "edited: drawn once");
  fake.text = "## Summary";
  edit.textChanged();
  assert.equal(fake.changes, 2, "back to the draft as written: drawn again");
  assert.deepEqual(edit.state, { edited: false, measured: true });
  fake.text = "## Shorter";
  await edit.commit();
  assert.equal(fake.changes, 3, "measured: drawn with the new figures");
  assert.deepEqual(edit.state, { edited: true, measured: true });
});

test("Discard drops the draft; one the server no longer has (replaced elsewhere) is as good as discarded", async () => {
  const fake = new Fake();
  const discarded: string[] = [];
  let gone = false;
  const edit = new DraftEdit("s_1", draft("d1", "## Summary"), {
    drafts: {
      preview: async () => draft("d9", "x"),
      discard: async (sessionId: string, draftId: string) => {
        if (gone) throw Object.assign(new Error(`session ${sessionId} has no draft ${draftId}`), { data: { code: "draft_not_found" } });
        discarded.push(draftId);
        return {};
      },
    },
    text: () => fake.text,
    changed: () => undefined,
    log: () => undefined,
  });
  await edit.discard();
  assert.deepEqual(discarded, ["d1"]);
  gone = true; // another preview of the session replaced it
  await edit.discard();
  // any other failure is said
  const failing = new DraftEdit("s_1", draft("d1", "## Summary"), {
    drafts: { preview: async () => draft("d9", "x"), discard: async () => Promise.reject(new Error("disk full")) },
    text: () => fake.text,
    changed: () => undefined,
    log: () => undefined,
  });
  await assert.rejects(failing.discard(), /disk full/);
});
