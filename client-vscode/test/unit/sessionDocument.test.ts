import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { SessionTexts } from "../../src/sessionTexts";
import { sessionDocumentPlaceholder } from "../../src/sessionUri";

const PACKAGE = join(__dirname, "..", "..", "..", "package.json");

test("a session document tab restored at reload activates the extension that serves it", () => {
  const manifest = JSON.parse(readFileSync(PACKAGE, "utf8")) as { activationEvents: string[] };
  // without it VS Code restores the baton: tab before any provider exists and shows
  // "The editor could not be opened"
  assert.ok(manifest.activationEvents.includes("onFileSystem:baton"), manifest.activationEvents.join(", "));
});

test("while no server runs a session document says why and that it reloads", () => {
  const text = sessionDocumentPlaceholder("s_1", "Baton's server is not running");
  assert.match(text, /^# Baton: s_1/);
  assert.match(text, /not running \(Baton's server is not running\)/);
  assert.match(text, /reloads by itself once the server runs/);
  assert.match(text, /Baton: Restart Server/);
});

/** A server that renders sessions from a map (none: not running), and a clock that stands still. */
function texts(rendered: Map<string, string> | undefined, clock = { at: 1_000 }) {
  let running = rendered !== undefined;
  const server = {
    texts: new SessionTexts({
      rpc: {
        render: async (sessionId: string) => {
          if (!running) throw new Error("Baton's server is not running");
          const text = rendered?.get(sessionId);
          if (text === undefined) throw Object.assign(new Error(`no session ${sessionId}`), { data: { code: "session_not_found" } });
          return { uri: `baton:/sessions/${sessionId}.md`, text, version: 1, messages: [] };
        },
      },
      running: () => running,
      now: () => clock.at,
    }),
    start(texts: Map<string, string>) {
      rendered = texts;
      running = true;
    },
  };
  return server;
}

test("a session document reads the server's rendering; a session that is gone is missing", async () => {
  const { texts: docs } = texts(new Map([["s1", "# Chat s1\n"]]));
  assert.deepEqual(await docs.read("s1"), { text: "# Chat s1\n" });
  assert.deepEqual(await docs.read("s2"), { missing: true });
});

test("a document read before the server runs is a placeholder, read again once the server runs", async () => {
  const server = texts(undefined);
  const read = await server.texts.read("s1");
  assert.ok("text" in read && read.text === sessionDocumentPlaceholder("s1", "Baton's server is not running"));
  assert.equal(server.texts.mtime("s1"), 0);
  server.start(new Map([["s1", "# Chat s1\n"]]));
  assert.deepEqual(server.texts.serverRunning(), ["s1"], "announced changed");
  assert.ok(server.texts.mtime("s1") > 0, "with a new modification time, so the editor reads it again");
  assert.deepEqual(await server.texts.read("s1"), { text: "# Chat s1\n" });
  assert.deepEqual(server.texts.serverRunning(), [], "once");
});

test("a failure while the server runs is said, not a placeholder", async () => {
  const { texts: docs } = texts(new Map());
  const failing = new SessionTexts({
    rpc: { render: async () => Promise.reject(new Error("render failed")) },
    running: () => true,
    now: () => 1,
  });
  assert.deepEqual(await failing.read("s1"), { unavailable: "Baton: render failed" });
  assert.deepEqual(failing.serverRunning(), []);
  assert.deepEqual(await docs.read("s1"), { missing: true });
});

test("a read whose server stopped before it answered is a placeholder, read again once the server runs", async () => {
  // the server crashed while it rendered; the client has not said it stopped yet
  const lost = { code: -32097, message: "Pending response rejected since connection got disposed" };
  const docs = new SessionTexts({ rpc: { render: async () => Promise.reject(lost) }, running: () => true, now: () => 1 });
  const read = await docs.read("s1");
  assert.ok("text" in read, `a placeholder, not ${JSON.stringify(read)}`);
  assert.equal(read.text, sessionDocumentPlaceholder("s1", "it stopped before it answered"));
  assert.deepEqual(docs.serverRunning(), ["s1"], "read again once the server runs");
});

test("every change of a session gives its document a later modification time, within one millisecond too", () => {
  // The editor skips reading a file again whose modification time and size are unchanged
  // (its etag): a second change in the same millisecond must still read as a change.
  const clock = { at: 5_000 };
  const { texts: docs } = texts(new Map(), clock);
  docs.changed("s1");
  const first = docs.mtime("s1");
  docs.changed("s1");
  assert.ok(docs.mtime("s1") > first, `${docs.mtime("s1")} > ${first}`);
  clock.at = 4_000; // the clock set back
  docs.changed("s1");
  assert.ok(docs.mtime("s1") > first + 1);
});

test("the editor's look at a document's size, then at its text, costs one rendering", async () => {
  // VS Code stats a file before it reads it: both want the text, which the server renders
  let renders = 0;
  let rendered = "# Chat s1\n";
  const clock = { at: 1_000 };
  const docs = new SessionTexts({
    rpc: {
      render: async (sessionId: string) => {
        renders++;
        return { uri: `baton:/sessions/${sessionId}.md`, text: rendered, version: renders, messages: [] };
      },
    },
    running: () => true,
    now: () => clock.at,
  });
  assert.deepEqual(await docs.read("s1"), { text: "# Chat s1\n" }); // stat
  assert.deepEqual(await docs.read("s1"), { text: "# Chat s1\n" }); // readFile
  assert.equal(renders, 1);
  // a change: the next look renders again, and sees it
  rendered = "# Chat s1\n\nmore\n";
  docs.changed("s1");
  assert.deepEqual(await docs.read("s1"), { text: "# Chat s1\n\nmore\n" });
  assert.deepEqual(await docs.read("s1"), { text: "# Chat s1\n\nmore\n" });
  assert.equal(renders, 2);
  // a text is used once: a later look asks the server again
  assert.deepEqual(await docs.read("s1"), { text: "# Chat s1\n\nmore\n" });
  assert.equal(renders, 3);
});
