import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

// out/test/unit/ -> the package root
const ROOT = join(__dirname, "..", "..", "..");

type Context = Record<string, unknown>;

/** The chat panel's message menu: each item's `when` clause, by command. */
function messageMenu(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    contributes: { menus: { "webview/context": { command: string; when: string }[] } };
  };
  return new Map(pkg.contributes.menus["webview/context"].map((item) => [item.command, item.when]));
}

/** A `when` clause of the forms the manifest uses: `||` of `&&` of `key`, `!key`, `key == 'value'`. */
function holds(when: string, context: Context): boolean {
  return when.split("||").some((all) =>
    all.split("&&").every((part) => {
      const term = part.trim();
      const equals = /^([\w.]+) == '([^']*)'$/.exec(term);
      if (equals) return context[equals[1]!] === equals[2];
      const key = /^(!?)([\w.]+)$/.exec(term);
      assert.ok(key, `a term the test reads: ${term}`);
      return Boolean(context[key[2]!]) !== (key[1] === "!");
    }),
  );
}

const ON_MESSAGE = { webviewId: "baton.chat", webviewSection: "message", messageId: "m2", sessionId: "s_shown" };

test("Compact Selected is in a message's menu when that menu's context names a selection, whatever the host last heard", () => {
  const when = messageMenu().get("baton.chat.compactSelected");
  assert.ok(when);
  const selected = { ...ON_MESSAGE, selectedFirst: "m1", selectedLast: "m3" };
  assert.ok(holds(when, selected), "two or more selected");
  // the host forgets its selection as it opens another session, before the webview posts the new one
  assert.ok(holds(when, { ...selected, "baton.chat.multipleSelected": false }), "not taken from a key the host sets");
  assert.equal(holds(when, ON_MESSAGE), false, "one message (or none) selected");
  assert.equal(holds(when, { ...ON_MESSAGE, "baton.chat.multipleSelected": true }), false, "not offered on a stale key");
  assert.equal(holds(when, { ...selected, webviewSection: "replacedMessage" }), false, "not on a replaced message");
});

test("the other items of a message's menu still show where they did", () => {
  const menu = messageMenu();
  const pinned = { ...ON_MESSAGE, pinned: true };
  assert.ok(holds(menu.get("baton.chat.compactUpToHere")!, ON_MESSAGE));
  assert.ok(holds(menu.get("baton.chat.pinMessage")!, ON_MESSAGE));
  assert.equal(holds(menu.get("baton.chat.pinMessage")!, pinned), false);
  assert.ok(holds(menu.get("baton.chat.unpinMessage")!, pinned));
  assert.ok(holds(menu.get("baton.chat.copyMessage")!, { webviewId: "baton.chat", webviewSection: "replacedMessage" }));
});
