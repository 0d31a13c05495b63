// `baton acp` end to end through the npm ACP SDK's client side, on the fake API: a streamed
// turn with its meter; an edit asked through session/request_permission, allowed, denied and
// never answered; cancel mid-turn; bad input answered with ACP errors and nothing stored;
// /compact-up-to (by ACP message id) as a compaction entity with a lower meter; /undo-compact;
// then session/load in a new process replaying every message and every tool call.
import { strict as assert } from "node:assert";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  client,
  RequestError,
  type ClientContext,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { scratchDir } from "../scratch.js";
import { startAgent, startFake, stopAgent } from "./spawn.mjs";

const WORDS = Array.from({ length: 400 }, (_, n) => `word${n}`).join(" ");
const UTILS = "def parse_date(s):\n    return s\n";
const WAIT_MS = 20_000;
const PROMPT: string = "session/prompt"; // the untyped overload: what a broken client sends

type Answer = "allowOnce" | "deny" | "never";

/** The client: every update in order, every permission request, answered as `answer` says. */
class Panel {
  updates: SessionUpdate[] = [];
  asked: RequestPermissionRequest[] = [];
  answer: Answer = "allowOnce";
  private wake: (() => void)[] = [];

  app() {
    return client({ name: "baton-acp-flow-test" })
      .onNotification("session/update", (ctx) => {
        this.updates.push(ctx.params.update);
        this.wake.splice(0).forEach((w) => w());
      })
      .onRequest("session/request_permission", (ctx): Promise<RequestPermissionResponse> => {
        this.asked.push(ctx.params);
        if (this.answer === "never") return new Promise(() => {}); // a client that never answers
        return Promise.resolve({ outcome: { outcome: "selected", optionId: this.answer } });
      });
  }

  mark(): number {
    return this.updates.length;
  }

  of<K extends SessionUpdate["sessionUpdate"]>(kind: K, from = 0): Extract<SessionUpdate, { sessionUpdate: K }>[] {
    return this.updates.slice(from).filter((u): u is Extract<SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind);
  }

  said(from = 0): string {
    return this.of("agent_message_chunk", from)
      .map((c) => (c.content.type === "text" ? c.content.text : ""))
      .join("");
  }

  used(): number {
    const last = this.of("usage_update").at(-1);
    assert.ok(last, "a usage_update arrived");
    return last.used;
  }

  async until(check: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!check()) {
      assert.ok(Date.now() < deadline, `no ${what} within ${WAIT_MS} ms`);
      await new Promise<void>((done) => {
        this.wake.push(done);
        setTimeout(done, 200);
      });
    }
  }
}

interface Event {
  type: string;
  message?: { id: string; role: string; content: { type: string; text?: string; id?: string }[] | string };
}

function events(dataDir: string, sessionId: string): Event[] {
  const text = readFileSync(join(dataDir, "sessions", `${sessionId}.jsonl`), "utf8");
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Event);
}

async function say(agent: ClientContext, sessionId: string, text: string) {
  return agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
}

async function refused(call: Promise<unknown>): Promise<RequestError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof RequestError, `an ACP error, not ${String(error)}`);
    return error;
  }
  assert.fail("the agent accepted it");
}

test("every Done-when case of the ACP face through the npm ACP SDK", { timeout: 300_000 }, async () => {
  const fake = await startFake("fake_api_flow.py");
  const dataDir = scratchDir("baton-acp-flow-data-");
  const workspace = scratchDir("baton-acp-flow-ws-");
  const settings = join(scratchDir("baton-acp-flow-settings-"), "settings.json");
  writeFileSync(settings, JSON.stringify({ autoCompact: { enabled: false } }));
  const utils = join(workspace, "utils.py");
  writeFileSync(utils, UTILS);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BATON_DATA_DIR: dataDir,
    ANTHROPIC_BASE_URL: fake.baseUrl,
    ANTHROPIC_API_KEY: "sk-ant-test-SECRET-123",
    BATON_ACP_PERMISSION_WAIT: "2", // how long the unanswered request waits
  };
  const capabilities = { fs: { readTextFile: false, writeTextFile: false }, session: { compaction: {} } };
  const started: ReturnType<typeof startAgent>[] = [];
  let sessionId = "";
  let renamedId = "";
  const calls = ["toolu_allowed", "toolu_denied", "toolu_unanswered"];
  try {
    const first = new Panel();
    const a = startAgent(env, settings);
    started.push(a);
    await first.app().connectWith(a.stream, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1, clientCapabilities: capabilities });
      sessionId = (await agent.request("session/new", { cwd: workspace, mcpServers: [] })).sessionId;

      // a prompt turn: the reply streams, the meter follows
      let from = first.mark();
      assert.equal((await say(agent, sessionId, `Question 0: ${WORDS}`)).stopReason, "end_turn");
      assert.ok(first.of("agent_message_chunk", from).length > 1, "the reply streams in pieces");
      assert.equal(first.said(from), `Answer 0: ${WORDS}`);
      assert.ok(first.of("usage_update", from).length > 0 && first.used() > 0, "the meter after the reply");

      // an edit, allowed: asked first, then written
      from = first.mark();
      assert.equal((await say(agent, sessionId, "Rename parse_date.")).stopReason, "end_turn");
      assert.deepEqual(
        first.asked.map((r) => r.toolCall.toolCallId),
        ["toolu_allowed"],
      );
      assert.equal(readFileSync(utils, "utf8"), UTILS.replace("parse_date", "parse_day"));
      const allowed = first.of("tool_call_update", from).filter((u) => u.toolCallId === "toolu_allowed");
      assert.equal(allowed.at(-1)?.status, "completed");
      renamedId = first.of("agent_message_chunk", from).at(-1)?.messageId ?? "";
      assert.ok(renamedId, "the reply's chunks carry its message id");
      writeFileSync(utils, UTILS);

      // denied: nothing written, the model told, the turn goes on
      first.answer = "deny";
      from = first.mark();
      assert.equal((await say(agent, sessionId, "Rename it again.")).stopReason, "end_turn");
      assert.equal(first.asked.length, 2);
      assert.equal(readFileSync(utils, "utf8"), UTILS);
      assert.equal(first.of("tool_call_update", from).filter((u) => u.toolCallId === "toolu_denied").at(-1)?.status, "failed");
      assert.ok(first.said(from).endsWith("Left as it is."));

      // never answered: denied after the bounded wait, the turn goes on
      first.answer = "never";
      from = first.mark();
      assert.equal((await say(agent, sessionId, "And once more.")).stopReason, "end_turn");
      assert.equal(first.asked.length, 3);
      assert.equal(readFileSync(utils, "utf8"), UTILS);
      assert.match(first.said(from), /No answer to the permission request/);
      assert.ok(first.said(from).endsWith("Nobody answered."));
      first.answer = "allowOnce";

      // cancel mid-turn: cancelled, and what arrived is kept
      from = first.mark();
      const story = say(agent, sessionId, "Tell me a long story.");
      await first.until(() => first.of("agent_message_chunk", from).length > 0, "first chunk of the story");
      await agent.notify("session/cancel", { sessionId });
      assert.equal((await story).stopReason, "cancelled");
      fake.say("release");
      const streamed = first.said(from);
      const interrupted = events(dataDir, sessionId)
        .filter((e) => e.type === "message")
        .at(-1)?.message;
      assert.equal(interrupted?.role, "assistant");
      assert.deepEqual(interrupted?.content, [{ type: "text", text: streamed }]);

      // bad input: ACP errors, nothing stored, nothing sent to the model
      const before = readFileSync(join(dataDir, "sessions", `${sessionId}.jsonl`));
      const unknown = await refused(say(agent, "no-such-session", "hello"));
      assert.deepEqual(unknown.data, { code: "session_not_found" });
      const malformed = [
        [{ type: "image", data: "not base64!", mimeType: "image/png" }],
        [{ type: "text" }],
        [{ type: "hologram", text: "x" }],
        [],
      ];
      for (const prompt of malformed) {
        const error = await refused(agent.request(PROMPT, { sessionId, prompt }));
        assert.equal(error.code, -32602, JSON.stringify(prompt));
      }
      assert.deepEqual(readFileSync(join(dataDir, "sessions", `${sessionId}.jsonl`)), before);
      from = first.mark();
      await say(agent, sessionId, "Now a good one.");
      assert.equal(first.said(from), "A good prompt gets an answer."); // no reply was used up

      // /compact-up-to the renamed reply, by its ACP message id
      const full = first.used();
      from = first.mark();
      assert.equal((await say(agent, sessionId, `/compact-up-to ${renamedId}`)).stopReason, "end_turn");
      assert.deepEqual(
        first.of("compaction_update", from).map((u) => u.status),
        ["in_progress", "completed"],
      );
      const summary = first
        .of("compaction_summary_chunk", from)
        .map((u) => (u.content.type === "text" ? u.content.text : ""))
        .join("");
      assert.match(summary, /renamed parse_date/);
      const compacted = first.used();
      assert.ok(compacted < full, `the meter fell: ${full} -> ${compacted}`);

      // /undo-compact: everything back, the meter up again
      from = first.mark();
      await say(agent, sessionId, "/undo-compact");
      assert.match(first.said(from), /Undid the latest compaction/);
      assert.ok(first.used() > compacted);
    });
    assert.equal(await stopAgent(a.child), 0, "closing stdin ends baton acp");

    // a new process loads the session: every message, every tool call, in order
    const all = events(dataDir, sessionId);
    assert.equal(all.at(-1)?.type, "uncompact");
    const texts = all
      .filter((e) => e.type === "message" && e.message)
      .map((e) => e.message!)
      .filter((m) => typeof m.content === "string" || m.content.some((b) => b.type === "text" && b.text));
    const second = new Panel();
    const b = startAgent(env, settings);
    started.push(b);
    await second.app().connectWith(b.stream, async (agent) => {
      await agent.request("initialize", { protocolVersion: 1, clientCapabilities: capabilities });
      await agent.request("session/load", { sessionId, cwd: workspace, mcpServers: [] });
      const ids: string[] = [];
      for (const u of second.updates) {
        if ((u.sessionUpdate === "user_message_chunk" || u.sessionUpdate === "agent_message_chunk") && u.messageId && ids.at(-1) !== u.messageId) {
          ids.push(u.messageId);
        }
      }
      assert.deepEqual(ids, texts.map((m) => m.id));
      assert.deepEqual(
        second.of("tool_call").map((u) => u.toolCallId),
        calls,
      );
      const results = new Map(second.of("tool_call_update").map((u) => [u.toolCallId, u.status]));
      assert.deepEqual(
        calls.map((c) => results.get(c)),
        ["completed", "failed", "failed"],
      );
      await second.until(() => second.of("usage_update").length > 0, "the meter after the load");
    });
    assert.equal(await stopAgent(b.child), 0);
  } finally {
    started.forEach(({ child }) => child.exitCode === null && child.kill());
    await fake.stop();
  }
});
