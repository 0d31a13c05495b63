// What a send attaches: the active file (its visible range when large), the selection, the
// picked files; chips the user removed stay off until the editor shows something else.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ChatController } from "../../src/chatController";
import type { ChatPorts } from "../../src/chatPorts";
import { AttachmentSet, LARGE_FILE_LINES, rankFiles, type EditorSnapshot } from "../../src/attachments";
import { CurrentSession } from "../../src/currentSession";
import type { LineRange } from "../../src/protocol";
import { BatonRpc, type RequestSender } from "../../src/rpc";
import type { SendAttachment } from "../../src/toolWire";
import { message, session, usage } from "./fixtures";

function editor(lineCount: number, extra: Partial<EditorSnapshot> = {}): EditorSnapshot {
  const lines = Array.from({ length: lineCount }, (_, i) => `line ${i + 1}`);
  return {
    path: "/ws/src/utils.py",
    name: "src/utils.py",
    languageId: "python",
    lineCount,
    visible: { startLine: 1, endLine: Math.min(lineCount, 40) },
    text: (range?: LineRange) => (range === undefined ? lines.join("\n") : lines.slice(range.startLine - 1, range.endLine).join("\n")),
    ...extra,
  };
}
const none = (): undefined => undefined;

test("a small active file goes whole, with its text and language", () => {
  const set = new AttachmentSet();
  const ed = editor(12);
  assert.deepEqual(set.chips(ed).map((c) => [c.label, c.kind, c.auto]), [["utils.py", "file", true]]);
  assert.deepEqual(set.build(ed, none), [{ kind: "file", path: "/ws/src/utils.py", text: ed.text(), languageId: "python" }]);
});

test("a file over the limit goes as its visible range; the selection goes as its own attachment", () => {
  const set = new AttachmentSet();
  const ed = editor(LARGE_FILE_LINES + 1, { visible: { startLine: 120, endLine: 160 }, selection: { startLine: 130, endLine: 132 } });
  const chips = set.chips(ed);
  assert.deepEqual(chips.map((c) => c.label), ["utils.py:120-160", "utils.py:130-132"]);
  assert.deepEqual(set.build(ed, none), [
    { kind: "file", path: "/ws/src/utils.py", text: ed.text({ startLine: 120, endLine: 160 }), languageId: "python", range: { startLine: 120, endLine: 160 } },
    { kind: "selection", path: "/ws/src/utils.py", text: "line 130\nline 131\nline 132", languageId: "python", range: { startLine: 130, endLine: 132 } },
  ]);
  // removed, it stays off while the same file is active, wherever it scrolls
  set.remove(chips[0]!.id);
  const scrolled = { ...ed, visible: { startLine: 300, endLine: 340 } };
  assert.deepEqual(set.chips(scrolled).map((c) => c.kind), ["selection"]);
  // a file of exactly the limit still goes whole
  assert.equal(new AttachmentSet().build(editor(LARGE_FILE_LINES), none)[0]!.range, undefined);
});

test("a removed chip stays off while the editor shows the same, and comes back when it changes", () => {
  const set = new AttachmentSet();
  const ed = editor(10, { selection: { startLine: 2, endLine: 3 } });
  const [active, selection] = set.chips(ed);
  set.remove(active!.id);
  assert.deepEqual(set.chips(ed).map((c) => c.kind), ["selection"]);
  set.remove(selection!.id);
  assert.deepEqual(set.build(ed, none), []);
  // another selection in the same file: a new selection chip; the file stays off
  const moved = editor(10, { selection: { startLine: 5, endLine: 5 } });
  assert.deepEqual(set.chips(moved).map((c) => c.label), ["utils.py:5"]);
  // another file and back: the file's chip is back
  set.chips({ ...editor(3), path: "/ws/other.py", name: "other.py" });
  assert.deepEqual(set.chips(editor(10)).map((c) => c.label), ["utils.py"]);
});

test("picked files go with their open text or as a path for the server to read; a send clears them", () => {
  const set = new AttachmentSet();
  assert.equal(set.pick("/ws/app.py", "app.py"), true);
  assert.equal(set.pick("/ws/app.py", "app.py"), false, "once");
  set.pick("/ws/README.md", "README.md");
  const open = (path: string): { text: string; languageId: string } | undefined =>
    path === "/ws/app.py" ? { text: "print('unsaved')", languageId: "python" } : undefined;
  assert.deepEqual(set.build(undefined, open), [
    { kind: "file", path: "/ws/app.py", text: "print('unsaved')", languageId: "python" },
    { kind: "file", path: "/ws/README.md" },
  ]);
  set.remove("picked:/ws/README.md");
  assert.equal(set.build(undefined, open).length, 1);
  set.sent();
  assert.deepEqual(set.build(undefined, open), []);
  // the active file picked again is not attached twice
  set.pick("/ws/src/utils.py", "src/utils.py");
  assert.equal(set.build(editor(5), none).length, 1);
});

test("the picker lists open editors first, then names starting with the query, then containing it", () => {
  const items = [
    { path: "/ws/lib/old_parse.py", name: "lib/old_parse.py", open: false },
    { path: "/ws/parse.py", name: "parse.py", open: false },
    { path: "/ws/docs/notes.md", name: "docs/notes.md", open: true },
    { path: "/ws/src/parser/x.py", name: "src/parser/x.py", open: false },
    { path: "/ws/parse.py", name: "parse.py", open: true },
  ];
  assert.deepEqual(rankFiles("PARSE", items).map((i) => i.name), ["parse.py", "lib/old_parse.py", "src/parser/x.py"]);
  assert.deepEqual(rankFiles("", items).map((i) => i.name)[0], "docs/notes.md");
  assert.equal(rankFiles("", items, 2).length, 2);
  assert.deepEqual(rankFiles("zzz", items), []);
});

test("rpc.send carries the attachments in the send params, and none when there are none", async () => {
  const calls: { method: string; params: unknown }[] = [];
  const sender: RequestSender = {
    sendRequest: async <R>(method: string, params: unknown): Promise<R> => {
      calls.push({ method, params });
      return {} as R;
    },
  };
  const rpc = new BatonRpc(sender);
  const attachment: SendAttachment = { kind: "selection", path: "/ws/a.py", text: "x = 1", range: { startLine: 4, endLine: 4 } };
  await rpc.send("s1", "why?", {}, [attachment]);
  await rpc.send("s1", "again");
  assert.deepEqual(calls, [
    { method: "baton/session/send", params: { sessionId: "s1", content: "why?", attachments: [attachment] } },
    { method: "baton/session/send", params: { sessionId: "s1", content: "again" } },
  ]);
});

test("the panel's Send attaches the chips on show, and says they went once the prompt is stored", async () => {
  const sent: { text: string | undefined; attachments: readonly SendAttachment[] }[] = [];
  let built = 0;
  let cleared = 0;
  const s = session("s1", "2026-12-01T10:00:00Z");
  const ports: ChatPorts = {
    rpc: {
      listSessions: async () => [s],
      getSession: async () => ({ session: s, messages: [message("u1", "user", "hi")], usage: usage() }),
      createSession: async () => s,
      send: async (_id, text, _options, attachments = []) => {
        sent.push({ text, attachments });
        return { message: message("a1", "assistant", "ok"), usage: usage() };
      },
      draftUsage: async () => ({ ...usage(), draft: { tokens: 1, usedBefore: 1, verdict: "fits" } }),
      compact: async () => {
        throw new Error("no compaction expected");
      },
      setModel: async () => {
        throw new Error("no model switch expected");
      },
      listModels: async () => {
        throw new Error("no model list expected");
      },
      renameSession: async () => {
        throw new Error("no rename expected");
      },
      deleteSession: async () => {
        throw new Error("no delete expected");
      },
      uncompact: async () => {
        throw new Error("no undo expected");
      },
      rewind: async () => {
        throw new Error("no rewind expected");
      },
      replaced: async () => {
        throw new Error("no replaced messages expected");
      },
      render: async () => {
        throw new Error("no render expected");
      },
    },
    post: () => undefined,
    hasApiKey: async () => true,
    serverAvailable: () => true,
    sendWithProgress: (run) => run({}),
    compactWithProgress: (run) => run({}),
    command: async () => undefined,
    insertCode: async () => undefined,
    showSessionDocument: async () => undefined,
    applyCode: async () => undefined,
    attachments: {
      build: () => {
        built += 1;
        return [{ kind: "file", path: "/ws/utils.py", text: "def parse_date(): ...", languageId: "python" }];
      },
      sent: () => void (cleared += 1),
    },
  };
  const chat = new ChatController(ports, new CurrentSession(), 0, 0);
  await chat.receive({ type: "ready" });
  await chat.receive({ type: "send", text: "rename parse_date" });
  assert.equal(built, 1);
  assert.deepEqual(sent, [
    { text: "rename parse_date", attachments: [{ kind: "file", path: "/ws/utils.py", text: "def parse_date(): ...", languageId: "python" }] },
  ]);
  assert.equal(cleared, 1);
  chat.dispose();
});
