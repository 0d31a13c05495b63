// The answer to `baton/tool/permission`: the panel's card or a modal, deny on cancellation,
// on a dismissed dialog and on a malformed request; and the initialize capability.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ClientCapabilities } from "vscode-languageclient";
import { CancellationTokenSource, type CancellationToken } from "vscode-languageserver-protocol";
import {
  modalText,
  PermissionBroker,
  restartWaitLine,
  registerToolPermission,
  ToolPermissionFeature,
  type PermissionHandler,
  type PermissionPorts,
} from "../../src/toolPermission";
import { optionLabel, permissionParams, type PermissionOutcome, type ToolPermissionParams } from "../../src/toolWire";

const DIFF = "--- a/utils.py\n+++ b/utils.py\n@@ -1,3 +1,3 @@\n-def parse_date(s):\n+def parse_day(s):\n     return s\n";

function editRequest(overrides: Partial<ToolPermissionParams> = {}): ToolPermissionParams {
  return {
    sessionId: "s1",
    toolUseId: "toolu_1",
    tool: "str_replace_based_edit_tool",
    input: { command: "str_replace", path: "utils.py", old_str: "parse_date", new_str: "parse_day" },
    title: "Edit utils.py (+1 -1)",
    kind: "edit",
    path: "/ws/utils.py",
    diff: DIFF,
    options: [
      { id: "allowOnce", label: "Allow once" },
      { id: "allowSession", label: "Allow for this session" },
      { id: "deny", label: "Deny" },
    ],
    ...overrides,
  };
}

class Ports implements PermissionPorts {
  visible = true;
  cards: ToolPermissionParams[] = [];
  dropped: string[] = [];
  modals: ToolPermissionParams[] = [];
  modalAnswer: Promise<PermissionOutcome | undefined> = Promise.resolve(undefined);
  logs: string[] = [];
  panelVisible = (): boolean => this.visible;
  showCard = (request: ToolPermissionParams): void => void this.cards.push(request);
  dropCard = (id: string): void => void this.dropped.push(id);
  askModal = (request: ToolPermissionParams): Promise<PermissionOutcome | undefined> => {
    this.modals.push(request);
    return this.modalAnswer;
  };
  notes: (string | null)[] = [];
  restartNote = (message: string | null): void => void this.notes.push(message);
  log = (message: string): void => void this.logs.push(message);
}

test("the client declares experimental.baton.toolPermission, keeping what else is declared", () => {
  const capabilities: ClientCapabilities = { experimental: { baton: { other: 1 }, someone: true } };
  new ToolPermissionFeature().fillClientCapabilities(capabilities);
  assert.deepEqual(capabilities.experimental, { baton: { other: 1, toolPermission: true }, someone: true });
  const empty: ClientCapabilities = {};
  new ToolPermissionFeature().fillClientCapabilities(empty);
  assert.deepEqual(empty.experimental, { baton: { toolPermission: true } });
  assert.deepEqual(new ToolPermissionFeature().getState(), { kind: "static" });
});

test("the client answers baton/tool/permission with the handler set when it comes, else deny", async () => {
  const features: unknown[] = [];
  const handlers = new Map<string, (params: unknown, token: CancellationToken) => Promise<unknown>>();
  let current: PermissionHandler | undefined;
  registerToolPermission(
    {
      registerFeature: (feature) => void features.push(feature),
      onRequest: (method, handler) => void handlers.set(method, handler),
    },
    () => current,
  );
  assert.ok(features[0] instanceof ToolPermissionFeature);
  const handle = handlers.get("baton/tool/permission");
  assert.ok(handle !== undefined);
  const token = new CancellationTokenSource().token;
  assert.deepEqual(await handle(editRequest(), token), { outcome: "deny" }, "no panel yet: deny");
  const seen: [unknown, CancellationToken][] = [];
  current = async (params, t) => {
    seen.push([params, t]);
    return { outcome: "allowSession" };
  };
  assert.deepEqual(await handle(editRequest(), token), { outcome: "allowSession" });
  assert.equal(seen[0]![1], token, "the request's token reaches the broker");
  current = async () => {
    throw new Error("the window is gone");
  };
  assert.deepEqual(await handle(editRequest(), token), { outcome: "deny" });
});

test("with the panel on screen the card asks; its answer is the result and the card goes", async () => {
  const ports = new Ports();
  const broker = new PermissionBroker(ports);
  const answer = broker.handle(editRequest(), new CancellationTokenSource().token);
  assert.equal(ports.cards.length, 1);
  assert.equal(ports.cards[0]!.diff, DIFF);
  assert.deepEqual(broker.pending.map((r) => r.toolUseId), ["toolu_1"]);
  broker.answer("toolu_1", "allowSession");
  assert.deepEqual(await answer, { outcome: "allowSession" });
  assert.deepEqual(ports.dropped, ["toolu_1"]);
  assert.deepEqual(broker.pending, []);
  assert.deepEqual(ports.modals, [], "no dialog while the panel asks");
});

test("when the server stops, what it was asking ends denied and its card goes", async () => {
  const ports = new Ports();
  const broker = new PermissionBroker(ports);
  const answer = broker.handle(editRequest(), new CancellationTokenSource().token);
  broker.denyAll();
  assert.deepEqual(await answer, { outcome: "deny" });
  assert.deepEqual(ports.dropped, ["toolu_1"]);
  assert.deepEqual(broker.pending, [], "a reloaded panel shows no stale card");
});

test("a restart that waits for a card nobody answers is said above the cards, until it is answered or the restart begins", async () => {
  const ports = new Ports();
  const broker = new PermissionBroker(ports);
  const why = "for the changed API key";
  broker.restartWaits(why); // a reply streams, no card yet: nothing to say
  assert.deepEqual(ports.notes, []);
  const first = broker.handle(editRequest());
  const line = restartWaitLine(why);
  assert.match(line, /restarts for the changed API key once the reply in progress ends, and that reply waits for your answer here\. Stop ends it now\./);
  assert.deepEqual(ports.notes, [line], "the card that holds the restart says so");
  assert.equal(broker.restartLine, line, "a reloaded panel shows it again");
  const second = broker.handle(editRequest({ toolUseId: "toolu_2" }));
  broker.answer("toolu_1", "allowOnce");
  assert.deepEqual(await first, { outcome: "allowOnce" });
  assert.deepEqual(ports.notes, [line], "said while any card waits");
  broker.answer("toolu_2", "deny");
  await second;
  assert.deepEqual(ports.notes, [line, null], "gone with the last card");
  // a card while a restart waits, then the restart begins: the line goes, the card stays
  const third = broker.handle(editRequest({ toolUseId: "toolu_3" }));
  broker.restartWaits(undefined);
  assert.deepEqual(ports.notes, [line, null, line, null]);
  assert.equal(broker.restartLine, null);
  broker.denyAll();
  await third;
  // a panel hidden with a card on show asks in a dialog instead: the panel's line goes with the card
  broker.restartWaits(why);
  ports.modalAnswer = new Promise(() => undefined);
  void broker.handle(editRequest({ toolUseId: "toolu_4" }));
  ports.visible = false;
  broker.panelGone();
  assert.deepEqual(ports.notes.slice(-2), [line, null]);
});

test("an answer the request does not offer counts as deny; an answer to nothing is ignored", async () => {
  const ports = new Ports();
  const broker = new PermissionBroker(ports);
  const answer = broker.handle(editRequest({ options: [{ id: "allowOnce", label: "Allow" }, { id: "deny", label: "Deny" }] }));
  broker.answer("toolu_other", "allowOnce");
  broker.answer("toolu_1", "allowSession");
  assert.deepEqual(await answer, { outcome: "deny" });
});

test("the server cancelling the request (the turn was cancelled) answers deny and takes the card away", async () => {
  const ports = new Ports();
  const broker = new PermissionBroker(ports);
  const source = new CancellationTokenSource();
  const answer = broker.handle(editRequest(), source.token);
  source.cancel();
  assert.deepEqual(await answer, { outcome: "deny" });
  assert.deepEqual(ports.dropped, ["toolu_1"]);
  broker.answer("toolu_1", "allowOnce"); // too late: nothing waits
  assert.deepEqual(broker.pending, []);
  // a request cancelled before it is handled asks nobody
  const gone = new CancellationTokenSource();
  gone.cancel();
  assert.deepEqual(await broker.handle(editRequest({ toolUseId: "toolu_2" }), gone.token), { outcome: "deny" });
  assert.equal(ports.cards.length, 1);
});

test("with the panel hidden a modal asks; dismissing it is deny; a late modal answer after a cancel is dropped", async () => {
  const ports = new Ports();
  ports.visible = false;
  const broker = new PermissionBroker(ports);
  ports.modalAnswer = Promise.resolve("allowOnce");
  assert.deepEqual(await broker.handle(editRequest()), { outcome: "allowOnce" });
  assert.equal(ports.modals.length, 1);
  assert.deepEqual(ports.cards, []);

  ports.modalAnswer = Promise.resolve(undefined);
  assert.deepEqual(await broker.handle(editRequest()), { outcome: "deny" });

  let release: (o: PermissionOutcome) => void = () => undefined;
  ports.modalAnswer = new Promise((resolve) => (release = resolve));
  const source = new CancellationTokenSource();
  const answer = broker.handle(editRequest(), source.token);
  source.cancel();
  release("allowOnce");
  assert.deepEqual(await answer, { outcome: "deny" });

  ports.modalAnswer = Promise.reject(new Error("no window"));
  assert.deepEqual(await broker.handle(editRequest()), { outcome: "deny" });
  assert.match(ports.logs.join("\n"), /asking failed/);
});

test("a panel hidden with a card on show asks again in a modal, and the card goes", async () => {
  const ports = new Ports();
  const broker = new PermissionBroker(ports);
  const answer = broker.handle(editRequest());
  ports.modalAnswer = Promise.resolve("allowOnce");
  broker.panelGone();
  assert.deepEqual(ports.dropped, ["toolu_1"]);
  assert.deepEqual(broker.pending, []);
  broker.answer("toolu_1", "deny"); // the stale card's answer counts for nothing
  assert.deepEqual(await answer, { outcome: "allowOnce" });
  assert.equal(ports.modals.length, 1);
});

test("a malformed request is answered deny without asking", async () => {
  const ports = new Ports();
  const broker = new PermissionBroker(ports);
  for (const bad of [
    null,
    "edit",
    { ...editRequest(), kind: "delete" },
    { ...editRequest(), options: [] },
    { ...editRequest(), options: [{ id: "always", label: "Always" }] },
    { ...editRequest(), title: 3 },
    { ...editRequest(), input: [] },
    { ...editRequest(), diff: 7 },
  ]) {
    assert.deepEqual(await broker.handle(bad), { outcome: "deny" }, JSON.stringify(bad));
  }
  assert.deepEqual(ports.cards, []);
  assert.deepEqual(ports.modals, []);
  assert.equal(ports.logs.length, 8);
});

test("the request is read field for field; unknown fields are left out", () => {
  const parsed = permissionParams({ ...editRequest(), extra: "x", path: null });
  assert.ok(parsed !== null);
  assert.equal("extra" in parsed, false);
  assert.equal("path" in parsed, false);
  assert.equal(parsed.diff, DIFF);
});

test("the modal shows the title, the path and the diff; its Cancel is the deny; an edit reads Accept", () => {
  const text = modalText(editRequest());
  assert.equal(text.message, "Baton: Edit utils.py (+1 -1)?");
  assert.match(text.detail, /^\/ws\/utils\.py\n--- a\/utils\.py/);
  assert.match(text.detail, /\+def parse_day/);
  assert.deepEqual(text.buttons, [
    { id: "allowOnce", label: "Accept" },
    { id: "allowSession", label: "Allow for this session" },
  ]);
  const long = modalText(editRequest({ diff: Array.from({ length: 100 }, (_, i) => `+line ${i}`).join("\n") }), 10);
  assert.match(long.detail, /90 more lines of the diff$/);
  const read = modalText(editRequest({ kind: "read", diff: undefined, title: "Read app.py:1-80", input: { path: "app.py" } }));
  assert.match(read.detail, /"path": "app.py"/);
  assert.equal(read.buttons[0]!.label, "Allow once");
  assert.equal(optionLabel({ kind: "edit" }, "deny", "Deny"), "Reject");
  assert.equal(optionLabel({ kind: "search" }, "deny", "Deny"), "Deny");
});

test("the modal's detail stays short for a huge edit or input: each line cut, the input's lines counted like the diff's", () => {
  const minified = `+${"x".repeat(300_000)}`;
  const created = modalText(editRequest({ diff: `--- /dev/null\n+++ b/app.min.js\n@@ -0,0 +1 @@\n${minified}\n` }));
  assert.ok(created.detail.length < 2_000, `a detail of ${created.detail.length} characters`);
  assert.match(created.detail, /\n\+x{100,}… \(300,001 characters\)$/m);
  const input = { blob: "y".repeat(1_000_000), steps: Array.from({ length: 500 }, (_, i) => `step ${i}`) };
  const other = modalText(editRequest({ kind: "other", tool: "run", diff: undefined, title: "Run a script", input }), 10);
  assert.ok(other.detail.length < 3_000, `a detail of ${other.detail.length} characters`);
  assert.match(other.detail, /more lines of the input$/);
});

test("a tool call asked again while its dialog is open is answered by that dialog: no second dialog", async () => {
  const ports = new Ports();
  ports.visible = false;
  const broker = new PermissionBroker(ports);
  let release: (o: PermissionOutcome) => void = () => undefined;
  ports.modalAnswer = new Promise((resolve) => (release = resolve));
  const first = new CancellationTokenSource();
  const withdrawn = broker.handle(editRequest(), first.token);
  first.cancel(); // the server withdrew it; the dialog stays on screen (no API closes it)
  assert.deepEqual(await withdrawn, { outcome: "deny" });
  const again = broker.handle(editRequest());
  ports.visible = true; // nor does a card ask beside it once the panel shows
  const third = broker.handle(editRequest());
  assert.equal(ports.modals.length, 1, "one dialog for the one call");
  assert.deepEqual(ports.cards, []);
  release("allowOnce");
  assert.deepEqual(await again, { outcome: "allowOnce" });
  assert.deepEqual(await third, { outcome: "allowOnce" });
  // once answered, the next ask of that call opens its own
  ports.visible = false;
  ports.modalAnswer = Promise.resolve("deny");
  assert.deepEqual(await broker.handle(editRequest()), { outcome: "deny" });
  assert.equal(ports.modals.length, 2);
});

test("a card moved into a dialog (the panel was hidden) is not asked again in a second dialog", async () => {
  const ports = new Ports();
  const broker = new PermissionBroker(ports);
  let release: (o: PermissionOutcome) => void = () => undefined;
  ports.modalAnswer = new Promise((resolve) => (release = resolve));
  const answer = broker.handle(editRequest());
  broker.panelGone();
  ports.visible = false;
  const again = broker.handle(editRequest());
  assert.equal(ports.modals.length, 1);
  release("allowSession");
  assert.deepEqual(await answer, { outcome: "allowSession" });
  assert.deepEqual(await again, { outcome: "allowSession" });
});
