// Scratch directories for the compiled tests: made under the system's temp dir and removed
// when the test file's process exits, so a run leaves nothing behind in /tmp.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

process.once("exit", () => {
  for (const dir of made) {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh directory named `prefix` + a random tail, removed at the process's exit. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
