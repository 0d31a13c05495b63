// `baton acp` driven by the npm ACP SDK's client side (`client().connectWith`, over its
// ndJsonStream on the agent's stdio): one prompt turn streamed with its meter, then a
// /compact reported as the Session Compaction entity the SDK's schema parses.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { test } from "node:test";
import { client, ndJsonStream, type SessionNotification, type SessionUpdate } from "@agentclientprotocol/sdk";
import { startFakeApi } from "../protocol/harness.js";
import { scratchDir } from "../scratch.js";
import { acpCommand } from "./spawn.mjs";

const LONG = Array.from({ length: 600 }, (_, n) => `word${n}`).join(" "); // about 3,000 tokens

function kind(updates: SessionUpdate[], name: SessionUpdate["sessionUpdate"]): SessionUpdate[] {
  return updates.filter((u) => u.sessionUpdate === name);
}

test("a prompt turn and a /compact through the npm ACP SDK", { timeout: 120_000 }, async () => {
  const fake = await startFakeApi("acp");
  const dataDir = scratchDir("baton-acp-data-");
  const workspace = scratchDir("baton-acp-ws-");
  const settings = join(scratchDir("baton-acp-settings-"), "settings.json");
  // a small recent window, so one short turn leaves something to summarize
  writeFileSync(settings, JSON.stringify({ keepWindow: { minTokens: 1, minTextMessages: 1, maxTokens: 20 } }));
  const [command, args] = acpCommand();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BATON_DATA_DIR: dataDir,
    ANTHROPIC_BASE_URL: fake.baseUrl,
    ANTHROPIC_API_KEY: "sk-ant-test-SECRET-123",
  };
  const child = spawn(command, [...args, "--settings", settings], { env, stdio: ["pipe", "pipe", "inherit"] });
  const updates: SessionUpdate[] = [];
  const app = client({ name: "baton-acp-test" }).onNotification("session/update", (ctx) => {
    const note: SessionNotification = ctx.params;
    updates.push(note.update);
  });
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  try {
    await app.connectWith(stream, async (agent) => {
      const init = await agent.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, session: { compaction: {} } },
      });
      assert.equal(init.agentCapabilities?.loadSession, true);
      const { sessionId } = await agent.request("session/new", { cwd: workspace, mcpServers: [] });

      const turn = await agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: `Say hello to the whole team. ${LONG}` }],
      });
      assert.equal(turn.stopReason, "end_turn");
      const chunks = kind(updates, "agent_message_chunk");
      assert.ok(chunks.length > 1, "the reply streams in pieces");
      const text = chunks.map((c) => (c.sessionUpdate === "agent_message_chunk" && c.content.type === "text" ? c.content.text : "")).join("");
      assert.equal(text, "Hello from the fake API over ACP, streamed in pieces.");
      const meter = kind(updates, "usage_update");
      assert.ok(meter.length > 0, "a usage_update after the turn");
      const before = meter[meter.length - 1];
      assert.ok(before.sessionUpdate === "usage_update" && before.used > 0 && before.size > 0);

      const compacted = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "/compact" }] });
      assert.equal(compacted.stopReason, "end_turn");
      const entity = kind(updates, "compaction_update");
      assert.deepEqual(
        entity.map((u) => (u.sessionUpdate === "compaction_update" ? u.status : "")),
        ["in_progress", "completed"],
      );
      const summary = kind(updates, "compaction_summary_chunk")
        .map((u) => (u.sessionUpdate === "compaction_summary_chunk" && u.content.type === "text" ? u.content.text : ""))
        .join("");
      assert.match(summary, /greeting/);
      const after = kind(updates, "usage_update").at(-1);
      assert.ok(after?.sessionUpdate === "usage_update" && before.sessionUpdate === "usage_update");
      assert.ok(after.used < before.used, `the meter fell: ${before.used} -> ${after.used}`);
    });
  } finally {
    child.kill();
    await fake.stop();
  }
});
