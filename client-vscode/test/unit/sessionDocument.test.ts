import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
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
