// End to end in a real VS Code (code-server, headless Chromium): a reply of 300,000
// characters in the chat panel. The session (written into the data dir before VS Code
// starts) holds a few short messages, then one assistant reply quoting a log of numbered
// lines, then a short exchange. The panel draws the reply's first part with a line saying
// how much shows; Show more draws more; Copy all copies the whole reply; Open in editor
// opens the session document with the cursor on the reply's heading, near the top of the
// editor (VS Code keeps room for its sticky lines above it), and with sticky scroll off at
// the very top.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import { changeSettings, frameWith, pollUntil, resultsDir, startVsCode, steps, stopVsCode } from "./codeServer.mjs";

const WAIT = 30_000;
const SESSION_ID = "e2e-long-reply";
const LONG_ID = "msg_e2e_long_reply";
/** The most of the reply the panel may draw at first: its first part (100,000 characters)
 * and room besides; drawn whole it would be twice that. */
const DRAWN_AT_MOST = 150_000;

/** A log of numbered lines ("log line 000123 ..."), so that a line says where it is. */
function logReply(chars) {
  const lines = [];
  let size = 0;
  for (let n = 1; size < chars; n++) {
    const at = new Date(Date.UTC(2026, 2, 2, 9, 0, n)).toISOString().slice(0, 19).replace("T", " ");
    const line = `log line ${String(n).padStart(6, "0")} ${at} INFO worker[${n % 7}] request id=${n} status=200`;
    lines.push(line);
    size += line.length + 1;
  }
  return "Here is the worker's log of March 2:\n\n```\n" + lines.join("\n") + "\n```";
}

const REPLY = logReply(300_000);
const LAST_LINE = REPLY.split("\n").at(-2); // the log's last line, before the closing fence

const say = (id, role, text) => ({
  id,
  role,
  kind: "message",
  content: [{ type: "text", text }],
  createdAt: "2026-03-02T09:00:00.000Z",
  tokens: Math.max(1, Math.round(text.length / 4)),
  pinned: false,
});

const MESSAGES = [
  say("msg_e2e_1", "user", "Is the worker pool healthy this morning?"),
  say("msg_e2e_2", "assistant", "Yes: every worker answered its last health check."),
  say("msg_e2e_3", "user", "Show me the whole log of March 2."),
  say(LONG_ID, "assistant", REPLY),
  say("msg_e2e_5", "user", "Thanks, that is all I needed."),
  say("msg_e2e_6", "assistant", "Glad it helped."),
];

/** The session as a transcript in the data dir, as Baton's store lays it out: a header
 * line, then one line per message. */
function writeSession(dataDir) {
  const folder = join(dataDir, "sessions");
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const header = {
    type: "session",
    format: 1,
    sessionId: SESSION_ID,
    title: "A reply of 300,000 characters",
    model: "claude-sonnet-4-5",
    createdAt: "2026-03-02T09:00:00.000Z",
  };
  const lines = [header, ...MESSAGES.map((message) => ({ type: "message", message }))];
  writeFileSync(join(folder, `${SESSION_ID}.jsonl`), lines.map((l) => JSON.stringify(l)).join("\n") + "\n", { mode: 0o600 });
}

/**
 * The 1-based line of message `index`'s heading in the session document (PROTOCOL.md,
 * "Session documents"): a header of three lines, then each message's section, a blank line,
 * its heading, a blank line and its text's lines.
 */
function headingLine(index) {
  let line = 3; // the header's lines
  for (const message of MESSAGES.slice(0, index)) line += 3 + message.content[0].text.split("\n").length;
  return line + 2; // the blank line before the heading, then the heading
}

let fx;
const run = steps(() => fx?.page);
const step = run.step;

const until = (what, probe, ms = WAIT) => pollUntil(what, probe, ms);

async function shot(name) {
  await fx.page.screenshot({ path: join(resultsDir, `${name}.png`) });
}

/** The chat webview's frame, found by its input box. */
const chatFrame = () => frameWith(fx.page, "#baton-input", "the chat webview");

/** The long reply's article in the panel, and its clip line. */
async function longReply() {
  const frame = await chatFrame();
  const article = frame.locator(`article[data-message-id="${LONG_ID}"]`);
  return { frame, article, clip: article.locator(".baton-clip") };
}

/** The clip line's figures: "Showing the first N of M characters." */
async function clipFigures(clip) {
  const text = (await clip.locator(".baton-clip-note").textContent()) ?? "";
  const m = /^Showing the first ([\d,]+) of ([\d,]+) characters\.$/.exec(text.trim());
  assert.ok(m, `clip line ${JSON.stringify(text)}`);
  const num = (s) => Number(s.replaceAll(",", ""));
  return { shown: num(m[1]), total: num(m[2]) };
}

const drawnLength = (article) => article.evaluate((el) => (el.textContent ?? "").length);

/**
 * The active editor's lines in view, top first: each one's number (the gutter's), text and
 * distance in pixels from the top of the editor; and how far down the sticky lines reach
 * (VS Code's sticky scroll draws the headings a line is under over the editor's first rows).
 * Monaco draws the lines in view and a few around them; a line is in view when its top is
 * at or below the editor's.
 */
async function linesInView() {
  const editor = fx.page.locator(".editor-group-container.active .editor-instance .monaco-editor").first();
  return editor.evaluate((el) => {
    const area = el.querySelector(".overflow-guard")?.getBoundingClientRect();
    if (!area) return undefined;
    const placed = (els) =>
      [...els].map((e) => ({ e, top: e.getBoundingClientRect().top - area.top })).filter((r) => r.top >= -1 && r.top < area.height);
    const numbers = placed(el.querySelectorAll(".margin-view-overlays .line-numbers"));
    const lines = placed(el.querySelectorAll(".lines-content .view-lines .view-line"))
      .sort((a, b) => a.top - b.top)
      .map((r) => ({
        number: Number(numbers.find((n) => Math.abs(n.top - r.top) < 2)?.e.textContent?.trim()),
        text: (r.e.textContent ?? "").replace(/\u00a0/g, " "),
        top: Math.round(r.top),
      }));
    const sticky = el.querySelector(".sticky-widget");
    const stickyBottom = sticky && sticky.getBoundingClientRect().height > 0 ? Math.round(sticky.getBoundingClientRect().bottom - area.top) : 0;
    return { lines, stickyBottom };
  });
}

/** Waits until the active editor shows line `number` with `probe(view, line)` true. */
function editorShows(what, number, probe) {
  return until(what, async () => {
    const view = await linesInView();
    const line = view?.lines.find((l) => l.number === number);
    if (!line || !probe(view, line)) throw new Error(`in view: ${JSON.stringify(view?.lines.slice(0, 8))}, sticky lines to ${view?.stickyBottom} px`);
    return { view, line };
  });
}

describe("A reply of 300,000 characters in VS Code (code-server)", { concurrency: false }, () => {
  before(async () => {
    fx = await startVsCode({ example: false, seed: writeSession }); // the only session: the panel opens on it
    // the webview's Copy all writes the clipboard, which the test reads back
    await fx.page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  });

  after(async () => {
    if (fx) {
      if (run.failed) await shot("e2e-longtext-failure").catch(() => {});
      await stopVsCode(fx, run.failed);
    }
  });

  step("the reply is drawn in part, with a line saying how much of it shows", async () => {
    assert.ok(REPLY.length >= 300_000 && REPLY.length < 301_000, `${REPLY.length} characters`);
    await fx.page.locator('.part.activitybar .action-item [aria-label^="Baton"], .part.activitybar .action-item[aria-label^="Baton"]').first().click({ timeout: 60_000 });
    await fx.page.mouse.move(700, 450); // off the icon: its tooltip would cover the panel
    const { frame, article, clip } = await longReply();
    await frame.locator(`article[data-message-id="${MESSAGES.at(-1).id}"]`).waitFor({ timeout: 60_000 });
    await clip.waitFor({ timeout: WAIT });
    const figures = await clipFigures(clip);
    assert.equal(figures.total, REPLY.length);
    assert.ok(figures.shown > 50_000 && figures.shown <= 100_000, JSON.stringify(figures));
    const drawn = await drawnLength(article);
    assert.ok(drawn < DRAWN_AT_MOST, `${drawn} characters drawn`);
    assert.equal(await article.evaluate((el, last) => el.textContent.includes(last), LAST_LINE), false, "the log's end is not drawn");
    await clip.scrollIntoViewIfNeeded();
    await shot("e2e-longtext-1-drawn-in-part");
  });

  step("Show more draws the next part", async () => {
    const { article, clip } = await longReply();
    const before = await clipFigures(clip);
    const drawnBefore = await drawnLength(article);
    await clip.getByRole("button", { name: "Show more" }).click();
    const after = await until("the clip line to show more", async () => {
      const now = await clipFigures(clip);
      return now.shown > before.shown ? now : undefined;
    });
    assert.equal(after.total, REPLY.length);
    assert.ok(after.shown > before.shown + 50_000 && after.shown <= before.shown + 100_000, `${before.shown} -> ${after.shown}`);
    const drawnAfter = await drawnLength(article);
    assert.ok(drawnAfter > drawnBefore + 50_000, `${drawnBefore} -> ${drawnAfter} characters drawn`);
    await clip.scrollIntoViewIfNeeded();
    await shot("e2e-longtext-2-shown-more");
  });

  step("Copy all puts the whole reply on the clipboard", async () => {
    const { clip } = await longReply();
    await fx.page.evaluate(() => navigator.clipboard.writeText("nothing copied yet"));
    const button = clip.getByRole("button", { name: "Copy all" });
    await button.click();
    await clip.getByRole("button", { name: "Copied" }).waitFor({ timeout: WAIT });
    const copied = await fx.page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied.length, REPLY.length);
    assert.ok(copied === REPLY, "the clipboard holds the reply as written");
  });

  const heading = headingLine(MESSAGES.findIndex((m) => m.id === LONG_ID));

  step("Open in editor opens the session document with the cursor on the reply's heading, near the top", async () => {
    const { clip } = await longReply();
    await clip.getByRole("button", { name: "Open in editor" }).click();
    await fx.page.locator(".tabs-container .tab.active", { hasText: `${SESSION_ID}.md` }).waitFor({ timeout: WAIT });
    // VS Code reveals a line "at the top" below the rows its sticky scroll may cover (up to
    // editor.stickyScroll.maxLineCount, 5): the heading is at most five lines down, with
    // the end of the message before it above, and no sticky line over it
    const { view, line } = await editorShows(`line ${heading}, the reply's heading, near the top of the editor`, heading, (v, l) =>
      l.text.startsWith("## ") && v.lines[0].number >= heading - 5 && l.top >= v.stickyBottom,
    );
    assert.ok(line.text.includes(LONG_ID), `the heading names the reply: ${line.text}`);
    assert.ok(view.lines[0].number > 1, "the document is not shown from its top");
    const position = fx.page.locator("#workbench\\.parts\\.statusbar .statusbar-item", { hasText: `Ln ${heading}, Col 1` });
    await position.first().waitFor({ timeout: WAIT });
    await shot("e2e-longtext-3-opened-in-editor");
  });

  step("without sticky scroll, the reply's heading is the editor's first line", async () => {
    changeSettings(fx, { "editor.stickyScroll.enabled": false });
    await until("the sticky lines to go", async () => ((await linesInView())?.stickyBottom === 0 ? true : undefined));
    // the document shown from its top again, then Open in editor once more
    await fx.page.locator(".editor-group-container.active .monaco-editor .view-lines").first().click();
    await fx.page.keyboard.press("Control+Home");
    await editorShows("the document's first line at the top", 1, (v, l) => v.lines[0] === l);
    const { clip } = await longReply();
    await clip.getByRole("button", { name: "Open in editor" }).click();
    const { line } = await editorShows(`line ${heading}, the reply's heading, at the top of the editor`, heading, (v, l) => v.lines[0] === l && l.top <= 1);
    assert.ok(line.text.startsWith("## ") && line.text.includes(LONG_ID), line.text);
    await shot("e2e-longtext-4-opened-without-sticky-scroll");
  });
});
