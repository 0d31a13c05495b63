import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

// out/test/unit/ -> the package root
const ROOT = join(__dirname, "..", "..", "..");

interface Step {
  id: string;
  description: string;
  media: { markdown?: string };
  completionEvents?: string[];
}

test("the walkthrough opens the chat, sets a key, imports a session and compacts, with commands that exist", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    contributes: { commands: { command: string }[]; walkthroughs: { id: string; steps: Step[] }[] };
  };
  const commands = new Set(pkg.contributes.commands.map((c) => c.command));
  const [walk] = pkg.contributes.walkthroughs;
  assert.ok(walk);
  assert.deepEqual(walk.steps.map((s) => s.id), ["open", "key", "import", "compact"]);
  for (const step of walk.steps) {
    const linked = [...step.description.matchAll(/\(command:([\w.]+)\)/g)].map((m) => m[1]!);
    assert.ok(linked.length > 0, `${step.id} links a command`);
    for (const name of linked) assert.ok(commands.has(name), `${step.id}: ${name} is a contributed command`);
    for (const event of step.completionEvents ?? []) {
      const command = /^onCommand:(.+)$/.exec(event)?.[1];
      if (command) assert.ok(commands.has(command), `${step.id}: ${command} is a contributed command`);
    }
    assert.ok(step.media.markdown && existsSync(join(ROOT, step.media.markdown)), `${step.id}'s page exists`);
  }
});
